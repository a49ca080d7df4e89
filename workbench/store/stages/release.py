"""Stage `release`: the old snapshots the write displaced are gone (store/atomic.py's `discard`), and the
workbench lock is let go (on SQLite, whatever was not committed rolls back) — after
the write, or after whatever stage failed."""

from __future__ import annotations

from workbench.store.atomic import settle_discards

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    settle_discards()  # the old snapshots the write displaced, unlinked meanwhile: gone before the lock is
    if tx.held:
        tx.held = False
        tx.lock.release()
