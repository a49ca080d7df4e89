"""Stage `snapshot`: the archive segments the events sealed, then board.json and state.md written atomically
and their caches refreshed (store/snapshots.py); the log's batch (stage `append`) is fsynced with their temp
files, before they are renamed in. A snapshot a person saved in the last moment is left as saved
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
    appended, tx.appended = tx.appended, None  # the log's batch, fsynced with the temp files (stage `append`)
    try:
        tx.kept = write_snapshots(tx, loaded, appended)
    except OSError as err:  # disk full after the append: the change is in the log, the snapshots catch up
        if appended is not None:
            if appended.dropped:
                raise  # the log's fsync failed with the temp files': the batch was taken back, nothing recorded
            appended.sync()  # failed before that fsync: the batch made durable on its own (or taken back)
        raise SnapshotsBehind(err) from None
    except BaseException:
        if appended is not None and not appended.dropped:
            appended.sync()
        raise
    return None
