"""What `wb task list` shows, without typer: the typer command (cli/task.py) and main.py's fast path (through
cli/writes.FAST) both run `run` below. Read-only, and linear in the board (issue 33): what each task waits on is
read from one map of statuses, and only for the table (`--json` prints the tasks as they are)."""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from pathlib import Path

from workbench.cli import output

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def run(chdir: Path | None, status: str | None = None, ready: bool = False, blocked: bool = False,
        label: str | None = None, priority: str | None = None, parent: str | None = None,
        assignee: str | None = None, search: str | None = None, tree: bool = False, limit: int | None = None,
        all_: bool = False, json_: bool = False) -> int:
    from workbench.model import proof
    from workbench.model.archive import archived_count
    from workbench.model.dependencies import task_statuses, unmet_dependencies
    from workbench.ops import taskquery
    from workbench.store import opening

    wb = opening.discover(chdir)
    # once: a load of a 2,000-task board is a third of the run; the decision log is not read (nor hashed)
    docs = wb.load(detect_human=False, need_body=False).docs
    board = docs.board
    tasks = taskquery.tasks_of(board, status)
    if all_:
        tasks = tasks + taskquery.list_archived(wb, status, docs)
    pri = None
    if priority is not None:
        from workbench.cli.values import priority_of

        pri = priority_of(priority)
    where = {"ready": ready, "blocked": blocked, "label": label, "priority": pri,
             "parent": parent, "assignee": assignee, "search": search}
    tasks = taskquery.filter_tasks(board, tasks, {k: v for k, v in where.items() if v is not None and v is not False})
    depth: dict[str, int] = {}
    if tree:
        tasks, depth = _as_tree(tasks)
    more = len(tasks) - limit if limit is not None and len(tasks) > limit else 0
    if more:
        tasks = tasks[:limit]
    if json_:  # the tasks as they are: what each waits on is the table's column, never printed here
        whole = docs.tasks_json(tasks)  # the whole board as read: board.json's lines, copied (issue 33)
        if whole is not None:
            output.emit_json_bytes(whole)
        else:
            output.emit_json_items(tasks, docs.task_json(tasks))  # board.json's lines, as read, where they stand
        return 0
    count = 0 if all_ else archived_count(board)
    archived_note = f"and {count} archived task(s) not shown (wb task list --all)" if count else ""
    if not tasks:
        output.say("no tasks" + (f" with status {status}" if status else "") + " (add one: wb task add TITLE)")
        if archived_note:
            output.say(archived_note)
        return 0
    statuses = task_statuses(board["tasks"])  # once: a map per task made a 2,000-task list quadratic
    mark = proof.mark
    # a column at a time, each read by C where a cell is a task's field as it is; a pass over the tasks for the
    # two that are not: the most of a 2,000-task list's own work (issue 33)
    shown_status = list(map(itemgetter("status"), tasks))
    waits = ["-"] * len(tasks)
    for i, t in enumerate(tasks):
        if shown_status[i] == "done":
            shown_status[i] += mark(t)
        if t.get("archived"):
            shown_status[i] += " (archived)"
        if t.get("depends_on"):
            unmet = unmet_dependencies(board, t, statuses=statuses)
            waits[i] = ", ".join([f"{d} ({s})" for d, s in unmet]) if unmet else "met"
    ids = list(map(itemgetter("id"), tasks))
    if depth:
        ids = ["  " * depth.get(tid, 0) + tid for tid in ids]
    priorities = list(map(str, map(dict.get, tasks, repeat("priority"), repeat(2))))
    columns = [ids, shown_status, priorities, list(map(itemgetter("kind"), tasks)),
               list(map(itemgetter("owner"), tasks)), waits, list(map(itemgetter("title"), tasks))]
    output.table_columns(["ID", "STATUS", "PRI", "KIND", "OWNER", "WAITS ON", "TITLE"], columns)
    if more:
        output.say(f"{more} more (wb task list --limit N, or --json)")
    if archived_note:
        output.say(archived_note)
    return 0


def _as_tree(tasks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The tasks with each one's children under it (board order among siblings), and each one's depth; a task
    whose parent is not among `tasks` is a root."""
    ids = {t["id"] for t in tasks}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for t in tasks:
        children.setdefault(t.get("parent") if t.get("parent") in ids else None, []).append(t)
    out: list[dict[str, Any]] = []
    depth: dict[str, int] = {}

    def walk(node: str | None, level: int) -> None:
        for t in children.get(node, []):
            if t["id"] in depth:
                continue
            depth[t["id"]] = level
            out.append(t)
            walk(t["id"], level + 1)

    walk(None, 0)
    return out, depth
