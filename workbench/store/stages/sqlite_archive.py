"""Stage `archive` on SQLite: finished tasks past the threshold move to a sealed segment, as on files
(store/archive.py) — in a dry run too, whose events the rollback drops."""

from __future__ import annotations

from workbench.store import archive

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.board_changed:
        archive.seal_due(tx)
