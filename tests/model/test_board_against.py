"""model/boardfile.check_board_against (issue 33): a board that is not what wb last wrote here (a pull, a hand edit)
checked only where its tasks' text differs from the board wb last wrote and verified — accepting exactly what the
whole schema check accepts, and refusing in its words, whatever the two files' layouts: split or joined lines, a
line that is a part of a task, a task grafted from parts of verified ones, a verified file laid out otherwise."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import Refused
from workbench.model import schemas
from workbench.model.boardfile import check_board_against, encode_board, has_task_list, parse_board

TS = "2026-01-02T03:04:05.000Z"


def task(i: int, **extra: Any) -> dict[str, Any]:
    return {"id": f"T-{i:03d}", "kind": "build", "title": f"task {i}", "status": "todo", "owner": "builder",
            "acceptance": [], "depends_on": [], "created_at": TS, "updated_at": TS, **extra}


COMMENT = {"event": 3, "ts": TS, "actor": "human", "text": "a, comment"}
# valid variations of a task, and ones the schema refuses (a bool or a float where an integer goes: equal in Python
# to 1, not in the schema; a comment's object where a task goes; a review without what it reviews)
VALID = [{}, {"priority": 1}, {"labels": ["a", "b"]}, {"comments": [COMMENT, COMMENT]}, {"depends_on": ["T-001"]},
         {"kind": "review", "reviews": "T-001", "owner": "reviewer"}, {"description": "x, y\nz"}]
INVALID = [{"priority": True}, {"priority": 1.5}, {"status": "dozing"}, {"labels": ["a", "a"]}, {"kind": "review"},
           {"title": ""}, {"comments": [{"event": 0}]}, {"zz": 1}, {"id": "T-1"}]


def board(tasks: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    return {"schema_version": 2, "last_event": 7, **top, "tasks": tasks}


def outcome(check: Any, *args: Any) -> str | None:
    try:
        check(*args)
    except Refused as err:
        return str(err)
    return None


def whole(parsed: dict[str, Any]) -> str | None:
    return outcome(schemas.check, "board", parsed, "board.json")


def relaid(raw: bytes, ops: list[tuple[int, int]]) -> bytes:
    """`raw` with its lines split or joined at JSON separators: (0, k) splits at the k-th ", ", (1, k) joins the
    k-th line break between tasks, (2, k) swaps two task lines. The JSON may stop parsing: the caller skips it."""
    text = raw.decode("utf-8")
    for op, k in ops:
        if op == 0 and text.count(", "):
            at = [i for i in range(len(text)) if text.startswith(", ", i)][k % text.count(", ")]
            text = text[:at] + ",\n    " + text[at + 2:]
        elif op == 1 and text.count(",\n    "):
            at = [i for i in range(len(text)) if text.startswith(",\n    ", i)][k % text.count(",\n    ")]
            text = text[:at] + ", " + text[at + 6:]
        elif op == 2:
            lines = text.split("\n")
            middle = [i for i, line in enumerate(lines) if line.startswith("    {") and line.endswith(",")]
            if len(middle) >= 2:
                a, b = middle[k % len(middle)], middle[(k + 1) % len(middle)]
                lines[a], lines[b] = lines[b], lines[a]
                text = "\n".join(lines)
    return text.encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(1, 6))
def test_it_refuses_exactly_what_the_whole_check_refuses(data: st.DataObject, n: int) -> None:
    verified_tasks = [task(i, **data.draw(st.sampled_from(VALID))) for i in range(1, n + 1)]
    verified = board(verified_tasks)
    assert whole(verified) is None
    verified_raw = relaid(encode_board(verified), data.draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 40)),
                                                                      max_size=2)))
    try:
        assert parse_board(verified_raw) == verified  # a layout that parses to the same board: wb verified it
    except (Refused, AssertionError):
        verified_raw = encode_board(verified)
    pulled_tasks = copy.deepcopy(verified_tasks)
    for _ in range(data.draw(st.integers(0, 3))):
        i = data.draw(st.integers(0, len(pulled_tasks)))
        change = data.draw(st.sampled_from(VALID + INVALID + ["drop", "comment as task", "new"]))
        if change == "drop" and i < len(pulled_tasks):
            del pulled_tasks[i]
        elif change == "comment as task":
            pulled_tasks.insert(i, dict(COMMENT))
        elif change == "new" or i == len(pulled_tasks):
            pulled_tasks.insert(i, task(100 + i))
        elif isinstance(change, dict):
            pulled_tasks[i] = {**pulled_tasks[i], **change}
    top = data.draw(st.sampled_from([{}, {"last_event": 9}, {"last_event": -1}, {"schema_version": 3}, {"zz": 0}]))
    raw = relaid(encode_board(board(pulled_tasks, **top)),
                 data.draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 40)), max_size=3)))
    try:
        parsed = parse_board(raw)
    except Refused:
        return  # what no load gets past
    if not has_task_list(parsed):
        return  # refused before the schema check (check_board_shape)
    assert outcome(check_board_against, parsed, raw, verified_raw) == whole(parsed)
    assert outcome(check_board_against, parsed, raw, None) == whole(parsed)


def test_a_part_of_a_verified_task_is_not_a_verified_task() -> None:
    """A verified file laid out with a task's comment on a line of its own (it parses alone, as an object): that
    line, taken for a task in a pulled board, is checked — and refused — not taken for one of the verified tasks."""
    verified = board([task(1, comments=[COMMENT]), task(2)])
    verified_raw = encode_board(verified).replace(b'"comments": [', b'"comments": [\n    ')
    assert parse_board(verified_raw) == verified
    comment_line = json.dumps(COMMENT, ensure_ascii=False).encode()
    assert b"\n    " + comment_line in verified_raw
    pulled = board([COMMENT, task(2)])
    raw = encode_board(pulled)
    assert comment_line in raw
    parsed = parse_board(raw)
    refused = outcome(check_board_against, parsed, raw, verified_raw)
    assert refused is not None and refused == whole(parsed)


def test_a_pulled_board_of_verified_tasks_and_one_new_is_checked_by_that_one() -> None:
    """The usual pull: the other clone's task added. Its bad value is found, in the whole check's words; the
    verified tasks are not checked again (a verified task is taken as valid: shown by a cache that holds one
    the schema refuses, which a whole check would find)."""
    ok = [task(i) for i in range(1, 40)]
    verified_raw = encode_board(board(ok))
    added = task(40, priority=9)
    parsed = board(ok + [added], last_event=9)
    refused = outcome(check_board_against, parsed, encode_board(parsed), verified_raw)
    assert refused is not None and refused == whole(parsed) and "priority" in refused
    fine = board(ok + [task(40)], last_event=9)
    assert outcome(check_board_against, fine, encode_board(fine), verified_raw) is None
    # a cache is what wb verified: were it not (here made by hand), the check would trust its tasks' text
    trusted = board([task(1, status="dozing")])
    pulled = board([task(1, status="dozing"), task(2)], last_event=9)
    assert outcome(check_board_against, pulled, encode_board(pulled), encode_board(trusted)) is None
    assert whole(pulled) is not None


def test_the_schema_checks_each_task_on_its_own() -> None:
    """What check_board_against stands on: the board schema has no rule across tasks (no uniqueItems, contains,
    prefixItems, min/maxItems on `tasks`, no keyword at the top level but types, required keys and properties),
    so a board is valid when its top level with any subset of its tasks is, and each task is."""
    schema = schemas.load_schema("board")
    assert set(schema) <= {"$schema", "$id", "title", "description", "type", "required", "additionalProperties",
                           "properties", "$defs"}
    assert set(schema["properties"]["tasks"]) == {"type", "items"}
    assert set(schema["properties"]["tasks"]["items"]) == {"oneOf"}
    assert all(set(branch) == {"$ref"} for branch in schema["properties"]["tasks"]["items"]["oneOf"])


def test_a_task_hidden_by_a_layout_that_moves_the_lines_against_the_tasks_is_checked() -> None:
    """Two tasks joined on one line and one split over two: as many lines as tasks, but not one task a line. A
    check that took the n-th line for the n-th task would skip the invalid one (its index holding a verified
    task's line); each line that is not a verified task's must parse alone, so the board is checked whole."""
    a, c = task(1), task(3)
    pulled = board([a, task(2, status="dozing"), c, task(4)], last_event=9)
    raw = encode_board(pulled).decode()
    raw = raw.replace(",\n    ", ", ", 1)  # the first two tasks on one line
    d_line = raw.index('{"id": "T-004"')
    raw = raw[:d_line] + raw[d_line:].replace(", ", ",\n    ", 1)  # the last one over two
    parsed = parse_board(raw.encode())
    assert parsed == pulled and raw.count("\n    ") == len(pulled["tasks"])
    verified_raw = encode_board(board([a, c]))
    refused = outcome(check_board_against, parsed, raw.encode(), verified_raw)
    assert refused is not None and refused == whole(parsed) and "dozing" in refused


def test_a_task_grafted_from_parts_of_verified_tasks_is_checked() -> None:
    """A verified file laid out with tasks split over lines: its lines are parts of tasks, not tasks. A pulled
    board whose task is a review task's first part and a build task's second part (a review that reviews nothing)
    is refused, as the whole check refuses it."""
    a = task(1)
    b = task(2, kind="review", reviews="T-001", owner="reviewer")
    c, d = task(3), task(4)
    b = {"id": b["id"], "kind": "review", "reviews": b["reviews"], **{k: v for k, v in b.items()
                                                                         if k not in ("id", "kind", "reviews")}}

    def split_after_kind(t: dict[str, Any]) -> str:
        text = json.dumps(t, ensure_ascii=False)
        at = text.index(", ", text.index('"kind"'))
        return text[:at] + ",\n    " + text[at + 2:]

    def laid(lines: list[str], last_event: int) -> bytes:
        head = f'{{\n  "schema_version": 2,\n  "last_event": {last_event},\n  "tasks": [\n    '
        return (head + ",\n    ".join(lines) + "\n  ]\n}\n").encode()

    c_d = json.dumps(c, ensure_ascii=False) + ", " + json.dumps(d, ensure_ascii=False)
    verified_raw = laid([split_after_kind(a), split_after_kind(b), c_d], 7)
    assert parse_board(verified_raw) == board([a, b, c, d]) and whole(board([a, b, c, d])) is None
    b1 = split_after_kind(b).split(",\n    ")[0]
    a2 = split_after_kind(a).split(",\n    ")[1]
    raw = laid([b1, a2, c_d], 9)
    parsed = parse_board(raw)
    assert len(parsed["tasks"]) == 3
    refused = outcome(check_board_against, parsed, raw, verified_raw)
    assert refused is not None and refused == whole(parsed)


def test_a_value_equal_in_python_but_not_in_json_is_checked() -> None:
    """true == 1 in Python, not in the schema: a verified task with priority 1, pulled with priority true (or 1 as
    text), is another text, checked and refused; 1.0, another text too, is an integer to the schema, as to the whole
    check."""
    verified_raw = encode_board(board([task(1, priority=1), task(2)]))
    for bad in (True, "1", 1.0):
        pulled = board([task(1, priority=bad), task(2)], last_event=9)
        refused = outcome(check_board_against, pulled, encode_board(pulled), verified_raw)
        assert refused == whole(pulled) and (refused is None) == (bad == 1.0 and type(bad) is float), bad
