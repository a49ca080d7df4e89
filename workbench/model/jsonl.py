"""The JSON Lines formats (events.jsonl, calls.jsonl): how one record is encoded, hashed and checked.

One encoding for every writer, so a line's hash is the same wherever it is computed."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from workbench.errors import Refused

FIELDS = ("schema_version", "seq", "id", "ts", "type", "actor", "session", "payload", "prev", "more")

def encode(event: dict[str, Any]) -> bytes:
    ordered = {k: event[k] for k in FIELDS if k in event}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def check_unicode(raw: bytes, data: Any, where: str) -> None:
    """json.loads turns a lone `\\udXXX` escape into a lone surrogate, which no UTF-8 file can hold and no
    terminal can print: refuse it on read. A scan of the bytes first, so the usual document costs nothing;
    escaped surrogate pairs (an emoji) are valid and pass."""
    if _ESCAPED_SURROGATE.search(raw):
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise Refused(f"{where}: a \\u escape that encodes no character (a lone surrogate); "
                          "fix the file or restore it with git") from None
