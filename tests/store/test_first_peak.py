"""The first write after a big batch holds neither that batch nor a cap's worth of buffer (issue 33's
cost.peak_first_add): the committed batch kept by store/pending.py is read a line at a time, and board.json is
read for the size it has. These prove the readers give what the whole-file readers they replaced gave."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import Refused
from workbench.model import boardfile
from workbench.model.jsonl import loads_record, split_lines
from workbench.store import pending


def whole_file(raw: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """taken_back's reading before: every complete line split out of the whole file."""
    lines = split_lines(raw)[0]
    made = next((r for r in (loads_record(line) for line in lines if b'"commit"' in line)
                 if r is not None and r.get("kind") == "commit"), None)
    last = next((r["record"] for r in map(loads_record, reversed(lines))
                 if r is not None and r.get("kind") == "event" and isinstance(r.get("record"), dict)), None)
    return made, last


def event_line(n: int) -> bytes:
    return json.dumps({"kind": "event", "record": {"seq": n, "id": f"E{n}", "payload": {"text": "commit"}}}).encode()


LINES = st.one_of(
    st.integers(1, 10_000).map(event_line),
    st.integers(1, 99).map(lambda n: json.dumps({"kind": "commit", "ref": f"refs/heads/b{n}", "sha": "a" * 40})
                           .encode()),
    st.just(b'{"kind":"call","record":{"tool":"commit"}}'),
    st.just(b'{"kind":"event","record":"commit"}'),  # an event whose record is no object
    st.just(b'{"kind":"commit","kind":"event"}'),  # a repeated key: damaged
    st.just(b'{"kind":"commit"'),  # torn inside the line
    st.just(b'[1, "commit"]'),
    st.just(b""),
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(LINES, max_size=60), torn=st.sampled_from([b"", b'{"kind":"commit","ref":"x"', b"junk"]))
def test_committed_batch_read_line_by_line_as_whole(tmp_path_factory: Any, lines: list[bytes], torn: bytes) -> None:
    path = tmp_path_factory.mktemp("pending") / "committed.jsonl"
    raw = b"".join(line + b"\n" for line in lines) + torn
    path.write_bytes(raw)
    assert pending._commit_and_last(path) == whole_file(raw)


def test_last_event_far_from_the_end(tmp_path: Path) -> None:
    """More lines after the last event than the reader keeps from the end: it reads them all, as before."""
    path = tmp_path / "committed.jsonl"
    raw = b"".join(line + b"\n" for line in [event_line(1), event_line(2),
                                               *[b'{"kind":"call","record":{}}'] * (pending._NEWEST + 5),
                                               b'{"kind":"commit","ref":"refs/heads/main","sha":"b"}'])
    path.write_bytes(raw)
    made, last = pending._commit_and_last(path)
    assert (made, last) == whole_file(raw)
    assert last is not None and last["seq"] == 2
    assert pending._commit_and_last(tmp_path / "missing.jsonl") == (None, None)


def test_board_read_for_its_size(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    for raw in (b"", b"{}", json.dumps({"tasks": [{"id": f"T-{i}"} for i in range(3000)]}).encode()):
        path.write_bytes(raw)
        assert boardfile.read_board_bytes(path) == raw


def test_board_over_the_cap_refused(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    with open(path, "wb") as fh:
        fh.truncate(boardfile.MAX_BOARD_BYTES + 1)
    try:
        boardfile.read_board_bytes(path)
    except Refused as err:
        assert "over the cap" in str(err)
    else:
        raise AssertionError("a board over the cap was read")
