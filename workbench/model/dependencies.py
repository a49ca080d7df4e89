"""What a task waits on: the dependencies of a task that are not done (issue 22), read from the board and its
archive's references. The rule `wb task start|done` enforce (ops/acceptance.unmet_refusal words the refusal),
the WAITS ON column of `wb task list`, the board's cards and prime's waiting tasks all read it here.

A caller asking for many tasks builds the status map once (`task_statuses`) and passes it: a map per task made
a 2,000-task list quadratic (issue 33)."""

from __future__ import annotations

from workbench.model.archive import archived_done, holding, refs

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def task_statuses(tasks: list[dict[str, Any]]) -> dict[Any, str]:
    """Each task's status by id (absent: todo)."""
    return {t.get("id"): t.get("status", "todo") for t in tasks}


def unmet_dependencies(board: dict[str, Any] | None, task: dict[str, Any],
                       tasks: list[dict[str, Any]] | None = None, *,
                       statuses: dict[Any, str] | None = None) -> list[tuple[str, str]]:
    """The dependencies of `task` that are not done, each with its status: a cancelled one counts as unmet
    (only a person's `--force` says it is satisfied); one done and archived is met. The statuses are `statuses`
    when given, else those of `tasks` (default: the board's); with no `board`, nothing counts as archived."""
    deps = task.get("depends_on")
    if not deps:  # most tasks: no map of every task's status
        return []
    if statuses is None:
        statuses = task_statuses(tasks if tasks is not None else (board or {}).get("tasks", []))
    # most boards keep no archive: nothing to look up per dependency
    archive = board if board and board.get("archive") and refs(board) else None
    unmet = []
    for dep in deps:
        status = statuses.get(dep)
        if status == "done" or (archive is not None and archived_done(archive, dep)):
            continue
        unmet.append((dep, status or ("cancelled" if archive is not None and holding(archive, dep) else "missing")))
    return unmet
