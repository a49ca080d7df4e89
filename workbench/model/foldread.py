"""A fold's read of one sealed segment of the log (store/eventlog.py's `iter_for_fold`, issue 33): of a run of
events whose type no reducer reads (an agent's tool calls), in wb's own encoding, only the last one's stamp
({seq, ts, type}, read off its line unparsed); every other event parsed; the seqs must run without a gap.

A segment whose every line is in wb's encoding has its stamps read by one scan of its bytes and its parsed events
read off one decode (`_stamped`): at 50,000 events, 45,000 of them tool calls, the loop line by line was most of a
first write's fold after a clone. Any other segment is read line by line (`_line_by_line`). Both give the same
events and refuse alike (tests/store/test_fold_read.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from workbench.errors import Refused
from workbench.model.jsonl import read_line
from workbench.model.segments import parsed_lines

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def fold_read(lines: list[bytes], body: bytes, first: int, upto: int, stamp_only: Callable[[str], bool],
              kinds: dict[bytes, bool], where: str) -> Iterator[dict[str, Any]]:
    """The events of a sealed segment (its `lines`, checked against its digest, and its `body`, the bytes they
    were split from) with seq `first` on and ≤ `upto`, as a fold reads them. `kinds`: stamp_only's answers by
    type, shared across a log's segments."""
    read = _stamped(lines, body, first, upto, stamp_only, kinds, where)
    return _line_by_line(lines, first, upto, stamp_only, kinds, where) if read is None else read


def _stamped(lines: list[bytes], body: bytes, first: int, upto: int, stamp_only: Callable[[str], bool],
             kinds: dict[bytes, bool], where: str) -> Iterator[dict[str, Any]] | None:
    """`_line_by_line`'s events for a segment whose every line is in wb's own encoding, its stamps read by one
    scan of its bytes (C) instead of one match per line: at 50,000 events, 45,000 of them an agent's tool calls,
    that loop was most of a first write's fold after a clone (issue 33). None when a line is not in wb's
    encoding: then line by line."""
    from workbench.model.jsonl import stamps

    found = stamps(body)
    if len(found) != len(lines):
        return None
    return _from_stamps(lines, found, first, upto, stamp_only, kinds, where)


def _from_stamps(lines: list[bytes], found: list[tuple[bytes, bytes, bytes]], first: int, upto: int,
                 stamp_only: Callable[[str], bool], kinds: dict[bytes, bool], where: str
                 ) -> Iterator[dict[str, Any]]:
    count = min(len(lines), max(upto - first + 1, 0))
    for kind in {t for _s, _ts, t in found[:count]} - kinds.keys():
        kinds[kind] = stamp_only(kind.decode("ascii"))
    seqs = [int(s) for s, _ts, _t in found[:count]]
    wanted = range(first, first + count)
    gap = next((i for i, (seq, want) in enumerate(zip(seqs, wanted, strict=True)) if seq != want), count)
    parsed = [i for i in range(gap) if not kinds[found[i][2]]]
    events = parsed_lines([lines[i] for i in parsed])  # one decode, json's scanner line by line
    for i, event in zip(parsed, events, strict=True):
        if i and kinds[found[i - 1][2]]:  # the last of a run of stamp-only events before it
            yield _stamp_event(first + i - 1, found[i - 1])
        if event is None:  # refused as read_line refuses it
            event = read_line(lines[i], where, f"line {i + 2}")
        if event.get("seq") != first + i:
            raise _gap(where, i + 2, event.get("seq"), first + i)
        yield event
    if gap < count:  # as line by line: a run before a parsed line is yielded before that line is read
        seq: Any = seqs[gap]
        if not kinds[found[gap][2]]:
            if gap and kinds[found[gap - 1][2]]:
                yield _stamp_event(first + gap - 1, found[gap - 1])
            seq = read_line(lines[gap], where, f"line {gap + 2}").get("seq")
        raise _gap(where, gap + 2, seq, first + gap)
    if count and kinds[found[count - 1][2]]:
        yield _stamp_event(first + count - 1, found[count - 1])


def _stamp_event(seq: int, found: tuple[bytes, ...]) -> dict[str, Any]:
    """The event a fold takes for a stamp-only line: its stamp, (seq, ts, type) as read off the line."""
    return {"seq": seq, "ts": found[1].decode("ascii"), "type": found[2].decode("ascii")}


def _gap(where: str, number: int, seq: Any, expected: int) -> Refused:
    return Refused(f"{where}: line {number}: seq {seq} where {expected} was expected")


def _line_by_line(lines: list[bytes], first: int, upto: int, stamp_only: Callable[[str], bool],
                  kinds: dict[bytes, bool], where: str) -> Iterator[dict[str, Any]]:
    """The events of a sealed segment's `lines` (seq `first` on) with seq ≤ `upto`, as a fold reads them: of a
    run of stamp-only events in wb's own encoding only the last one's stamp, every other event parsed."""
    from workbench.model.jsonl import stamp

    expected = first
    run: dict[str, Any] | None = None  # the last of a run of stamp-only events, not yielded yet
    for number, line in enumerate(lines, start=2):
        if expected > upto:
            break
        found = stamp(line)
        if found is not None:
            kind = kinds.get(found[3])
            if kind is None:
                kind = kinds[found[3]] = stamp_only(found[3].decode("ascii"))
            if kind:
                if int(found[1]) != expected:
                    raise _gap(where, number, int(found[1]), expected)
                run = _stamp_event(expected, found.groups())
                expected += 1
                continue
        if run is not None:
            yield run
            run = None
        event = read_line(line, where, f"line {number}")
        if event.get("seq") != expected:
            raise _gap(where, number, event.get("seq"), expected)
        expected += 1
        yield event
    if run is not None:
        yield run
