"""Stage `lock` on SQLite: BEGIN IMMEDIATE (store/sqlitedb.SqliteLock) is the workbench lock, held to the
COMMIT."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.create:
        tx.wb.paths.wb.mkdir(exist_ok=True)
    tx.lock.acquire()
    tx.held = True
