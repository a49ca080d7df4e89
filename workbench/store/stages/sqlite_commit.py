"""Stage `commit` on SQLite: COMMIT — durable once it returns (WAL, synchronous=FULL): the write is
acknowledged. No git commit: a SQLite workbench is not committed file by file."""

from __future__ import annotations

from workbench import faults
from workbench.git.repo import CommitOutcome

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    lock: Any = tx.lock  # store/sqlitedb.SqliteLock
    lock.commit()
    sqlite: Any = tx.wb  # store/sqlitedb.SqliteWorkbench
    sqlite.storage.kept.committed(sqlite.storage.conn)
    faults.point("sqlite_after_commit")
    tx.outcome = CommitOutcome()
