"""Stage `apply`: the caller's block. Each `tx.emit()` folds its event into the documents at once
(model/reducer.py), so later logic sees it; the caller's own events follow the ones the load made."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    tx.begun = len(tx.events)
