"""Writing board.json and state.md at the end of a write (store/pipeline.py's `snapshot` stage, and the
catch-up of a write with no events): each atomically, against the bytes the load read, so a person's save in
the last moment is left as saved; and the caches of both."""

from __future__ import annotations

from pathlib import Path

from workbench import faults
from workbench.errors import WorkbenchError
from workbench.store import archive, caches
from workbench.store.atomic import FileChanged, Staged, atomic_write, read_or_none, sync_together

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.eventlog import Appended
    from workbench.store.loaded import Loaded
    from workbench.store.stagecontext import StageContext


class SnapshotsBehind(WorkbenchError):
    """The events were appended (the change is recorded) but a snapshot could not be written."""

    def __init__(self, err: OSError) -> None:
        self.err = err
        name = Path(str(err.filename)).name if err.filename else "state.md/board.json"
        if name.startswith(".tmp-"):  # atomic_write's temp file: name its target
            name = name.split("-", 2)[-1]
        super().__init__(f"recorded in events.jsonl, but writing {name} failed: {err.strerror or err}; the next "
                         "wb command brings state.md and board.json up to date (`wb doctor --fix` does it now)")


def write_snapshots(tx: StageContext, loaded: Loaded, log: Appended | None = None) -> str | None:
    """Write board.json and state.md (and wb's caches of them). Returns the file a person saved in the last
    moment before its rename, which is left as they saved it (None: both written). Its cache is left too,
    so the next load tells their edit from wb's write and records it; a board.json left so leaves state.md
    behind as well (the log brings both up to date, state.md's last_event saying from where). `log`: the event
    log's append not yet fsynced, made durable with the temp files (one journal commit for the three)."""
    from workbench.model import statefile

    p = tx.wb.paths
    docs = tx.docs
    seen_board = None if "board.json" in loaded.rebuilt else tx.board_seen
    seen_state = None if "state.md" in loaded.rebuilt else loaded.state_raw
    board_raw = None
    if tx.board_changed or loaded.replayed:
        archive.write_sealed(p, docs)  # before the board that references them
        board_raw = docs.encode_board()
    state_raw = None
    node = loaded.state_node
    if node is None:
        state_raw = statefile.render_fast(loaded.state_raw, loaded.file_state, docs.state, docs.body)
        if state_raw is None:
            node = tx.wb.parse_state(loaded.state_raw)[0]
    if state_raw is None:
        state_raw = statefile.render(node, docs.state, docs.body)
    # Both temp files written, then made durable together with the log's append (one journal commit for the
    # three), then renamed in one after the other, board.json first: never a snapshot ahead of a durable log.
    # No directory fsync: the log append is durable by then, and a rename lost to a power cut leaves the old
    # snapshot, whose last_event is behind the log; the next load folds the rest in.
    staged: list[Staged] = []
    try:
        if board_raw is not None:
            staged.append(Staged(p.board, board_raw))
        staged.append(Staged(p.state, state_raw))
        sync_together(staged, log)
    except BaseException:
        for one in staged:
            one.drop()
        raise
    state_stage = staged[-1]
    if board_raw is not None:
        board_stage = staged[0]
        try:
            board_stage.put(expect=None if tx.rebuild else seen_board)
        except FileChanged:
            if not git_did_it(tx, "board.json"):
                state_stage.drop()
                return "board.json"
            atomic_write(p.board, board_raw, sync_dir=False)
        except BaseException:
            state_stage.drop()
            raise
        faults.point("after_board_write")
    kept = None
    written = None
    try:
        written = state_stage.put(expect=None if tx.rebuild else seen_state)
    except FileChanged:
        if git_did_it(tx, "state.md"):
            written = atomic_write(p.state, state_raw, sync_dir=False)
        else:
            kept = "state.md"
    faults.point("after_state_write")
    if board_raw is not None or not p.board_cache.exists():
        caches.write_board_cache(p, p.board.read_bytes() if board_raw is None else board_raw)
        caches.drop_board_alias(p)
    # board.json holds `board_raw` now, or (unchanged) the bytes the load read as wb's own: the board for them is
    # kept for this process's next load (store/keptboard.py); never a board rebuilt, or one a hand edit left
    if not tx.rebuild and docs.board_raw is not None and (board_raw is not None or not docs.touched):
        tx.wb.keep_board(docs.board_raw if board_raw is None else board_raw, docs)
    if kept:
        return kept
    caches.write_state_cache(p, state_raw, docs.state, docs.body, written=written)
    if node is not None:  # a state.md render_fast could not edit in place (rare): copy is imported for it alone
        import copy

        tx.wb.keep_state_node(state_raw, node, copy.deepcopy(docs.state), docs.body)
    return None


def git_did_it(tx: StageContext, name: str) -> bool:
    """Whether the change of `name` under this write is the user's git rather than a person's save: once
    git lets go of the index, the file is as HEAD has it (a checkout, stash or reset put it there). wb's
    log already holds this write then, and it writes the file as before; the next load sorts it out. (A
    held index.lock alone says nothing: another wb writer's index update holds it too.)"""
    tx.wb.git.wait_for_users_git(2.0)
    try:
        return read_or_none(tx.wb.paths.wb / name) == tx.wb.git.committed_file(f".workbench/{name}")
    except (OSError, WorkbenchError):
        return False
