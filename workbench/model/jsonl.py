"""The JSON Lines formats (events.jsonl, calls.jsonl): how one record is encoded, hashed, split and read.

One encoding for every writer, so a line's hash is the same wherever it is computed; and one way to split a
file's bytes into lines, so every reader treats a torn last line (no newline: a crash mid-append, never
acknowledged) and a damaged line alike: `split_lines` sets the torn tail apart, `loads_record` reads a
line as an object or None, `read_line` refuses a damaged one naming the file and the line, and `records`
reads many lines at once and reports the damaged ones."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from workbench.errors import Refused

FIELDS = ("schema_version", "seq", "id", "ts", "type", "actor", "via", "tty", "proof", "session", "payload", "prev",
          "more")

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


# -- reading ----------------------------------------------------------------------------------------------
def split_lines(raw: bytes) -> tuple[list[bytes], bytes]:
    """(the complete lines, the torn tail): the bytes after the last newline were never acknowledged."""
    cut = raw.rfind(b"\n") + 1
    return raw[:cut].split(b"\n")[:-1], raw[cut:]


def loads_record(line: bytes) -> dict[str, Any] | None:
    """One line as a JSON object; None when it is damaged (not JSON, nested too deeply, not an object)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def read_line(line: bytes, file: str, where: str) -> dict[str, Any]:
    """One line as a JSON object, or Refused naming the file and the line (`where`: "line 3")."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        raise Refused(f"{file}: {where}: damaged line (not JSON); run `wb doctor`") from None
    if not isinstance(record, dict):
        raise Refused(f"{file}: {where}: damaged line (not a JSON object); run `wb doctor`")
    check_unicode(line, record, f"{file}: {where}")
    return record


def records(lines: list[bytes], first: int = 1) -> tuple[list[dict[str, Any]], list[tuple[int, bytes]]]:
    """(the objects, the damaged lines as (number, bytes)) of complete lines numbered from `first`; blank
    lines are skipped. One parse of them all first: several times faster than one per line."""
    numbered = [(n, line) for n, line in enumerate(lines, start=first) if line.strip()]
    if not numbered:
        return [], []
    try:
        batch = json.loads(b"[" + b",".join(line for _n, line in numbered) + b"]")
    except (ValueError, RecursionError):
        batch = None
    if isinstance(batch, list) and len(batch) == len(numbered) and all(isinstance(r, dict) for r in batch):
        return batch, []
    out: list[dict[str, Any]] = []
    damaged: list[tuple[int, bytes]] = []
    for number, line in numbered:
        record = loads_record(line)
        if record is None:
            damaged.append((number, line))
        else:
            out.append(record)
    return out, damaged
