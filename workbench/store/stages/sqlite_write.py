"""Stage `write` on SQLite: inside the open database transaction, the events inserted, both snapshots replaced
(state.md's frontmatter and decision log apart, so a reader parses no YAML) and the call records inserted;
the new files of a `create` and the board's archive segments are files, written before the COMMIT."""

from __future__ import annotations

from workbench import faults
from workbench.store import archive
from workbench.store.atomic import write_workbench_file
from workbench.store.sqliteerrors import os_errors

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    from workbench.model import statefile

    loaded = tx.loaded
    docs = tx.docs
    sqlite: Any = tx.wb  # store/sqlitedb.SqliteWorkbench
    storage = sqlite.storage
    faults.point("before_event_append")
    for rel, data in tx.new_files.items():
        if not (tx.wb.paths.wb / rel).exists():
            write_workbench_file(tx.wb.paths.wb, rel, data)
    state_raw = statefile.render_fast(loaded.state_raw, loaded.file_state, docs.state, docs.body) \
        if loaded.state_node is None else None
    if state_raw is None:
        state_raw = statefile.render(loaded.state_node, docs.state, docs.body)
    # the board's archive segments: content-addressed files in .workbench/archive/, written before the COMMIT
    # of the board that references them (a kill between leaves a segment no board names, which the next
    # write that seals it writes again, byte for byte)
    archive.write_sealed(tx.wb.paths, docs)
    board_raw = docs.encode_board()
    with os_errors(storage.path):  # a full disk: one line (exit 1), rolled back, as on files
        tx.wb.log.append(tx.events, loaded.tail)
        storage.put_snapshots(state_raw, board_raw, (docs.state, docs.body), body_changed=docs.body != tx.body0)
        if tx.calls:
            storage.append_calls(tx.calls)
    storage.kept.written(docs)  # the board, kept for this connection's next load once the COMMIT returns
    faults.point("sqlite_before_commit")
