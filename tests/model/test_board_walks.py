"""The write path's questions of every task on the board, asked of C (issue 33: model/boardfile.task_ids,
duplicate_ids, highest_task_number, check_board; store/archive.finished_count), give the answers the plain
Python loops they replaced gave — for any board, a person's hand-edited one included: ids that are not strings,
missing, unhashable, holding a newline or another digit, repeated; tasks that are not objects."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import SchemaRefused
from workbench.model import schemas
from workbench.model.boardfile import check_board, duplicate_ids, encode_board, highest_task_number, splice_board
from workbench.model.ids import TASK_ID
from workbench.model.reducer import Docs
from workbench.store.archive import finished_count

ID = st.one_of(st.sampled_from(["T-001", "T-002", "T-010", "T-999", "T-1000", "T-12", "T-0042", "T-٣٣٣", "T-²²²",
                                "T-005\n", "x\nT-777", "T-003\nT-888", "", "T-", "t-004", "T-004 "]),
               st.from_regex(r"\AT-\d{3,5}\Z"), st.integers(0, 9), st.none(), st.lists(st.just("T-006"), max_size=1))
STATUS = st.sampled_from(["todo", "done", "cancelled", "blocked", None, 3])


@st.composite
def tasks(draw: Any) -> list[Any]:
    out: list[Any] = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 12))
        if kind == 0:
            out.append(draw(st.sampled_from([["T-001"], "T-002", 7, None])))  # not an object
            continue
        task: dict[str, Any] = {"title": "t"}
        if kind != 1:
            task["id"] = draw(ID)
        if kind != 2:
            task["status"] = draw(STATUS)
        out.append(task)
    return out


def duplicates_by_loop(tasks: Any) -> list[tuple[int, str]]:
    """The oracle for model/boardfile.py `duplicate_ids`: the plain loop its fast path (ids all unique → [])
    must agree with, on every board hypothesis makes. It restates the fallback loop on purpose."""
    seen: set[str] = set()
    out = []
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        tid = task.get("id") if isinstance(task, dict) else None
        if isinstance(tid, str):
            if tid in seen:
                out.append((i, tid))
            seen.add(tid)
    return out


def highest_by_loop(tasks: list[Any]) -> int:
    highest = 0
    for task in reversed(tasks):
        tid = task.get("id", "")
        if isinstance(tid, str) and tid[2:].isdigit() and TASK_ID.match(tid) and int(tid[2:]) > highest:
            highest = int(tid[2:])
    return highest


def outcome(fn: Any) -> Any:
    try:
        return ("ok", fn())
    except Exception as err:  # noqa: BLE001 — the same exception, or the same answer
        return ("raised", type(err).__name__, str(err))


@settings(max_examples=400, deadline=None)
@given(board=tasks())
def test_duplicates_and_highest_id_as_the_loops_find_them(board: list[Any]) -> None:
    assert duplicate_ids(board) == duplicates_by_loop(board)
    if all(isinstance(t, dict) for t in board):
        assert highest_task_number(board) == highest_by_loop(board)
        assert finished_count(board) == sum(1 for t in board if t.get("status") in ("done", "cancelled"))
    else:  # a task that is not an object: the loop's error, as before
        assert outcome(lambda: finished_count(board))[:2] == ("raised", "AttributeError")


def check_board_by_loop(docs: Docs) -> None:
    """check_board as it was: the touched tasks found by a loop over all of them."""
    board = docs.board
    tasks = board.get("tasks")
    if not isinstance(tasks, list) or None in docs.touched:
        schemas.check("board", board, "board.json")
        return
    touched = [t for t in tasks if not isinstance(t, dict) or t.get("id") in docs.touched]
    if not schemas.is_valid("board", {**board, "tasks": touched}):
        schemas.check("board", board, "board.json")
    for i, tid in duplicates_by_loop(tasks)[:1]:
        raise SchemaRefused("board.json", f"tasks[{i}].id", f"duplicate id {tid}")


def segment(**change: Any) -> dict[str, Any]:
    ref = {"file": "archive/T-001_T-250_0123456789ab.json", "sha256": "0" * 64, "tasks": 250, "first": "T-001",
           "last": "T-250", "ranges": [[1, 250]]}
    return {**ref, **change}


ARCHIVE = st.sampled_from([None, [], [segment()], [segment(), segment(first="T-251")], [segment(sha256="x")],
                           [segment(tasks=250.0)], [segment(tasks=True)], [segment(ranges=[(1, 250)])],
                           [segment(ranges=((1, 250),))], [segment(extra=1)], ({"file": "x"},), [segment()] * 3])


@settings(max_examples=400, deadline=None)
@given(boards=st.lists(st.tuples(tasks(), ARCHIVE), min_size=1, max_size=3),
       touched=st.sets(st.sampled_from(["T-001", "T-002", "T-010", "T-006", "T-1000"]), max_size=3))
def test_check_board_refuses_what_the_loop_refused(boards: list[tuple[list[Any], Any]], touched: set[str]) -> None:
    """Untouched tasks were valid when written: check_board checks the top level, the touched tasks and the ids'
    uniqueness — the same verdict and message whether the touched ones are found by their ids or by the loop,
    and whether the archive's references are the ones a check before found valid (not checked again) or not
    (a tuple for a list, 250.0 or True for 250, a key too many: each its own verdict)."""
    for board, archive in boards:
        top: dict[str, Any] = {"schema_version": 2, "last_event": 0, "tasks": board}
        if archive is not None:
            top["archive"] = archive
        docs = Docs({}, "", top)
        docs.touched = set(touched)
        assert outcome(partial(check_board, docs)) == outcome(partial(check_board_by_loop, docs))


def test_a_duplicate_among_many_is_named_at_its_index() -> None:
    board = [{"id": f"T-{i:03d}", "kind": "build", "title": "t", "status": "todo", "owner": "builder",
              "acceptance": [], "depends_on": [], "created_at": "2026-01-01T00:00:00Z",
              "updated_at": "2026-01-01T00:00:00Z"} for i in range(1, 301)]
    board.append(dict(board[41]))
    docs = Docs({}, "", {"schema_version": 2, "last_event": 0, "tasks": board})
    docs.touched = {"T-042"}
    with pytest.raises(SchemaRefused, match=r"tasks\[300\]\.id.*duplicate id T-042"):
        check_board(docs)
    assert highest_task_number(board) == 300


ADDED_ID = st.one_of(st.from_regex(r"\AT-\d{3}\Z"), st.sampled_from(['T-0"1', "T-\\1", "T-\n2", "ü-€", "T-001", ""]))


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(st.tuples(st.lists(st.integers(0, 12), max_size=3), st.lists(ADDED_ID, max_size=2),
                                st.booleans()), min_size=1, max_size=6))
def test_a_splice_of_the_bytes_a_splice_made_is_encode_board(steps: list[tuple[list[int], list[str], bool]]) -> None:
    """splice_board remembers the layout of the bytes it made (their ids), found again by identity when the next
    write's board.json is those very bytes (store/sqliteboard.py keeps them): each write of a chain gives
    exactly encode_board's bytes — tasks touched, added with any id (one JSON escapes, one twice, one not first
    in its task), taken off — whatever the chain did before. And highest_task_number, which reads only the ids
    added after the ones it read last, gives the loop's answer at every step."""
    board: dict[str, Any] = {"schema_version": 2, "last_event": 0,
                             "tasks": [{"id": f"T-{i:03d}", "title": str(i)} for i in range(1, 6)]}
    raw = encode_board(board)
    for touch, added, id_last in steps:
        touched: set[str] = set()
        for i in touch:
            if i < len(board["tasks"]):
                board["tasks"][i]["title"] += "!"
                touched.add(board["tasks"][i]["id"])
        for tid in added:
            board["tasks"].append({"title": "new", "id": tid} if id_last else {"id": tid, "title": "new"})
            touched.add(tid)
        if len(touch) == 3 and board["tasks"]:  # a task taken off the board: nothing after it stays in place
            board["tasks"].pop(touch[0] % len(board["tasks"]))
        board["last_event"] += 1
        assert highest_task_number(board["tasks"]) == highest_by_loop(board["tasks"])  # what it read last helps
        spliced = splice_board(board, raw, touched)
        assert spliced is None or spliced == encode_board(board)
        raw = spliced if spliced is not None else encode_board(board)


def test_the_highest_id_after_the_last_one_changed_in_place() -> None:
    """The ids read last are a prefix of the next board's only line by line: T-005 taken off and T-0051 added
    in its place is a new line, not T-005 with a 1 after it."""
    tasks: list[dict[str, Any]] = [{"id": f"T-{i:03d}"} for i in range(1, 6)]
    assert highest_task_number(tasks) == 5
    tasks[-1] = {"id": "T-0051"}
    assert highest_task_number(tasks) == 51
    tasks.append({"id": "T-007"})
    assert highest_task_number(tasks) == 51
    tasks[:] = tasks[:2]
    assert highest_task_number(tasks) == 2
