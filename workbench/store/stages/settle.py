"""Stage `settle`: once committed, the pending journal lets go of the batch (store/pending.py); had the user's
git moved the log meanwhile, it keeps it and the next load adopts it."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    outcome = tx.outcome
    if not tx.git_commit or tx.left or outcome is None or outcome.skipped is not None or not tx.log_ends_with_ours():
        return
    on_branch = not tx.wb.config["git"].get("ref") and outcome.sha is not None
    tx.wb.pending.settle(tx.wb.git.symbolic_head() if on_branch else None, outcome.sha)
