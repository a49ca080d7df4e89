"""Stage `warnings`: what the write's caller reports besides its own outcome — an agent's board.json edits
refused, pending events set aside, what committing a config.yaml edit on its own warned."""

from __future__ import annotations

from workbench.git.repo import CommitOutcome
from workbench.store import humanedit

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.failed is not None:
        return
    if tx.refused and tx.outcome is not None:
        tx.outcome.warnings.extend(humanedit.refused_lines(tx.refused))
    if tx.aside is not None:
        if tx.outcome is None:
            tx.outcome = CommitOutcome()
        tx.outcome.warnings.append(tx.aside)
    if tx.edit_warnings:
        if tx.outcome is None:
            tx.outcome = CommitOutcome()
        tx.outcome.warnings[:0] = tx.edit_warnings
