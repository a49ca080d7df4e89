"""Stage `load`: the documents as the snapshots and the events after them fold (store/workbench.py's
`load`, the pending journal's events and the hand edits found with them), and whether the work tree is
written now or its git is mid-operation (deferred: the pending journal holds the write)."""

from __future__ import annotations

from workbench.store.atomic import read_or_none

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    # board.json as it was before the load read it: a save after this moment is seen again before the write
    # (state.md's bytes the load keeps itself)
    tx.board_seen = read_or_none(tx.wb.paths.board)
    tx.loaded = loaded = tx.wb.load(create=tx.create, thorough=True)
    tx.events = []
    tx.adopted = 0
    tx.agent_board_changed = False
    tx.board_changed = loaded.replayed > 0 or "board.json" in loaded.rebuilt or loaded.renumbered
    tx.deferred = tx.wb.deferred()
