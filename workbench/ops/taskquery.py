"""Which tasks a list shows (issue 22): the filters of `wb task list`, MCP's task_list and `Bench.list_tasks`,
in one place. Read-only, and linear in the board: the status map a `blocked` filter reads is built once (issue
33), and nothing here imports the write path, so `wb task list` answers without it."""

from __future__ import annotations

from collections.abc import Mapping

from workbench.errors import UsageError
from workbench.model.dependencies import task_statuses, unmet_dependencies

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.model.reducer import Docs
    from workbench.store.workbench import Workbench

TASK_FILTERS = ("ready", "blocked", "label", "priority", "parent", "assignee", "search")


def filter_tasks(board: dict[str, Any], tasks: list[dict[str, Any]], where: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tasks that pass every filter of `where` (issue 22; `wb task list` and MCP's task_list): `ready`
    (what `wb task next` picks from: ops/status.ready_tasks), `blocked` (blocked, or todo waiting on a
    dependency), `label`, `priority` (absent: 2), `parent`, `assignee`, `search` (title, description, labels,
    comments; any case)."""
    bad = [k for k in where if k not in TASK_FILTERS]
    if bad:
        raise UsageError(f"no task filter {', '.join(bad)}; filters: {', '.join(TASK_FILTERS)}")
    pri = where.get("priority")
    if pri is not None and (not isinstance(pri, int) or isinstance(pri, bool) or not 0 <= pri <= 4):
        raise UsageError(f"priority {pri!r}: one of 0 (highest), 1, 2 (the default), 3, 4")
    if not where:
        return list(tasks)
    needle = str(where["search"]).casefold() if where.get("search") else None
    ready: set[Any] = set()
    if where.get("ready"):
        from workbench.ops.status import ready_tasks  # the one rule of what can be worked on

        ready = {t.get("id") for t in ready_tasks(board["tasks"], board)}
    statuses = task_statuses(board["tasks"]) if where.get("blocked") else {}

    def keep(t: dict[str, Any]) -> bool:
        todo = t.get("status") == "todo"
        waits = bool(unmet_dependencies(board, t, statuses=statuses)) if where.get("blocked") else False
        return not ((where.get("ready") and t.get("id") not in ready)
                    or (where.get("blocked") and not (t.get("status") == "blocked" or (todo and waits)))
                    or (where.get("label") is not None and where["label"] not in (t.get("labels") or []))
                    or (pri is not None and t.get("priority", 2) != pri)
                    or (where.get("parent") is not None and t.get("parent") != where["parent"])
                    or (where.get("assignee") is not None and t.get("assignee") != where["assignee"])
                    or (needle is not None and needle not in _haystack(t)))

    return [t for t in tasks if keep(t)]


def _haystack(task: dict[str, Any]) -> str:
    parts = [task.get("title", ""), task.get("description", ""), *(task.get("labels") or []),
             *(c.get("text", "") for c in task.get("comments") or [] if isinstance(c, dict))]
    return "\n".join(str(p) for p in parts).casefold()


def list_tasks(wb: Workbench, status: str | None = None,
               where: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """`Bench.list_tasks`: the board's tasks in board order, or only those with `status` (a UsageError for one
    that is not a status) and passing `where`."""
    return tasks_of(wb.load(detect_human=False).docs.board, status, where)


def tasks_of(board: dict[str, Any], status: str | None = None,
             where: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """`list_tasks` of a board already loaded."""
    _check_status(status)
    tasks = [t for t in board["tasks"] if status is None or t.get("status") == status]
    return filter_tasks(board, tasks, where) if where else tasks


def list_archived(wb: Workbench, status: str | None = None, docs: Docs | None = None) -> list[dict[str, Any]]:
    """`Bench.list_archived`: the archive's tasks, oldest segment first, each with `archived` (its segment);
    `docs`: the workbench as already loaded."""
    from workbench.store.archive import all_archived

    _check_status(status)
    tasks = all_archived(wb.paths, docs or wb.load(detect_human=False).docs)
    return [t for t in tasks if status is None or t.get("status") == status]


def _check_status(status: str | None) -> None:
    if status is None:
        return
    from workbench.ops.status import STATUSES  # imported here: a list without --status needs nothing of it

    if status not in STATUSES:
        raise UsageError(f"status {status!r}: one of {', '.join(STATUSES)}")
