"""Stage `keep refusal`: the caller's write failed (`wb task done` whose acceptance failed, or changed while it
ran): the refusal of the agent's edit its load found is recorded and board.json restored all the same, alone."""

from __future__ import annotations

from workbench.store import spool

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if not (tx.refused and isinstance(tx.failed, Exception)):
        return
    try:
        tx.begin()  # from the files again: the failed write's own events are gone
        tx.summary, tx.calls, tx.put_files, tx.new_files = None, [], {}, {}  # and what it would write
        if tx.refused:
            tx.commit()
            spool.settle(tx)
    except Exception:  # noqa: BLE001 - the caller's error is the one to report; the next write tries again
        pass
