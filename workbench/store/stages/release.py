"""Stage `release`: the workbench lock is let go (on SQLite, whatever was not committed rolls back) — after
the write, or after whatever stage failed."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.held:
        tx.held = False
        tx.lock.release()
