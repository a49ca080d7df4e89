"""The JSON Lines formats (events.jsonl, calls.jsonl): how one record is encoded, hashed, split and read.

One encoding for every writer, so a line's hash is the same wherever it is computed; and one way to split a
file's bytes into lines, so every reader treats a torn last line (no newline: a crash mid-append, never
acknowledged) and a damaged line alike: `split_lines` sets the torn tail apart, `loads_record` reads a
line as an object or None, `read_line` refuses a damaged one naming the file and the line, and `records`
reads many lines at once and reports the damaged ones."""

from __future__ import annotations

import json
import re

from workbench.errors import Refused

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

FIELDS = ("schema_version", "seq", "id", "ts", "type", "actor", "via", "tty", "proof", "trust", "session", "payload",
          "prev", "more")
MAX_LINE_BYTES = 4 * 1024 * 1024  # one event or call record; wb clips its payloads far below (model/clip.py)
MAX_RECORD_BYTES = 1024 * 1024  # one event wb writes: a quarter of what it reads, so no input can make a line the
#                                 reader refuses (issue 30); the schemas cap each free-text field far under it


class DuplicateKey(ValueError):
    """A JSON object names a key twice: which value counts would be the reader's guess (the last, for Python;
    the first, for some other tool), so wb refuses it."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key[:80]!r}")
        self.msg = f"duplicate key {key[:80]!r}"
        self.key = key


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object_pairs_hook: the object, or DuplicateKey when a key repeats."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


def loads_unique(data: bytes | str) -> Any:
    """json.loads refusing an object that repeats a key (DuplicateKey, a ValueError)."""
    return json.loads(data, object_pairs_hook=unique_pairs)


def copied(value: Any) -> Any:
    """A deep copy of JSON data (objects, arrays, scalars): what `copy.deepcopy` makes of it, without importing
    `copy` and `weakref` (a reader's load copies state.md's frontmatter as wb's cache holds it: issue 33)."""
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copied(v) for v in value]
    return value


def too_long(line: bytes, file: str, where: str) -> Refused:
    return Refused(f"{file}: {where}: a line of {len(line)} bytes, over the cap of {MAX_LINE_BYTES}: not wb's; "
                   "run `wb doctor`")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps builds one per call


def encode(event: dict[str, Any]) -> bytes:
    ordered = {k: event[k] for k in FIELDS if k in event}
    return _ENCODER.encode(ordered).encode("utf-8")


_DIGEST: Any = None  # workbench.model.digest once a line is hashed: bound once, not imported per line


def line_hash(line: bytes) -> str:
    global _DIGEST
    if _DIGEST is None:  # a read that checks no chain (wb task list, wb status) hashes nothing
        from workbench.model import digest

        _DIGEST = digest
    return _DIGEST.sha256(line).hexdigest()


# The start of a line as `encode` writes it, up to the event's type: its stamp (seq, ts) and type, read without
# parsing the line. Every value in it is a plain token (an integer; printable ASCII strings without a quote or an
# escape), so for a line that is one JSON object without a repeated key these are exactly the values a parse
# gives; any other spelling (a hand-written line, an escape) does not match, and is parsed.
_STAMP = (rb'\{"schema_version":1,"seq":([1-9][0-9]{0,17}),"id":"[0-9A-Z]{26}",'
          rb'"ts":"([\x20\x21\x23-\x5b\x5d-\x7e]{0,80})","type":"([a-z_.]{1,80})",')

if TYPE_CHECKING:
    def stamp(string: bytes, pos: int = 0, endpos: int = ...) -> re.Match[bytes] | None:
        """(seq, ts, type) of a line in wb's own encoding as groups 1–3; None for any other spelling."""

    def stamps(string: bytes) -> list[tuple[bytes, bytes, bytes]]:
        """(seq, ts, type) of each line of `string` (each line ending in a newline) that `stamp` reads, in order:
        as many as there are lines exactly when every line is in wb's own encoding (a match takes its whole line,
        so each line matches at most once, at its start)."""


def __getattr__(name: str) -> Any:
    # `stamp` is compiled when first imported (a fold by stamps, store/eventlog.py): its pattern was a quarter of
    # a millisecond of every command's start, most of which read no stamp (issue 33)
    if name == "stamp":
        match = re.compile(_STAMP).match
        globals()["stamp"] = match
        return match
    if name == "stamps":
        findall = re.compile(_STAMP + rb"[^\n]*\n").findall  # line after line: no search between them
        globals()["stamps"] = findall
        return findall
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_ESCAPED_SURROGATE = rb"\\u[dD][89a-fA-F]"  # compiled by re on first use: most bytes hold no `\u` at all


def escaped_surrogate(raw: bytes) -> bool:
    """Whether `raw` holds an escape of a surrogate (`\\udXXX`): json.loads may read it as a lone one."""
    return b"\\u" in raw and re.search(_ESCAPED_SURROGATE, raw) is not None


def check_unicode(raw: bytes, data: Any, where: str) -> None:
    """json.loads turns a lone `\\udXXX` escape into a lone surrogate, which no UTF-8 file can hold and no
    terminal can print: refuse it on read. A scan of the bytes first, so the usual document costs nothing;
    escaped surrogate pairs (an emoji) are valid and pass."""
    if escaped_surrogate(raw):
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
    if len(line) > MAX_LINE_BYTES:
        return None
    try:
        record = loads_unique(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def read_line(line: bytes, file: str, where: str) -> dict[str, Any]:
    """One line as a JSON object, or Refused naming the file and the line (`where`: "line 3")."""
    if len(line) > MAX_LINE_BYTES:
        raise too_long(line, file, where)
    try:
        record = loads_unique(line)
    except DuplicateKey as err:
        raise Refused(f"{file}: {where}: damaged line ({err.msg}); run `wb doctor`") from None
    except (ValueError, RecursionError):
        raise Refused(f"{file}: {where}: damaged line (not JSON); run `wb doctor`") from None
    if not isinstance(record, dict):
        raise Refused(f"{file}: {where}: damaged line (not a JSON object); run `wb doctor`")
    check_unicode(line, record, f"{file}: {where}")
    return record


def records(lines: list[bytes], first: int = 1) -> tuple[list[dict[str, Any]], list[tuple[int, bytes]]]:
    """(the objects, the damaged lines as (number, bytes)) of complete lines numbered from `first`; blank
    lines are skipped; a line over MAX_LINE_BYTES or with a repeated key is damaged. One parse of them all
    first: several times faster than one per line."""
    numbered = [(n, line) for n, line in enumerate(lines, start=first) if line.strip()]
    if not numbered:
        return [], []
    try:
        batch = loads_unique(b"[" + b",".join(line for _n, line in numbered) + b"]")
    except (ValueError, RecursionError):
        batch = None
    if (isinstance(batch, list) and len(batch) == len(numbered) and all(isinstance(r, dict) for r in batch)
            and all(len(line) <= MAX_LINE_BYTES for _n, line in numbered)):
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
