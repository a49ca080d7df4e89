"""Size caps on what one recorded event holds: a string past CLIP_TEXT characters, a payload past CLIP_PAYLOAD
bytes, and whatever nests deeper than CLIP_DEPTH levels are replaced by their head, their size and their sha256
(the log is committed on every write and read by every load: one pasted megabyte must not ride along for ever,
and a payload nested 500 levels deep must neither exhaust Python's stack nor make the log unreadable)."""

from __future__ import annotations

import json

from workbench.model import digest

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any
CLIP_TEXT = 2048  # characters of one string kept in an event; the rest is summarized by its size and sha256
CLIP_PAYLOAD = 16384  # bytes of a whole payload; past it, each large top-level value is clipped as JSON text
CLIP_DEPTH = 32  # levels of objects and arrays kept; a deeper one is clipped as JSON text, like a large one


def clip(value: Any, limit: int = CLIP_TEXT, depth: int = 0) -> Any:
    """`value` with every string longer than `limit` characters, and every object or array nested deeper than
    CLIP_DEPTH levels, replaced by its head, size and sha256."""
    if isinstance(value, str):
        return _clip_text(value, limit)
    if isinstance(value, dict | list | tuple) and value and depth >= CLIP_DEPTH:
        return _clip_text(json_text(value), limit, as_json=True)
    if isinstance(value, dict):
        return {str(k): clip(v, limit, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clip(v, limit, depth + 1) for v in value]
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
            "sha256": digest.sha256(data).hexdigest()}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class _Token(str):
    """JSON punctuation already written, on json_text's stack."""


def json_text(value: Any) -> str:
    """`value` as compact JSON text at any depth: json.dumps, or, nested too deep for Python's stack, the
    same text built without recursion."""
    try:
        return _json(value)
    except RecursionError:
        pass
    parts: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            parts.append(item)
        elif isinstance(item, dict) and item:
            pieces: list[Any] = []
            for i, (k, v) in enumerate(item.items()):
                pieces += [_Token(("{" if i == 0 else ",") + _json(str(k)) + ":"), v]
            stack += [_Token("}"), *reversed(pieces)]
        elif isinstance(item, list | tuple) and item:
            pieces = []
            for i, v in enumerate(item):
                pieces += [_Token("[" if i == 0 else ","), v]
            stack += [_Token("]"), *reversed(pieces)]
        else:
            parts.append(_json(item))
    return "".join(parts)


_JSON_TOKEN = None  # compiled on first use: the hook path imports this module only for a large payload


def loads_any_depth(text: str) -> Any:
    """`json.loads(text)` for text nested deeper than Python's parser can go (a hostile hook payload): what
    lies deeper than CLIP_DEPTH levels arrives clipped as clip() would clip it, its head, size and sha256.
    ValueError for what is not JSON, as json.loads."""
    try:
        return json.loads(text)
    except RecursionError:
        pass
    import re

    global _JSON_TOKEN
    if _JSON_TOKEN is None:
        _JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
    out: list[str] = []
    depth = 0
    start = done = 0  # where the deep value began; how far `text` is copied to `out`
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth == CLIP_DEPTH + 1:
                start = match.start()
        elif token in "]}":
            depth -= 1
            if depth == CLIP_DEPTH:
                out += [text[done:start], _json(_clip_text(text[start:match.end()], CLIP_TEXT, as_json=True))]
                done = match.end()
    out.append(text[done:])
    try:
        return json.loads("".join(out))
    except RecursionError:  # brackets that never close: not JSON
        raise ValueError("nested too deeply, and its brackets do not close") from None
