"""Stage `revive pending`: the pending journal (store/pending.py) as an input — acknowledged events the user's
git took back from the branch just after wb committed them go back into the journal, to be written again."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if not tx.create and not tx.dry:
        tx.revived = tx.wb.pending.revive(tx.wb.log, tx.wb.git)
