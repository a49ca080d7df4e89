"""A fold's read of a sealed segment (EventLog.iter_for_fold, issue 33): the stamps of a segment in wb's own
encoding are read by one scan of its bytes; any other segment line by line. Both give the same events, stop at
the same `upto` and refuse the same gap in the same words — a property over generated segments."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import Refused
from workbench.model import reducer
from workbench.model.foldread import _line_by_line, _stamped
from workbench.model.jsonl import encode

TYPES = ["agent.tool_call", "agent.tool_result", "note.add", "task.add", "state.set"]  # stamp-only and not


def _event(seq: int, kind: str, k: int) -> dict:
    return {"schema_version": 1, "seq": seq, "id": f"{seq:026d}", "ts": f"2026-01-01T00:00:{k % 60:02d}Z",
            "type": kind, "actor": "agent", "session": None, "payload": {"text": f"é {k}", "n": k}, "prev": None}


@st.composite
def segments(draw: st.DrawFn) -> tuple[list[bytes], int, int]:
    first = draw(st.integers(1, 50))
    kinds = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=30))
    lines = []
    gap_at = draw(st.one_of(st.none(), st.integers(0, len(kinds) - 1)))
    mixed = draw(st.booleans())  # else every line as wb writes it
    seq = first
    for k, kind in enumerate(kinds):
        if k == gap_at:
            seq += draw(st.sampled_from([1, 2, -1]))
        event = _event(seq, kind, k)
        spelling = draw(st.sampled_from(["wb", "wb", "wb", "spaced"])) if mixed else "wb"
        lines.append(encode(event) if spelling == "wb" else json.dumps(event).encode())
        seq += 1
    upto = draw(st.integers(first - 1, first + len(kinds) + 1))
    return lines, first, upto


def _read(reader: object) -> tuple[list[dict], str | None]:
    out: list[dict] = []
    try:
        for event in reader:  # type: ignore[attr-defined]
            out.append(event)
    except Refused as err:
        return out, str(err)
    return out, None


@settings(max_examples=400, deadline=None)
@given(segments())
def test_the_scan_reads_what_line_by_line_reads(case: tuple[list[bytes], int, int]) -> None:
    lines, first, upto = case
    body = b"".join(line + b"\n" for line in lines)
    scanned = _stamped(lines, body, first, upto, reducer.stamp_only, {}, "log/000001.jsonl")
    expected = _read(_line_by_line(lines, first, upto, reducer.stamp_only, {}, "log/000001.jsonl"))
    canonical = all(line.startswith(b'{"schema_version":1,"seq":') for line in lines)
    assert (scanned is None) == (not canonical)  # a line not in wb's encoding: the fold reads line by line
    if scanned is None:
        return
    assert _read(scanned) == expected


def test_a_run_of_stamp_only_events_is_read_as_its_last_stamp() -> None:
    kinds = ["agent.tool_call", "agent.tool_call", "note.add", "agent.tool_call", "agent.tool_call"]
    lines = [encode(_event(10 + k, kind, k)) for k, kind in enumerate(kinds)]
    body = b"".join(line + b"\n" for line in lines)
    read = _stamped(lines, body, 10, 99, reducer.stamp_only, {}, "log/000001.jsonl")
    assert read is not None
    events = list(read)
    assert [(e["seq"], e["type"], "payload" in e) for e in events] == [
        (11, "agent.tool_call", False), (12, "note.add", True), (14, "agent.tool_call", False)]
