"""The board a write committed, kept by its process for the next load (issue 33), on either backend: what is
kept is the process's own, never an object the write's caller may hold.

A load parses board.json whole (~0.5 ms at 500 tasks, and the garbage collector's passes over every dict and
list it made). A process that writes again — a long-lived `Bench`, the harness, `wb serve`, `wb mcp` — would
parse the very bytes it just wrote and checked. So a write keeps the board it wrote with its bytes, and the next
load takes it instead of parsing when board.json holds exactly those bytes still: equal bytes, equal board,
whoever wrote them since. Taken once: a load hands the dict to its transaction or reader, which may change it,
and the next load parses unless a write kept one again.

`own_copy`: the top level (with the archive's references) and every task the write changed are read back from
their JSON, so a task a verb returned (and its lists, which the event's payload shares) is not in it; the others
are the dicts a parse made, which the write's events did not change (a change is an event, and an event marks
its task touched, model/reducer.py). A write that re-encoded the whole board (`touched` holds None) keeps
nothing.
"""

from __future__ import annotations

import json

from workbench.model.boardfile import task_ids, unique

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

_TASKS_LINE = b'  "tasks": ['  # the line of model/boardfile.encode_board's layout after which the task lines come


def own_copy(board: dict[str, Any], touched: set[str], raw: bytes) -> dict[str, Any]:
    """`board` with its top level and the `touched` tasks read back from their JSON (`raw`, what was written):
    no object a caller holds."""
    head = raw.find(b"\n" + _TASKS_LINE + b"\n")
    own: dict[str, Any] = json.loads(raw[:head] + b'\n  "tasks": []\n}') if head > 0 else \
        json.loads(json.dumps({k: v for k, v in board.items() if k != "tasks"}, ensure_ascii=False))
    tasks = own["tasks"] = list(board["tasks"])
    if len(touched) <= 8:  # a write's usual few: looked for from the end, where new and recent tasks are
        positions = [i for tid in touched for i in _last_index(tasks, tid)]
    else:
        ids = task_ids(tasks)
        where = dict(zip(ids, range(len(ids)), strict=True)) if ids is not None and unique(ids) else None
        positions = [where[tid] for tid in touched if tid in where] if where is not None else \
            [i for i, t in enumerate(tasks) if not isinstance(t, dict) or t.get("id") in touched]
    for i in positions:
        tasks[i] = json.loads(json.dumps(tasks[i], ensure_ascii=False))
    return own


def _last_index(tasks: list[Any], tid: str) -> list[int]:
    """[the index of the last task with id `tid`], or [] (a committed board holds each id once)."""
    for i in range(len(tasks) - 1, -1, -1):
        task = tasks[i]
        if isinstance(task, dict) and task.get("id") == tid:
            return [i]
    return []
