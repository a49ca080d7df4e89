"""segments.fold_lines reads a sealed segment for a fold in one scan of its bytes (issue 33's first command after
a clone); eventlog.segment_for_fold reads it a line at a time, as iter_for_fold always did. On any segment —
wb's own lines, lines spelled otherwise, damaged ones, a gap in the seqs — iter_for_fold's reading (the scan, or
the line-by-line reading when the scan declines) yields the same events, or refuses with the same message."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import Refused
from workbench.model import reducer
from workbench.model.jsonl import encode, split_lines
from workbench.model.segments import fold_lines
from workbench.store.eventlog import segment_for_fold

NAME = "000003.jsonl"


def stamp_only(kind: bytes) -> bool:
    return reducer.stamp_only(kind.decode("ascii"))


def event(seq: int, kind: str, text: str) -> dict[str, Any]:
    return {"schema_version": 1, "seq": seq, "id": f"{seq:026d}", "ts": f"2026-01-01T00:00:{seq % 60:02d}Z",
            "type": kind, "actor": "agent", "payload": {"id": f"T-{seq:03d}", "title": text, "text": text},
            "prev": "0" * 64}


KINDS = ["agent.tool_call", "note", "session.start", "task.add", "task.done", "board.archive", "x.y_z"]
SPELLINGS = ["wb", "wb", "wb", "wb", "spaced", "reordered", "not_json", "repeated_key", "array", "surrogate",
             "seq_off", "seq_string", "blank"]


def line_of(seq: int, kind: str, text: str, spelling: str) -> bytes:
    ev = event(seq, kind, text)
    if spelling == "wb":
        return encode(ev)
    if spelling == "spaced":
        return json.dumps(ev).encode()
    if spelling == "reordered":
        return json.dumps(dict(reversed(list(ev.items()))), ensure_ascii=False).encode()
    if spelling == "not_json":
        return encode(ev)[:-3]
    if spelling == "repeated_key":
        return encode(ev)[:-1] + b',"type":"note"}'
    if spelling == "array":
        return b"[" + encode(ev) + b"]"
    if spelling == "surrogate":
        return encode({**ev, "payload": {"text": "x"}}).replace(b'"text":"x"', b'"text":"\\ud800"')
    if spelling == "seq_off":
        return encode({**ev, "seq": seq + 1})
    if spelling == "seq_string":
        return encode({**ev, "seq": str(seq)})
    return b""


def outcome(run: Any) -> Any:
    try:
        return list(run())
    except Refused as err:
        return ("refused", str(err))


@settings(max_examples=400, deadline=None)
@given(first=st.integers(1, 5000),
       specs=st.lists(st.tuples(st.sampled_from(KINDS), st.text(max_size=12), st.sampled_from(SPELLINGS),
                                st.booleans()), max_size=30))
def test_one_scan_reads_as_line_by_line(first: int, specs: list[tuple[str, str, str, bool]]) -> None:
    body = b"".join(line_of(first + i, kind, text, spelling if odd else "wb") + b"\n"
                    for i, (kind, text, spelling, odd) in enumerate(specs))
    lines = split_lines(body)[0]

    def combined() -> list[dict[str, Any]]:
        fast = fold_lines(body, body.count(b"\n"), NAME, first, stamp_only) if body else None
        return fast if fast is not None else list(segment_for_fold(lines, NAME, first, 10**9, stamp_only))

    assert outcome(combined) == outcome(lambda: segment_for_fold(lines, NAME, first, 10**9, stamp_only))


def test_the_scan_takes_wb_lines_and_declines_the_rest() -> None:
    """The scan is not a no-op: it reads a segment of wb's own lines, and leaves any other to the lines."""
    lines = [encode(event(7 + i, kind, "t")) for i, kind in enumerate(["task.add", "agent.tool_call",
                                                                        "agent.tool_call", "task.done"])]
    body = b"".join(line + b"\n" for line in lines)
    got = fold_lines(body, 4, NAME, 7, stamp_only)
    assert got is not None
    assert [e["seq"] for e in got] == [7, 9, 10]
    assert got[1] == {"seq": 9, "ts": "2026-01-01T00:00:09Z", "type": "agent.tool_call"}
    assert got == list(segment_for_fold(lines, NAME, 7, 10**9, stamp_only))
    assert fold_lines(body, 4, NAME, 8, stamp_only) is None  # a gap: said by the lines
    spaced = body.replace(b'{"schema_version":1,"seq":8,', b'{"schema_version": 1,"seq":8,')
    assert fold_lines(spaced, 4, NAME, 7, stamp_only) is None


def test_the_first_checks_fold_is_the_whole_fold(tmp_path: Any) -> None:
    """logcheck folds a segment of valid events by its fold-relevant ones (of a run of events no reducer reads,
    the last; the log's first always): cut into segments anywhere, that fold is the fold of every event."""
    from tests.store.test_cold_verdict import sealed_workbench
    from workbench.store.logcheck import _fold_relevant
    from workbench.store.workbench import Workbench

    repo = sealed_workbench(tmp_path / "repo")
    pairs = list(Workbench(repo).log.iter_all())
    assert sum(reducer.stamp_only(e["type"]) for _line, e in pairs) > len(pairs) // 2
    whole = reducer.fold_more(None, (e for _line, e in pairs))
    assert whole is not None
    for size in (1, 2, 3, 7, 20, len(pairs)):
        docs = None
        for at in range(0, len(pairs), size):
            docs = reducer.fold_more(docs, _fold_relevant(pairs[at:at + size], docs is None))
        assert docs is not None
        assert (docs.state, docs.body, docs.board, docs.sealed) == (whole.state, whole.body, whole.board,
                                                                    whole.sealed), size
