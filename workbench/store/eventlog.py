"""events.jsonl: the append-only write-ahead log and audit trail.

One JSON object per line, `seq` 1, 2, 3… without gaps, `prev` = sha256 of the previous line, so an edit or
deletion inside the log is detectable. Events written by one transaction go in one write; the first ones
carry `more` (how many follow), so a batch cut short by a crash is recognised and ignored like a torn line.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.errors import Refused
from workbench.model.jsonl import MAX_LINE_BYTES, encode, line_hash, read_line, split_lines

_BLOCK = 1 << 16


class Tail:
    """Where the log ends. A plain class: a dataclass would import inspect, a NamedTuple compile its
    annotations, and every reader makes one."""

    __slots__ = ("seq", "hash", "good_size", "torn")

    def __init__(self, seq: int, hash: str | None, good_size: int, torn: int) -> None:
        self.seq = seq  # seq of the last complete event (0 when the log is empty)
        self.hash = hash  # hash of its line, the `prev` of the next event
        self.good_size = good_size  # bytes up to the end of the last complete batch
        self.torn = torn  # bytes after good_size: a torn line or an incomplete batch

    def __repr__(self) -> str:
        return f"Tail(seq={self.seq!r}, hash={self.hash!r}, good_size={self.good_size!r}, torn={self.torn!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tail):
            return NotImplemented
        return (self.seq, self.hash, self.good_size, self.torn) == (other.seq, other.hash, other.good_size, other.torn)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was


class LogMoved(Exception):
    """events.jsonl is not the file a transaction loaded: something replaced it between the load and the append."""


def _too_long(at: int) -> Refused:
    return Refused(f"events.jsonl: the line at byte {at} is longer than the cap of {MAX_LINE_BYTES} bytes: not "
                   "wb's; run `wb doctor`")


class EventLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    # -- reading ------------------------------------------------------------------------------
    def _lines_backwards(self) -> Iterator[tuple[int, bytes]]:
        """(offset, line) of each complete line from the end, newest first; a torn fragment is skipped. Linear
        in the bytes read (a line's blocks are joined once, not re-copied per block), and a line longer than
        MAX_LINE_BYTES is refused as soon as that many bytes of it are read."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            pos = fh.seek(0, os.SEEK_END)
            parts: list[bytes] = []  # the blocks of the line being read, rightmost first
            size = 0
            seen_newline = False  # before the last newline: the torn tail, dropped
            while pos > 0:
                step = min(_BLOCK, pos)
                pos -= step
                fh.seek(pos)
                block = fh.read(step)
                hi = len(block)
                nl = block.rfind(b"\n", 0, hi)
                while nl != -1:
                    if seen_newline:
                        piece = block[nl + 1:hi]
                        if size + len(piece) > MAX_LINE_BYTES:
                            raise _too_long(pos + nl + 1)
                        yield pos + nl + 1, piece + b"".join(reversed(parts)) if parts else piece
                    seen_newline = True
                    parts, size = [], 0
                    hi = nl
                    nl = block.rfind(b"\n", 0, hi)
                if seen_newline:
                    parts.append(block[:hi])
                    size += hi
                    if size > MAX_LINE_BYTES:
                        raise _too_long(pos)
            if seen_newline:
                yield 0, b"".join(reversed(parts))

    def _parse(self, line: bytes, where: str) -> dict[str, Any]:
        event = read_line(line, "events.jsonl", where)
        if not isinstance(event.get("seq"), int):
            raise Refused(f"events.jsonl: {where}: damaged line (no seq); run `wb doctor`")
        return event

    def tail(self) -> Tail:
        return self._scan_tail(stop_at=None)[0]

    def read_after(self, seq: int) -> list[dict[str, Any]]:
        """The complete events with seq > `seq`, oldest first, checked for gaps and chain breaks."""
        return self._scan_tail(stop_at=seq)[1]

    def scan_after(self, seq: int) -> tuple[Tail, list[dict[str, Any]]]:
        """The tail and the events after `seq`, in one read from the end."""
        return self._scan_tail(stop_at=seq)

    def _scan_tail(self, stop_at: int | None) -> tuple[Tail, list[dict[str, Any]]]:
        """Read from the end: the last complete batch ends at the newest line without `more`.

        Everything after it (a torn line, or the first lines of a batch cut short) is the torn tail.
        With `stop_at`, keep reading back to the event with seq <= stop_at and return those after it.
        """
        size = self.path.stat().st_size if self.path.exists() else 0
        good_end: int | None = None
        last: tuple[bytes, dict[str, Any]] | None = None
        base: tuple[bytes, dict[str, Any]] | None = None
        newer: list[tuple[bytes, dict[str, Any]]] = []  # newest first
        for off, line in self._lines_backwards():
            event = self._parse(line, f"line at byte {off}")
            if good_end is None:
                if event.get("more"):
                    continue  # part of a batch cut short
                good_end = off + len(line) + 1
                last = (line, event)
            if stop_at is None or event["seq"] <= stop_at:
                base = (line, event)
                break
            newer.append((line, event))
        if good_end is None or last is None:
            return Tail(0, None, 0, size), []
        tail = Tail(last[1]["seq"], line_hash(last[0]), good_end, size - good_end)
        if stop_at is None:
            return tail, []
        expected = (base[1]["seq"] if base else 0) + 1
        prev = line_hash(base[0]) if base else None
        out = []
        for line, event in reversed(newer):
            if event["seq"] != expected:
                raise Refused(
                    f"events.jsonl: seq {event['seq']} follows seq {expected - 1}: a gap in the log; run `wb doctor`"
                )
            if event.get("prev") != prev:
                raise Refused(f"events.jsonl: seq {event['seq']}: hash chain broken; run `wb doctor`")
            out.append(event)
            expected += 1
            prev = line_hash(line)
        return tail, out

    def iter_all(self) -> Iterator[tuple[bytes, dict[str, Any]]]:
        """Every complete event from the start, verifying seq and the hash chain; stops before a torn tail."""
        tail = self.tail()
        if tail.good_size == 0:
            return
        prev: str | None = None
        expected = 1
        with open(self.path, "rb") as fh:
            data = fh.read(tail.good_size)
        for number, line in enumerate(split_lines(data)[0], start=1):
            event = self._parse(line, f"line {number}")
            if event["seq"] != expected:
                raise Refused(f"events.jsonl: line {number}: seq {event['seq']} where {expected} was expected")
            if event.get("prev") != prev:
                raise Refused(f"events.jsonl: line {number}: hash chain broken at seq {event['seq']}")
            prev = line_hash(line)
            expected += 1
            yield line, event

    def lines_backwards(self) -> Iterator[bytes]:
        """The line of each complete event, newest first, unparsed and unchecked (a torn tail and a batch cut
        short are left out): for a reader that wants the newest few, or only looks at the bytes of the rest."""
        complete = False
        for off, line in self._lines_backwards():
            if not complete:
                if self._parse(line, f"line at byte {off}").get("more"):
                    continue  # part of a batch cut short
                complete = True
            yield line

    def complete_bytes(self) -> bytes:
        """The bytes of every complete event, oldest first, each line ending in a newline (a torn tail and a
        batch cut short left out); unchecked: for a reader that only counts in them (`wb log`)."""
        good = self.tail().good_size
        if not good:
            return b""
        with open(self.path, "rb") as fh:
            return fh.read(good)

    def iter_backwards(self) -> Iterator[tuple[bytes, dict[str, Any]]]:
        """Every complete event, newest first, checked as it goes: each seq one less than the one read before
        it, each line the hash its successor names as `prev`. Stop whenever you have what you need."""
        newer: dict[str, Any] | None = None
        for number, line in enumerate(self.lines_backwards(), start=1):
            event = self._parse(line, f"line {number} from the end")
            if newer is not None:
                if event["seq"] != newer["seq"] - 1:
                    raise Refused(f"events.jsonl: seq {newer['seq']} follows seq {event['seq']}: a gap in the log; "
                                  "run `wb doctor`")
                if newer.get("prev") != line_hash(line):
                    raise Refused(f"events.jsonl: seq {newer['seq']}: hash chain broken; run `wb doctor`")
            yield line, event
            newer = event
        if newer is not None and (newer["seq"] != 1 or newer.get("prev") is not None):
            raise Refused(f"events.jsonl: the log begins at seq {newer['seq']}, not 1; run `wb doctor`")

    # -- writing ------------------------------------------------------------------------------
    def append(self, events: list[dict[str, Any]], tail: Tail) -> None:
        """Append a batch in one write and fsync it. Drops a torn tail first (it was never acknowledged)."""
        blob = b"".join(encode(e) + b"\n" for e in events)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            if os.fstat(fd).st_size != tail.good_size + tail.torn:
                # not the file the transaction loaded: the user's git (a checkout, a stash) replaced it since.
                # Writing at the old offset would leave a hole of NUL bytes; the caller keeps the batch pending.
                raise LogMoved(f"{self.path.name} changed under wb (a git command of yours?)")
            if tail.torn:
                os.ftruncate(fd, tail.good_size)
            os.lseek(fd, tail.good_size, os.SEEK_SET)
            try:
                if os.write(fd, blob) != len(blob):  # a disk that fills up mid-write writes short, silently
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
                os.fsync(fd)
            except OSError:
                os.ftruncate(fd, tail.good_size)  # a batch not wholly durable was never acknowledged: take it back
                raise
        finally:
            os.close(fd)

    def truncate_torn(self) -> int:
        tail = self.tail()
        if tail.torn:
            with open(self.path, "r+b") as fh:
                fh.truncate(tail.good_size)
                fh.flush()
                os.fsync(fh.fileno())
        return tail.torn


def chain(events: list[dict[str, Any]], tail: Tail, *, batch: bool = True) -> list[dict[str, Any]]:
    """Number a batch after `tail` and link its hash chain (mutates and returns the events). `batch=False`:
    each event is whole on its own (no `more`), as after a rebase's pick."""
    prev = tail.hash
    seq = tail.seq
    for i, event in enumerate(events):
        seq += 1
        event["seq"] = seq
        event["prev"] = prev
        remaining = len(events) - 1 - i if batch else 0
        if remaining:
            event["more"] = remaining
        else:
            event.pop("more", None)
        prev = line_hash(encode(event))
    return events
