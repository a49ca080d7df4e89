"""Stage `load` on SQLite: the documents from the snapshots table and the events after them
(store/sqlitedb.SqliteWorkbench.load); no hand edits, no pending journal, never deferred."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    tx.board_seen = None
    tx.loaded = loaded = tx.wb.load(create=tx.create)
    tx.body0 = loaded.docs.body  # the decision log as loaded: rewritten only when it changed
    tx.events = []
    tx.adopted = 0
    tx.agent_board_changed = False
    tx.board_changed = bool(loaded.rebuilt)
    tx.deferred = None
    tx.refused = []
    tx.config_seen = False
    tx.spool_size = 0
