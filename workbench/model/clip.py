"""Size caps on what one recorded event holds: a string past CLIP_TEXT characters, and a payload past
CLIP_PAYLOAD bytes, are replaced by their head, their size and their sha256 (the log is committed on every
write and read by every load: one pasted megabyte must not ride along for ever)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

CLIP_TEXT = 2048  # characters of one string kept in an event; the rest is summarized by its size and sha256
CLIP_PAYLOAD = 16384  # bytes of a whole payload; past it, each large top-level value is clipped as JSON text


def clip(value: Any, limit: int = CLIP_TEXT) -> Any:
    """`value` with every string longer than `limit` characters replaced by its head, size and sha256."""
    if isinstance(value, str):
        return _clip_text(value, limit)
    if isinstance(value, dict):
        return {str(k): clip(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clip(v, limit) for v in value]
    return value


def clip_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Strings clipped; then, while the payload is still over CLIP_PAYLOAD bytes, its largest top-level
    values are replaced by the head of their JSON text (a long list of short strings, a wide object)."""
    out = clip(payload)
    sizes = {k: len(_json(v)) for k, v in out.items()}
    total = sum(sizes.values())
    for key in sorted(sizes, key=sizes.__getitem__, reverse=True):
        if total <= CLIP_PAYLOAD or sizes[key] <= CLIP_TEXT:
            break
        out[key] = _clip_text(_json(out[key]), CLIP_TEXT, as_json=True)
        total += len(_json(out[key])) - sizes[key]
    return out


def _clip_text(text: str, limit: int, *, as_json: bool = False) -> Any:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from JSON input: keep what can be written
        text = text.encode("utf-8", "replace").decode("utf-8")
        data = text.encode("utf-8")
    if len(text) <= limit and not as_json:
        return text
    return {"truncated": True, "json" if as_json else "text": text[:limit], "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest()}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
