"""Stage `adopt pending`: acknowledged events the work tree lost (or that waited for git's operation to end),
already folded into the documents by the load, become this write's first events, with the files they name."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    pending = tx.loaded.pending
    if not pending or tx.deferred:
        return
    tx.adopted = len(pending)
    tx.events.extend(pending)
    tx.board_changed = True
    for rel, data in tx.wb.pending.files().items():  # the files they name: the handoff, an output
        tx.put_files.setdefault(rel, data)
