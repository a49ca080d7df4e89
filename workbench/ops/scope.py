"""The scope contract against the repository: what a task changed since it started, judged by its scope
(`model/scope.py`), for `wb task done`, and the agent hook's question "may the agent write this path now?"."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.git import changes
from workbench.model import scope as scopes
from workbench.model.reducer import find_task
from workbench.store.workbench import Workbench

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

DIRTY_AT_START_MAX = 2000  # paths: a tree dirtier than this at `task start` is not recorded (all count)


def dirty_at_start(root: Path) -> dict[str, str] | None:
    """What `task.start` records of the work tree already dirty then ({path: content digest}), so `task done`
    does not count the user's edits made before the task as the task's; None past DIRTY_AT_START_MAX paths."""
    paths = changes.dirty(root)
    return changes.path_digests(root, paths) if len(paths) <= DIRTY_AT_START_MAX else None


def task_changes(root: Path, task: dict[str, Any], before: dict[str, str] | None = None) -> list[str]:
    """The paths outside `.workbench/` a task changed: the commits since its `task.start` (the HEAD it recorded)
    and the work tree's uncommitted changes — less a path dirty already when it started (`before`, recorded in
    its task.start) and still exactly as it was then."""
    committed = changes.committed_since(root, task.get("start_head"))
    dirty = changes.dirty(root)
    if before:
        now = changes.path_digests(root, [p for p in dirty if p in before])
        dirty = [p for p in dirty if p not in before or now.get(p) != before[p]]
    return sorted(set(committed) | set(dirty))


def verdict(root: Path, task: dict[str, Any], before: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The scope verdict on a task's changes ({base, paths, forbidden, findings}), or None without a scope.
    `before`: the tree dirty when the task started (see `task_changes`)."""
    scope = task.get("scope")
    if scopes.is_empty(scope):
        return None
    paths = task_changes(root, task, before)
    result = scopes.evaluate(scope, paths)
    return {"base": task.get("start_head"), "changed": len(paths), **result}


def forbidden_for_active_task(wb: Workbench, path: str | os.PathLike[str]) -> str | None:
    """Why the agent may not write `path` now (it lies under a forbidden glob of the active task's scope), or
    None. `path` may be absolute or relative to the repository root; for the agent hooks' PreToolUse. Reads
    the snapshots only: no lock, no git."""
    docs = wb.load(detect_human=False, need_body=False).docs
    active = docs.state.get("active_task_id")
    task = find_task(docs.board, active) if active else None
    if task is None or task.get("status") != "in_progress":
        return None
    forbidden = list((task.get("scope") or {}).get("forbidden") or [])
    if not forbidden:
        return None
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            rel = candidate.resolve().relative_to(wb.root.resolve()).as_posix()
        except ValueError:
            return None  # outside the repository: not the scope's to judge
    else:
        rel = Path(os.path.normpath(candidate)).as_posix()
    glob = scopes.first_match(forbidden, rel)
    if glob is None:
        return None
    return (f"{rel} is forbidden by the scope of {task['id']} ({glob}); to change the scope, ask a person to "
            f"run: wb task set {task['id']} scope=JSON")
