"""Secrets kept out of the record: the values of the environment variables config.yaml `redact` names never
reach events, state.md, board.json, calls.jsonl, artifacts, a commit message, a hook's or the MCP server's
answer, an error message or `wb diff`.

This is the one redaction function; every path that records or shows a value calls `redact` (or
`redact_text`). Replacing secrets one after another in config order is wrong when one value holds another
(DB_USER=app inside DATABASE_URL=postgres://app:pw@db: replacing `app` first leaves `pw` behind), so every
occurrence of every secret is found in the original text first, overlapping occurrences are merged, and each
merged stretch becomes one `[redacted]`; a longer secret therefore always goes whole.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: redaction is on every agent hook's path, which imports no typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

REDACTED = "[redacted]"

# Every secret value this process has been told of (by `secret_values`): what an error line, a hook's
# complaint or an MCP answer is scrubbed of, where no workbench is at hand.
_known: set[str] = set()


def secret_values(config: dict[str, Any]) -> list[str]:
    """The values of the environment variables that config.yaml `redact` names, longest first."""
    names = config.get("redact") or []
    if not isinstance(names, list):
        return []
    values = sorted({os.environ[n] for n in names if isinstance(n, str) and os.environ.get(n)},
                    key=lambda s: (-len(s), s))
    _known.update(values)
    return values


def known_secrets() -> list[str]:
    """Every secret value `secret_values` has returned in this process, longest first."""
    return sorted(_known, key=lambda s: (-len(s), s))


def redact_text(text: str, secrets: Sequence[str]) -> str:
    """`text` with every stretch covered by an occurrence of a secret replaced by [redacted]. Occurrences that
    overlap (a secret inside another, two that share characters) become one [redacted]; adjacent ones stay two."""
    found = [s for s in secrets if s and s in text]
    if not found:
        return text
    spans: list[tuple[int, int]] = []
    for secret in found:
        at = text.find(secret)
        while at != -1:
            spans.append((at, at + len(secret)))
            at = text.find(secret, at + 1)
    spans.sort()
    out: list[str] = []
    pos = 0
    start, end = spans[0]
    for a, b in spans[1:]:
        if a < end:  # overlaps the stretch: extend it
            end = max(end, b)
            continue
        out += [text[pos:start], REDACTED]
        pos, (start, end) = end, (a, b)
    out += [text[pos:start], REDACTED, text[end:]]
    return "".join(out)


def redact(value: Any, secrets: Sequence[str]) -> Any:
    """`value` with every secret in its strings (dict keys too, lists and tuples at any depth) redacted;
    the same object when there are no secrets."""
    if not secrets:
        return value
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):  # loops, not comprehensions: one frame per level of a deep payload
        out = {}
        for k, v in value.items():
            out[redact(k, secrets)] = redact(v, secrets)
        return out
    if isinstance(value, list | tuple):
        items = []
        for v in value:
            items.append(redact(v, secrets))
        return items
    return value


def redact_known(value: Any, more: Iterable[str] = ()) -> Any:
    """`value` redacted of every secret known to this process (and `more`)."""
    secrets = sorted(set(known_secrets()) | set(more), key=lambda s: (-len(s), s))
    return redact(value, secrets)
