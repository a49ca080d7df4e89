"""A line in events.jsonl longer than the reader's cap (model/jsonl.MAX_LINE_BYTES) is not wb's: wb writes no
event over MAX_RECORD_BYTES, so one arrives only through git (a merge, a pull, a hand edit committed). The
readers refuse it, and with it every command — so `wb doctor --fix` is the one command that helps (issue 30):
it moves each such line aside, byte for byte, into `.workbench/artifacts/set-aside/` (committed with the repair,
so the bytes stay in the history next to the log they left), and chains the events after it again, as the
landing rule chains events it appends (store/landing.rechain). Nothing is dropped: the set-aside file holds
the line, and the commit message names it.

Finding the lines reads the file in blocks, never a whole line: a line of gigabytes costs a block of memory.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.model.jsonl import MAX_LINE_BYTES, encode, line_hash
from workbench.store.atomic import atomic_write

if TYPE_CHECKING:
    from workbench.store.workbench import Workbench

BLOCK = 1 << 20
ASIDE_DIR = "artifacts/set-aside"


def overlong_lines(path: Path) -> list[tuple[int, int]]:
    """(byte offset, length) of each line of `path` longer than MAX_LINE_BYTES (a last line without its newline
    included), read in blocks."""
    found: list[tuple[int, int]] = []
    try:
        f = path.open("rb")
    except FileNotFoundError:
        return found
    with f:
        start = pos = 0
        while True:
            block = f.read(BLOCK)
            if not block:
                break
            at = 0
            while True:
                nl = block.find(b"\n", at)
                if nl < 0:
                    break
                end = pos + nl
                if end - start > MAX_LINE_BYTES:
                    found.append((start, end - start))
                start = end + 1
                at = nl + 1
            pos += len(block)
        if pos - start > MAX_LINE_BYTES:
            found.append((start, pos - start))
    return found


def set_aside(wb: Workbench) -> list[str]:
    """Move every over-long line of events.jsonl aside (under the workbench lock, the caller holds it) and chain
    what follows again. Returns the paths (under .workbench/) the lines went to."""
    path = wb.paths.events
    spans = overlong_lines(path)
    if not spans:
        return []
    kept: list[bytes] = []
    moved: list[str] = []
    with path.open("rb") as f:
        pos = 0
        for start, length in spans:
            kept.extend(_lines(f.read(start - pos)))
            digest = hashlib.sha256()
            aside = wb.paths.wb / ASIDE_DIR
            aside.mkdir(parents=True, exist_ok=True)
            tmp = aside / f".tmp-{start}"
            with tmp.open("wb") as out:
                left = length
                while left:
                    chunk = f.read(min(BLOCK, left))
                    if not chunk:
                        break
                    digest.update(chunk)
                    out.write(chunk)
                    left -= len(chunk)
                out.write(b"\n")
            f.read(1)  # its newline
            name = f"{ASIDE_DIR}/line-at-byte-{start}-{digest.hexdigest()[:12]}.jsonl"
            tmp.replace(wb.paths.wb / name)
            moved.append(name)
            pos = start + length + 1
        kept.extend(_lines(f.read()))
    sealed = wb.log.resolution().chain
    atomic_write(path, _rechain(kept, sealed[-1].last if sealed else 0, sealed[-1].last_hash if sealed else None))
    for stale in (wb.paths.wb / ASIDE_DIR).glob(".tmp-*"):
        stale.unlink(missing_ok=True)
    return moved


def _lines(raw: bytes) -> list[bytes]:
    return [line for line in raw.split(b"\n") if line]


def _rechain(lines: list[bytes], seq: int, prev: str | None) -> bytes:
    """The lines again, each event numbered and chained after the one before it (the first after `seq`, `prev`:
    the sealed log's last event); a line that is not an event (damaged) is kept as it is, for `wb doctor` to
    report."""
    out: list[bytes] = []
    for line in lines:
        try:
            event: Any = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if not isinstance(event, dict) or not isinstance(event.get("seq"), int):
            out.append(line)
            continue
        seq += 1
        if event.get("seq") != seq or event.get("prev") != prev:
            event["seq"], event["prev"] = seq, prev
            event.pop("more", None)
            line = encode(event)
        prev = line_hash(line)
        out.append(line)
    return b"".join(line + b"\n" for line in out)
