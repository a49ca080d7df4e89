"""Stage `snapshot`: the archive segments the events sealed, then board.json and state.md written atomically
and their caches refreshed (store/snapshots.py). A snapshot a person saved in the last moment is left as saved
(`tx.kept`). A write with no events ends here, having caught up snapshots a crash left behind the log."""

from __future__ import annotations

from workbench.store.snapshots import SnapshotsBehind, write_snapshots
from workbench.store.stages import STOP

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> str | None:
    loaded = tx.loaded  # a hand save since the load made it load again
    if not tx.events:
        if loaded.replayed or loaded.rebuilt or tx.rebuild:
            write_snapshots(tx, loaded)  # a crash left the snapshots behind the log: catch them up
        return STOP
    try:
        tx.kept = write_snapshots(tx, loaded)
    except OSError as err:  # disk full after the append: the change is in the log, the snapshots catch up
        raise SnapshotsBehind(err) from None
    return None
