"""events.jsonl: the append-only write-ahead log and audit trail — its tail segment; older events are sealed
in `.workbench/log/` (workbench/model/segments.py, sealed by workbench/store/sealing.py) and read from there.

One JSON object per line, `seq` 1, 2, 3… without gaps, `prev` = sha256 of the previous line, so an edit or
deletion inside the log is detectable. Events written by one transaction go in one write; the first ones
carry `more` (how many follow), so a batch cut short by a crash is recognised and ignored like a torn line.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from workbench import faults
from workbench.errors import Refused
from workbench.model.foldread import fold_read
from workbench.model.jsonl import MAX_LINE_BYTES, MAX_RECORD_BYTES, encode, line_hash, read_line, split_lines
from workbench.model.segments import (
    LOG_DIR,
    Header,
    Resolved,
    check_body,
    header_of,
    is_segment_name,
    parse_header,
    resolve,
    sealed_lines,
)

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

_BLOCK = 1 << 16


class Tail:
    """Where the log ends. A plain class: a dataclass would import inspect, a NamedTuple compile its
    annotations, and every reader makes one."""

    __slots__ = ("seq", "_hash", "_line", "good_size", "torn")

    def __init__(self, seq: int, hash: str | None, good_size: int, torn: int, *, line: bytes | None = None) -> None:
        self.seq = seq  # seq of the last complete event (0 when the log is empty)
        self._hash = hash
        self._line = line  # or that line, hashed when `hash` is first read: a read that appends nothing never is
        self.good_size = good_size  # bytes up to the end of the last complete batch
        self.torn = torn  # bytes after good_size: a torn line or an incomplete batch

    @property
    def hash(self) -> str | None:
        """The hash of its line, the `prev` of the next event."""
        if self._hash is None and self._line is not None:
            self._hash, self._line = line_hash(self._line), None
        return self._hash

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
        self.log_dir = path.parent / LOG_DIR
        self._headers: dict[str, tuple[tuple[int, int, int], Header]] = {}
        self._names: tuple[list[str], list[str]] = ([], [])  # log/'s listing as last read, and its segments sorted
        # called before wb itself writes or removes sealed segments ({name under log/: its bytes, or None}), so
        # the commit gate tells the change from a person's (store/sealedfiles.py); set by the Workbench
        self.before_sealed_change: Callable[[dict[str, bytes | None]], None] | None = None

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
        """The complete events with seq > `seq`, oldest first, checked for gaps and chain breaks. Events after
        the last sealed segment are read from events.jsonl alone; older ones from the segments that hold them."""
        return self._scan_tail(stop_at=seq)[1]

    def last_sealed_event(self) -> dict[str, Any] | None:
        """The last sealed segment's last event (None: no segment), for a reader whose events.jsonl holds no
        complete event (just after a seal). Its last line is read alone and taken when its hash is the
        `last_hash` the header seals (the header chain is `resolution`'s to check, the lines before it `wb
        validate`'s); otherwise the segment is read as `read_after` reads it, and refused as it refuses. `wb
        status` shows it: at 100,000 events, reading and checking the whole segment was a quarter of the command
        (CONTRACT's history bar). An event in events.jsonl is read by `read_after`, which checks its chain."""
        if not self.log_dir.is_dir():
            return None
        chain = self._resolved().chain
        if not chain:
            return None
        last = chain[-1]
        with open(self.log_dir / last.name, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - MAX_LINE_BYTES - 2))
            end = fh.read()
        line = end[:-1].rpartition(b"\n")[2] if end.endswith(b"\n") else b""
        if line and line_hash(line) == last.last_hash:
            event = read_line(line, f"log/{last.name}", "its last line")
            if event.get("seq") == last.last:
                return event
        events = self.sealed_events(last)  # refuses, naming the segment, when it is damaged
        return events[-1][1] if events else None

    def scan_after(self, seq: int) -> tuple[Tail, list[dict[str, Any]]]:
        """The tail and the events after `seq`, in one read from the end."""
        return self._scan_tail(stop_at=seq)

    # -- sealed segments (workbench/model/segments.py) ------------------------------------------------
    def headers(self) -> list[Header]:
        """The headers of every sealed segment under log/, by number (each read once per change of its stat)."""
        base = str(self.log_dir)
        try:
            names = os.listdir(base)
        except FileNotFoundError:
            return []
        if names != self._names[0]:  # the listing as last read: its segments in order again (a write seals rarely)
            self._names = (names, sorted(name for name in names if is_segment_name(name)))
        out = []
        lstat, cache = os.lstat, self._headers
        for name in self._names[1]:
            path = f"{base}/{name}"
            st = lstat(path)
            key = (st.st_size, st.st_mtime_ns, st.st_ino)
            known = cache.get(name)
            if known is None or known[0] != key:
                with open(path, "rb") as fh:
                    first = fh.readline(1 << 12)
                if not first.endswith(b"\n"):
                    raise Refused(f"log/{name}: no header line: not a sealed segment wb wrote; restore "
                                  ".workbench/log/ from git")
                known = (key, parse_header(first[:-1], name))
                cache[name] = known
            out.append(known[1])
        return out

    def resolution(self) -> Resolved:
        """Which sealed segments the log is made of (and which a merge left over): see segments.resolve."""
        headers = self.headers()
        if not headers:
            return Resolved([], [], 0)
        first = self._first_event()
        return resolve(headers, (first["seq"], first.get("prev")) if first else None, self._hash_at)

    def _resolved(self) -> Resolved:
        res = self.resolution()
        if res.problem:
            raise Refused(res.problem)
        return res

    def _first_event(self) -> dict[str, Any] | None:
        good = self._scan_file(None)[0].good_size
        if not good:
            return None
        with open(self.path, "rb") as fh:
            line = fh.readline(MAX_LINE_BYTES + 1)
        return self._parse(line.rstrip(b"\n"), "line 1")

    def _hash_at(self, seq: int) -> str | None:
        for line, event in self._file_events():
            if event["seq"] == seq:
                return line_hash(line)
        return None

    def sealed_events(self, header: Header) -> list[tuple[bytes, dict[str, Any]]]:
        """A sealed segment's events, checked against its header (digest, seq, chain): Refused when damaged."""
        raw = (self.log_dir / header.name).read_bytes()
        return check_body(raw, header_of(raw, header.name))

    def _sealed_after(self, seq: int, below: int) -> tuple[str | None, list[tuple[bytes, dict[str, Any]]]]:
        """(hash of the event at `seq`, the sealed events with seq < seq < below), from the segments needed."""
        out: list[tuple[bytes, dict[str, Any]]] = []
        base_hash: str | None = None
        for h in self._resolved().chain:
            if h.last == seq:
                base_hash = h.last_hash
            elif h.first - 1 == seq:
                base_hash = h.prev_hash
            if h.last <= seq or h.first >= below:
                continue  # neither holds the events wanted nor the one before them
            for line, event in self.sealed_events(h):
                if event["seq"] == seq:
                    base_hash = line_hash(line)
                elif seq < event["seq"] < below:
                    out.append((line, event))
        return base_hash, out

    # -- reading events.jsonl --------------------------------------------------------------------
    def _scan_file(self, stop_at: int | None) -> tuple[Tail, tuple[bytes, dict[str, Any]] | None,
                                                       list[tuple[bytes, dict[str, Any]]]]:
        """Read events.jsonl from the end: the last complete batch ends at the newest line without `more`.

        Everything after it (a torn line, or the first lines of a batch cut short) is the torn tail.
        With `stop_at`, keep reading back to the event with seq <= stop_at (the base, None when the file has
        none) and return those after it, newest first.
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
            return Tail(0, None, 0, size), None, []
        return Tail(last[1]["seq"], None, good_end, size - good_end, line=last[0]), base, newer

    def _scan_tail(self, stop_at: int | None) -> tuple[Tail, list[dict[str, Any]]]:
        tail, base, newer = self._scan_file(stop_at)
        sealed: list[tuple[bytes, dict[str, Any]]] = []
        prev: str | None = None
        prev_line = base[0] if base else None  # hashed when an event follows it: most reads fold none
        expected = (base[1]["seq"] if base else 0) + 1
        reaches_back = base is None and (stop_at is not None or tail.good_size == 0)
        if reaches_back and self.log_dir.is_dir():
            res = self.resolution()
            # where the log ends is the last segment's end even when the chain before it is damaged (reported
            # by validate and doctor): only reading events needs the chain whole
            chain = self.headers() if res.problem and stop_at is None else self._resolved().chain
            if chain:
                last = chain[-1]
                if tail.good_size == 0:
                    tail = Tail(last.last, last.last_hash, 0, tail.torn)
                if stop_at is not None:
                    below = newer[-1][1]["seq"] if newer else last.last + 1
                    prev, sealed = self._sealed_after(stop_at, below)
                    prev_line = None
                    expected = stop_at + 1
        if stop_at is None:
            return tail, []
        out = []
        for line, event in [*sealed, *reversed(newer)]:
            if prev_line is not None:
                prev, prev_line = line_hash(prev_line), None
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

    def _file_events(self) -> Iterator[tuple[bytes, dict[str, Any]]]:
        """events.jsonl's complete events, oldest first, unchecked."""
        good = self._scan_file(None)[0].good_size
        if not good:
            return
        with open(self.path, "rb") as fh:
            data = fh.read(good)
        for number, line in enumerate(split_lines(data)[0], start=1):
            yield line, self._parse(line, f"line {number}")

    def iter_unsealed(self, res: Resolved | None = None) -> Iterator[tuple[bytes, dict[str, Any]]]:
        """The events after the sealed segments (events.jsonl's, less any it still holds of a seal cut short),
        verifying seq and the hash chain from the last segment on; stops before a torn tail."""
        res = self._resolved() if res is None else res
        last = res.chain[-1] if res.chain else None
        prev, expected = (last.last_hash, last.last + 1) if last else (None, 1)
        skip = res.overlap
        for number, (line, event) in enumerate(self._file_events(), start=1):
            if skip:
                skip -= 1
                if not skip and last is not None and line_hash(line) != last.last_hash:
                    raise Refused(f"events.jsonl: line {number}: differs from the sealed seq {event['seq']} "
                                  f"(log/{last.name}); run `wb doctor`")
                continue
            if event["seq"] != expected:
                raise Refused(f"events.jsonl: line {number}: seq {event['seq']} where {expected} was expected")
            if event.get("prev") != prev:
                raise Refused(f"events.jsonl: line {number}: hash chain broken at seq {event['seq']}")
            prev = line_hash(line)
            expected += 1
            yield line, event

    def _sealed_body(self, header: Header) -> bytes:
        """A sealed segment's event lines as stored (its header line left out), unchecked."""
        raw = (self.log_dir / header.name).read_bytes()
        return raw[raw.index(b"\n") + 1:] if b"\n" in raw else b""

    def _unsealed_bytes(self, res: Resolved) -> bytes:
        """events.jsonl's complete events after the sealed ones (less what it still holds of a seal cut short)."""
        good = self._scan_file(None)[0].good_size
        if not good:
            return b""
        with open(self.path, "rb") as fh:
            data = fh.read(good)
        skip = res.overlap
        at = 0
        while skip and at < len(data):
            at = data.index(b"\n", at) + 1
            skip -= 1
        return data[at:]

    def lines_backwards(self) -> Iterator[bytes]:
        """The line of each complete event, newest first — events.jsonl's, then each sealed segment's — unparsed
        and unchecked (a torn tail and a batch cut short are left out): for a reader that wants the newest few,
        or only looks at the bytes of the rest."""
        res = self._resolved_or_none()
        if res.overlap:  # a seal cut short: rare, and the file is small then
            yield from reversed(split_lines(self._unsealed_bytes(res))[0])
        else:
            complete = False
            for off, line in self._lines_backwards():
                if not complete:
                    if self._parse(line, f"line at byte {off}").get("more"):
                        continue  # part of a batch cut short
                    complete = True
                yield line
        for header in reversed(res.chain):
            yield from reversed(split_lines(self._sealed_body(header))[0])

    def _resolved_or_none(self) -> Resolved:
        """As _resolved, and nothing sealed when there is no log/ (one stat)."""
        return self._resolved() if self.log_dir.is_dir() else Resolved([], [], 0)

    def sealed_chain(self) -> list[Header]:
        """The sealed segments the log is made of, oldest first ([] when nothing is sealed)."""
        return self._resolved_or_none().chain

    def sealed_body(self, header: Header) -> bytes:
        """A sealed segment's event lines as stored, unchecked (`wb validate` checks them)."""
        return self._sealed_body(header)

    def unsealed_bytes(self) -> bytes:
        """events.jsonl's complete event lines after the sealed ones, unchecked."""
        return self._unsealed_bytes(self._resolved_or_none())

    def complete_bytes(self) -> bytes:
        """The bytes of every complete event, oldest first — the sealed segments', then events.jsonl's — each
        line ending in a newline (a torn tail and a batch cut short left out); unchecked: for a reader that
        only counts in them (`wb log`)."""
        res = self._resolved_or_none()
        return b"".join([*(self._sealed_body(h) for h in res.chain), self._unsealed_bytes(res)])

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

    def iter_all(self) -> Iterator[tuple[bytes, dict[str, Any]]]:
        """Every complete event from the start — the sealed segments, then events.jsonl — verifying seq and the
        hash chain; stops before a torn tail."""
        res = self._resolved()
        for header in res.chain:
            yield from self.sealed_events(header)
        yield from self.iter_unsealed(res)

    def iter_for_fold(self, stamp_only: Callable[[str], bool], upto: int) -> Iterator[dict[str, Any]]:
        """The complete events with seq ≤ `upto`, from the start, as a fold reads them: of a run of events whose
        type `stamp_only` names (no reducer reads them), in wb's own encoding, only the last one's stamp
        ({seq, ts, type}, read off its line unparsed: jsonl.stamp) — folding the run changes nothing else; every
        other event is parsed. Each sealed segment is checked against its header's digest, and the seqs must run
        without a gap; the hash chain and each line's JSON are what `wb validate` and `wb doctor` check (a write
        reads no sealed segment at all). For the hand-edit check of a first command (issue 33): it parses the
        events a fold reads, not the whole log."""
        kinds: dict[bytes, bool] = {}
        res = self._resolved()
        expected = 1
        for header in res.chain:
            if expected > upto:
                return
            raw = (self.log_dir / header.name).read_bytes()
            sealed = header_of(raw, header.name)
            lines = sealed_lines(raw, sealed)
            where = f"log/{header.name}"
            yield from fold_read(lines, raw[sealed.size:], expected, upto, stamp_only, kinds, where)
            expected += min(len(lines), max(upto - expected + 1, 0))
        for _line, event in self.iter_unsealed(res):
            if event["seq"] > upto:
                return
            yield event

    # -- writing ------------------------------------------------------------------------------
    def append(self, events: list[dict[str, Any]], tail: Tail) -> None:
        """Append a batch in one write and fsync it. Drops a torn tail first (it was never acknowledged)."""
        self.append_unsynced(events, tail).sync()

    def append_unsynced(self, events: list[dict[str, Any]], tail: Tail) -> Appended:
        """`append` but for its fsync: the caller makes the batch durable (`Appended.sync`, or with the snapshots'
        temp files in one `atomic.sync_together`) before anything that follows it on disk is renamed in."""
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
                faults.no_space("gitthree_enospc_log_append", str(self.path))
                if os.write(fd, blob) != len(blob):  # a disk that fills up mid-write writes short, silently
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
            except OSError:
                os.ftruncate(fd, tail.good_size)  # a batch not wholly written was never acknowledged: take it back
                raise
        except BaseException:
            os.close(fd)
            raise
        return Appended(fd, tail.good_size, self.path)

    def truncate_torn(self) -> int:
        tail = self.tail()
        if tail.torn:
            with open(self.path, "r+b") as fh:
                fh.truncate(tail.good_size)
                fh.flush()
                os.fsync(fh.fileno())
        return tail.torn


class Appended:
    """A batch appended to the log and not yet fsynced (EventLog.append_unsynced): `sync` makes it durable, or
    takes it back when it cannot be (a batch not wholly durable was never acknowledged). `fsync` alone is for
    atomic.sync_together, which fsyncs it beside the snapshots' temp files: one journal commit for the three."""

    def __init__(self, fd: int, good_size: int, path: Path) -> None:
        self.fd, self.good_size, self.path = fd, good_size, path
        self.dropped = False  # taken back: never durable, never acknowledged

    def fsync(self) -> None:
        faults.no_space("enospc_log_fsync", str(self.path))  # delayed allocation: a full disk found at fsync
        os.fsync(self.fd)

    def sync(self) -> None:
        """Durable once this returns (at once when it is already); an OSError takes the batch back."""
        if self.fd < 0:
            return
        try:
            self.fsync()
        except OSError:
            self.drop()
            raise
        self.close()

    def drop(self) -> None:
        """Take the batch back (truncate the log where it ended before) and let go of the file."""
        if self.fd >= 0:
            self.dropped = True
            try:
                os.ftruncate(self.fd, self.good_size)
            finally:
                self.close()

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)


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
        line = encode(event)
        if len(line) > MAX_RECORD_BYTES:
            raise too_big(event, len(line))
        prev = line_hash(line)
    return events


def too_big(event: dict[str, Any], size: int) -> Refused:
    """The one refusal of an event over what a record may hold, naming its largest field."""
    where, node = "payload", event.get("payload")
    while isinstance(node, dict | list) and node:  # down to the largest part: `task.acceptance`, `text`
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        key, node = max(items, key=lambda kv: len(json.dumps(kv[1], ensure_ascii=False)))
        if isinstance(key, int):
            break
        where = key if where == "payload" else f"{where}.{key}"
    return Refused(f"refused: this {event.get('type')} is {size:,} bytes, over the {MAX_RECORD_BYTES:,} one record "
                   f"may hold (`{where}` is the largest part); nothing was written: keep long text in a file "
                   "of the repository and give its path")
