"""Stage `archive`: finished tasks past the threshold move to a sealed segment (store/archive.py): the
`board.archive` events the board makes due, emitted before validation."""

from __future__ import annotations

from workbench.store import archive

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.board_changed and tx.events and not tx.dry:
        archive.seal_due(tx)
