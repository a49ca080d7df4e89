"""Sealed segments of the event log: `.workbench/log/NNNNNN.jsonl`, immutable once written.

A segment's first line is its header, one JSON object:
`{"wb_segment": 1, "number": N, "first": seq, "last": seq, "count": n, "sha256": digest of the event lines,
"last_hash": line hash of its last event, "prev_sha256": the previous segment's sha256, "prev_hash": the line
hash of the event before its first}`; the lines after it are the events, byte for byte as they were in
events.jsonl. The digests chain: a segment names the digest of the one before it, and its first event's `prev`
is the previous segment's last line hash, so the whole log (segments, then events.jsonl) is one hash chain.

`resolve` decides which segments make up the log — the chain from segment 1 that events.jsonl continues — and
which are left over from a merge that sealed on both sides (`orphans`: their events are in the log already,
by id, when wb's merge driver ran; the next write removes them). This module is pure: the store reads files,
the merge driver reads git blobs, and both resolve the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from workbench.errors import Refused
from workbench.model.jsonl import MAX_LINE_BYTES, escaped_surrogate, line_hash, read_line, split_lines, unique_pairs

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

LOG_DIR = "log"
FORMAT = 1
# A write seals events.jsonl into a segment once it holds this many events or bytes (config.yaml `log:`).
SEGMENT_EVENTS = 1000
SEGMENT_BYTES = 512 * 1024
_SCAN = json.JSONDecoder(object_pairs_hook=unique_pairs).scan_once  # type: ignore[attr-defined]  # the C scanner


def segment_name(number: int) -> str:
    return f"{number:06d}.jsonl"


def is_segment_name(name: str) -> bool:
    return len(name) == 12 and name.endswith(".jsonl") and name[:6].isdigit()


class Header:
    """A sealed segment's header. A plain class: a dataclass would import inspect on every `wb status`."""

    __slots__ = ("number", "first", "last", "count", "sha256", "last_hash", "prev_sha256", "prev_hash", "name",
                 "size")

    def __init__(self, number: int, first: int, last: int, count: int, sha256: str, last_hash: str,
                 prev_sha256: str | None, prev_hash: str | None, name: str = "", size: int = 0) -> None:
        self.number, self.first, self.last, self.count = number, first, last, count
        self.sha256, self.last_hash, self.prev_sha256, self.prev_hash = sha256, last_hash, prev_sha256, prev_hash
        self.name = name or segment_name(number)
        self.size = size  # bytes of the header line, newline included

    def __repr__(self) -> str:
        return f"Header({self.name}, seq {self.first}..{self.last})"

    def as_dict(self) -> dict[str, Any]:
        return {"wb_segment": FORMAT, "number": self.number, "first": self.first, "last": self.last,
                "count": self.count, "sha256": self.sha256, "last_hash": self.last_hash,
                "prev_sha256": self.prev_sha256, "prev_hash": self.prev_hash}


def encode_segment(number: int, lines: list[bytes], prev: Header | None) -> tuple[bytes, Header]:
    """A sealed segment's bytes: the header, then `lines` (complete event lines, without newlines)."""
    from workbench.model import digest  # here, as below: a read that opens no segment (wb task list) hashes nothing

    body = b"".join(line + b"\n" for line in lines)
    first = json.loads(lines[0])["seq"]
    header = Header(number, first, first + len(lines) - 1, len(lines), digest.sha256(body).hexdigest(),
                    line_hash(lines[-1]), prev.sha256 if prev else None, prev.last_hash if prev else None)
    head = json.dumps(header.as_dict(), separators=(",", ":")).encode() + b"\n"
    header.size = len(head)
    return head + body, header


def parse_header(first_line: bytes, name: str) -> Header:
    where = f"log/{name}"
    try:
        data = json.loads(first_line)
    except (ValueError, RecursionError):
        raise Refused(f"{where}: the header line is not JSON: not a sealed segment wb wrote; run `wb doctor`") from None
    keys = ("number", "first", "last", "count", "sha256", "last_hash", "prev_sha256", "prev_hash")
    if not isinstance(data, dict) or data.get("wb_segment") != FORMAT or any(k not in data for k in keys):
        raise Refused(f"{where}: the header is not a wb segment header (format {FORMAT}); run `wb doctor`")
    ints = all(isinstance(data[k], int) for k in ("number", "first", "last", "count"))
    if not ints or data["last"] - data["first"] + 1 != data["count"] or data["count"] < 1:
        raise Refused(f"{where}: the header's seq range is inconsistent; run `wb doctor`")
    if segment_name(data["number"]) != name:
        raise Refused(f"{where}: the header names segment {data['number']}; run `wb doctor`")
    return Header(data["number"], data["first"], data["last"], data["count"], str(data["sha256"]),
                  str(data["last_hash"]), data["prev_sha256"], data["prev_hash"], name, len(first_line) + 1)


def header_of(raw: bytes, name: str) -> Header:
    end = raw.find(b"\n")
    if end == -1:
        raise Refused(f"log/{name}: no header line: not a sealed segment wb wrote; run `wb doctor`")
    return parse_header(raw[:end], name)


def sealed_lines(raw: bytes, header: Header) -> list[bytes]:
    """The lines of a sealed segment, its bytes checked against the digest sealed in its header and its end
    against a torn line. Raises Refused naming the segment."""
    from workbench.model import digest

    where = f"log/{header.name}"
    body = raw[header.size:]
    if digest.sha256(body).hexdigest() != header.sha256:
        raise Refused(f"{where}: its bytes no longer match the digest sealed in its header (changed after it was "
                      "sealed): restore it with `git checkout -- .workbench/log/`")
    lines, torn = split_lines(body)
    if torn:
        raise Refused(f"{where}: ends without a newline; restore it with `git checkout -- .workbench/log/`")
    return lines


def check_body(raw: bytes, header: Header) -> list[tuple[bytes, dict[str, Any]]]:
    """Every event of a sealed segment, checked against its header: the digest of its bytes, seq first..last
    without gaps, the hash chain from `prev_hash` to `last_hash`. Raises Refused naming the segment."""
    where = f"log/{header.name}"
    lines = sealed_lines(raw, header)
    out = []
    prev, expected = header.prev_hash, header.first
    for number, (line, event) in enumerate(zip(lines, parsed_lines(lines), strict=True), start=2):
        if event is None:  # not wb's own encoding of an object: read on its own, refused as read_line refuses it
            event = read_line(line, where, f"line {number}")
        if event.get("seq") != expected:
            raise Refused(f"{where}: line {number}: seq {event.get('seq')} where {expected} was expected")
        if event.get("prev") != prev:
            raise Refused(f"{where}: line {number}: hash chain broken at seq {expected}")
        prev = line_hash(line)
        expected += 1
        out.append((line, event))
    if expected - 1 != header.last or prev != header.last_hash:
        raise Refused(f"{where}: holds seq {header.first}..{expected - 1}, its header says ..{header.last}")
    return out


def parsed_lines(lines: list[bytes]) -> list[dict[str, Any] | None]:
    """Each line's event, read by json's C scanner straight off the segment's text (one decode, no per-line
    json.loads: that was most of a cold start's time, issue 33), keeping a repeated key refused (the same hook);
    None for a line that is not exactly one JSON object from its first byte to its last, or for every line when
    the segment holds a lone surrogate's escape — its caller reads those with read_line, and refuses what
    read_line refuses."""
    none: list[dict[str, Any] | None] = [None] * len(lines)
    body = b"\n".join(lines)
    if escaped_surrogate(body):  # as jsonl.check_unicode looks for one
        return none
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return none
    out = list(none)
    start = 0
    for i, part in enumerate(text.split("\n")):  # UTF-8 puts no newline byte inside a character: one part a line
        end = start + len(part)
        try:
            event, stop = _SCAN(text, start)
        except (StopIteration, ValueError, RecursionError):
            event, stop = None, -1
        if stop == end and isinstance(event, dict) and len(lines[i]) <= MAX_LINE_BYTES:
            out[i] = event
        start = end + 1
    return out


class Resolved:
    """Which segments make up the log: `chain`, the sealed segments of the log in order; `orphans`, segments a
    merge left that the log does not continue (superseded); `overlap`, how many of events.jsonl's first events
    are sealed already (a seal cut short: skipped on read); `problem`, why the log cannot be put together."""

    __slots__ = ("chain", "orphans", "overlap", "problem")

    def __init__(self, chain: list[Header], orphans: list[Header], overlap: int, problem: str | None = None) -> None:
        self.chain, self.orphans, self.overlap, self.problem = chain, orphans, overlap, problem


def resolve(headers: list[Header], tail_first: tuple[int, str | None] | None,
            tail_hash_at: Callable[[int], str | None]) -> Resolved:
    """Which segments the log is made of. `headers` sorted by number; `tail_first`: (seq, prev) of events.jsonl's
    first complete event, None when it holds none; `tail_hash_at(seq)`: the line hash of events.jsonl's event
    at `seq` (None when it has none), asked only when events.jsonl does not simply follow the last segment.

    The chain runs from segment 1 while each one continues the last (seq, both digests). events.jsonl then
    attaches after the last of them; or it still begins with its own copy of the last segments' events (a seal
    cut short before events.jsonl was rewritten: those events are skipped); or it attaches after an earlier one
    (a merge sealed differently on each side: the later segments are orphans, their events carried into
    events.jsonl by wb's merge driver)."""
    chain: list[Header] = []
    for h in headers:
        if not chain:
            if h.number != 1 or h.first != 1 or h.prev_sha256 is not None or h.prev_hash is not None:
                break
        else:
            last = chain[-1]
            if h.number != last.number + 1 or h.first != last.last + 1 or h.prev_sha256 != last.sha256 \
                    or h.prev_hash != last.last_hash:
                break
        chain.append(h)
    chained = set(map(id, chain))
    orphans = [h for h in headers if id(h) not in chained]
    if headers and not chain:
        return Resolved([], headers, 0, f"log/{headers[0].name}: the first sealed segment does not start the "
                                         "log (seq 1, no previous digest): restore .workbench/log/ from git")
    if tail_first is None and orphans:  # events.jsonl empty: the log ends at the last segment, so it must chain
        after = f"log/{chain[-1].name} and " if chain else ""
        return Resolved(chain, orphans, 0, f"{after}log/{orphans[0].name} do not chain (a sealed segment changed "
                                           "after it was sealed): restore .workbench/log/ from git")
    if tail_first is None or not chain:
        return Resolved(chain, orphans, 0)
    seq, prev = tail_first
    last = chain[-1]
    if seq == last.last + 1 and prev == last.last_hash:
        return Resolved(chain, orphans, 0)
    for i in range(len(chain) - 1, -1, -1):
        before = chain[i - 1] if i else None
        if seq == (before.last if before else 0) + 1 and prev == (before.last_hash if before else None):
            if tail_hash_at(last.last) == last.last_hash:  # the same events, sealed: a seal cut short
                return Resolved(chain, orphans, last.last - seq + 1)
            return Resolved(chain[:i], chain[i:] + orphans, 0)
    return Resolved(chain, orphans, 0, f"events.jsonl: starts at seq {seq}, which does not continue the sealed "
                                       f"log (it ends at seq {last.last}, log/{last.name}): restore "
                                       ".workbench/log/ from git, or run `wb doctor`")


class WholeLog:
    """One copy's whole log from its bytes — sealed segments [(name, bytes)] and events.jsonl's — put together as
    the store puts it together from files (resolve): for the merge driver (git blobs) and `wb sync` (a state
    commit's files). Damaged lines are skipped and a torn last line ignored: the merged result is validated."""

    def __init__(self, segments: list[tuple[str, bytes]], tail_raw: bytes) -> None:
        from workbench.model.jsonl import records

        tail_lines = split_lines(tail_raw)[0]
        tail = records(tail_lines)[0]
        by_name = dict(segments)
        headers = []
        for name, raw in sorted(segments):
            try:
                headers.append(header_of(raw, name))
            except Refused:
                continue  # not a segment wb wrote: `wb validate` reports it
        pairs = zip(tail_lines, tail, strict=True) if len(tail_lines) == len(tail) else (
            (encode_line(e), e) for e in tail)  # a damaged line was skipped: wb's own encoding, then
        hashes = {e.get("seq"): line_hash(line) for line, e in pairs}
        first = (tail[0]["seq"], tail[0].get("prev")) if tail else None
        res = resolve(headers, first, hashes.get)
        if res.problem:  # keep what is readable: the merged log is checked by `wb validate` afterwards
            res.chain, res.overlap = [], 0
        self.chain = res.chain
        self.sealed: list[dict[str, Any]] = []
        for h in self.chain:
            self.sealed.extend(records(split_lines(by_name[h.name][h.size:])[0])[0])
        self.unsealed = tail[res.overlap:]

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.sealed + self.unsealed


def encode_line(event: dict[str, Any]) -> bytes:
    from workbench.model.jsonl import encode

    return encode(event)
