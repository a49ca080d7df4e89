"""Stage `catch up` on SQLite: a write with no events writes the new files a `create` names and the snapshots
the load rebuilt, commits, and ends there."""

from __future__ import annotations

from workbench.store.atomic import write_workbench_file
from workbench.store.stages import STOP

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> str | None:
    if tx.events or tx.dry:
        return None
    for rel, data in tx.new_files.items():
        if not (tx.wb.paths.wb / rel).exists():
            write_workbench_file(tx.wb.paths.wb, rel, data)
    if tx.loaded.rebuilt:
        sqlite: Any = tx.wb  # store/sqlitedb.SqliteWorkbench
        sqlite.storage.put_snapshots(tx.loaded.state_raw, tx.docs.encode_board())
    lock: Any = tx.lock  # store/sqlitedb.SqliteLock: COMMIT is where the write is acknowledged
    lock.commit()
    return STOP
