"""Opening a workbench in whichever backend keeps it (store/backend.py): the files in git (store/workbench.py)
or SQLite (store/sqlitedb.py), as config.yaml's `storage:` says; outside any git repository, the nearest
`.workbench/` kept in SQLite (`wb init --no-git`)."""

from __future__ import annotations

from pathlib import Path

from workbench.errors import NotFound
from workbench.git.discovery import find_worktree
from workbench.model.layout import WB_DIR
from workbench.store import backend
from workbench.store.workbench import Workbench


def discover(start: Path | None = None) -> Workbench:
    """`Workbench.discover`, backend-aware: one small read of config.yaml more for a files workbench."""
    here = start or Path.cwd()
    try:
        root = find_worktree(here)
    except NotFound:  # outside any repository: a workbench kept in SQLite without git
        found = backend.find_nogit(here)
        if found is None:
            raise
        from workbench.store import sqlitedb

        return sqlitedb.SqliteWorkbench(found)
    if backend.is_sqlite_config(root / WB_DIR / "config.yaml"):
        from workbench.store import sqlitedb

        return sqlitedb.SqliteWorkbench(root)
    return Workbench.discover(start)
