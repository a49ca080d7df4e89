"""model/boardfile.splice_board (issue 33): board.json's bytes after a write, made from the bytes before it by
copying the untouched tasks' lines, are exactly what encode_board writes — for any board, any tasks touched
or appended, any change of its other keys — and when the tasks did not stay in place it gives way (None)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.boardfile import encode_board, splice_board
from workbench.model.reducer import Docs

TEXT = st.text(alphabet=st.sampled_from(list('ab "\\,\n\t}{]:ü€\u2028\x00') + ["中", "𝄞"]), max_size=12)
VALUE = st.one_of(TEXT, st.integers(-5, 5), st.booleans(), st.none(), st.lists(TEXT, max_size=3))


def board_of(n: int, extra: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": 1, **extra,
            "tasks": [{"id": f"T-{i:03d}", "title": f"task {i}", "status": "todo"} for i in range(1, n + 1)]}


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 12), touch=st.lists(st.integers(0, 11), max_size=4), added=st.integers(0, 3),
       field=TEXT, value=VALUE, head=st.dictionaries(st.sampled_from(["last_event", "archive", "zz"]), VALUE))
def test_splice_is_encode_board(n: int, touch: list[int], added: int, field: str, value: Any,
                                head: dict[str, Any]) -> None:
    before = board_of(n, {})
    raw = encode_board(before)
    after = copy.deepcopy(before)
    touched: set[str] = set()
    for i in touch:
        if i < n:
            after["tasks"][i][field or "title"] = value
            touched.add(after["tasks"][i]["id"])
    for j in range(added):
        after["tasks"].append({"id": f"T-{900 + j}", "title": field, "extra": value})
        touched.add(f"T-{900 + j}")
    after.update(head)
    assert splice_board(after, raw, touched) == encode_board(after)


def test_tasks_that_did_not_stay_in_place_are_left_to_encode_board() -> None:
    before = board_of(5, {"last_event": 3})
    raw = encode_board(before)
    removed = copy.deepcopy(before)
    del removed["tasks"][2]
    swapped = copy.deepcopy(before)
    swapped["tasks"][1], swapped["tasks"][3] = swapped["tasks"][3], swapped["tasks"][1]
    emptied = copy.deepcopy(before)
    emptied["tasks"] = []
    for after in (removed, swapped, emptied):
        assert splice_board(after, raw, set()) is None
    repeated = board_of(3, {})
    repeated["tasks"][2]["id"] = "T-001"
    assert splice_board(repeated, encode_board(repeated), set()) is None
    key_first = board_of(3, {})
    key_first["tasks"][1] = {"title": "x", "id": "T-002", "status": "todo"}  # its line is not led by its id
    assert splice_board(key_first, encode_board(key_first), set()) is None
    assert splice_board(before, raw.replace(b"\n  ]\n}\n", b"\n  ]}\n"), set()) is None  # not laid out so


def test_docs_encode_board_reuses_the_bytes_it_read() -> None:
    """What a write does: the board read from its bytes, one task changed and one appended."""
    board = board_of(2000, {"last_event": 10})
    raw = encode_board(board)
    docs = Docs({}, "", json.loads(raw))
    docs.board_raw = raw
    docs.board["tasks"][1500]["status"] = "done"
    docs.board["tasks"].append({"id": "T-2001", "title": "new", "status": "todo"})
    docs.touched.update({"T-1501", "T-2001"})
    assert docs.encode_board() == encode_board(docs.board)
