"""A person's hand edit of state.md or board.json: told apart from wb's own write, and guarded for a while.

Each snapshot is compared with the bytes wb last wrote (kept in .cache/; in a fresh clone, the last commit).
A difference at the same last_event is a person's edit, which the next transaction records as a `human.edit`
event; for human_guard_seconds after it, agent writes to that file are refused, so the person's edit wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.errors import Busy, GitError, Refused, WorkbenchError
from workbench.model import reducer
from workbench.model.boardfile import parse_board
from workbench.model.layout import WB_DIR, Paths
from workbench.store import caches

if TYPE_CHECKING:
    from workbench.model.reducer import Docs
    from workbench.store.workbench import Workbench


class HumanGuard(Busy):
    """An agent write inside the window after a hand edit of the same file."""

    def __init__(self, file: str, seconds_left: float) -> None:
        self.file = file
        self.seconds_left = seconds_left
        super().__init__(f"{file} was edited by hand moments ago; agent writes to it wait "
                         f"{seconds_left:.1f}s more (human_guard_seconds): retry then")


def find_edits(wb: Workbench, docs: Docs, state_raw: bytes, board_raw: bytes,
               state_cached: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Compare each snapshot with the bytes wb last wrote (kept in .cache/). A difference at the same
    last_event is a human's edit; a newer last_event is wb's own write that a crash kept from the cache."""
    edits: list[dict[str, Any]] = []
    if state_cached is None:  # a fresh clone: what was committed is what wb last wrote
        committed = _committed(wb, "state.md")
        if committed is not None and committed != state_raw:
            try:
                _node, data, body = wb.parse_state(committed)
                state_cached = {"state": data, "body": body, "fresh": False}
            except Refused:
                state_cached = None
    if state_cached and not state_cached["fresh"] and _is_committed(wb, "state.md", state_raw):
        state_cached = None  # the user's git put back what is committed (a merge --abort, a checkout)
    if state_cached and not state_cached["fresh"]:
        before = state_cached["state"]
        if docs.state.get("last_event") == before.get("last_event"):
            skip = reducer.DERIVED_STATE_KEYS
            changes = {k: v for k, v in docs.state.items() if k not in skip and before.get(k, object()) != v}
            removed = [k for k in before if k not in docs.state and k not in skip]
            edit: dict[str, Any] = {"file": "state.md", "changes": changes, "removed": removed}
            if docs.body != state_cached["body"]:
                edit["body"] = docs.body
            edits.append(edit)
    board_before = caches.read_board_cache(wb.paths)
    if board_before is None:
        board_before = _committed(wb, "board.json")
    if board_before is not None and board_before != board_raw and not _is_committed(wb, "board.json", board_raw):
        old = parse_board(board_before)
        if docs.board.get("last_event") == old.get("last_event"):
            edits.append(board_edit(old, docs.board))
    return edits


def board_edit(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    old_tasks = {t.get("id"): t for t in old.get("tasks", []) if isinstance(t, dict)}
    new_tasks = [t for t in new.get("tasks", []) if isinstance(t, dict)]
    new_ids = [t.get("id") for t in new_tasks]
    upsert = [t for t in new_tasks if old_tasks.get(t.get("id")) != t]
    remove = [tid for tid in old_tasks if tid not in set(new_ids)]
    edit: dict[str, Any] = {"file": "board.json", "upsert": upsert, "remove": remove}
    kept_old_order = [tid for tid in old_tasks if tid in set(new_ids)]
    if [tid for tid in new_ids if tid in old_tasks] != kept_old_order:
        edit["order"] = new_ids
    return edit


def _is_committed(wb: Workbench, name: str, raw: bytes) -> bool:
    """Whether the file holds what is committed: then no person edited it, whatever wb's cache says — the
    user's git put it back (a `merge --abort` after wb's merge driver cached the merge it never kept, a
    checkout). Asked only when the file differs from the cache."""
    try:
        committed = _committed(wb, name)
    except WorkbenchError:  # config.yaml unreadable as this wb reads it (mid-migration): ask nothing of git
        return False
    return committed is not None and committed == raw


def _committed(wb: Workbench, name: str) -> bytes | None:
    """The file as last committed by wb (HEAD, or config git.ref), for a clone that has no .cache/ yet."""
    ref = wb.config["git"].get("ref") or "HEAD"
    if ref != "HEAD" and not ref.startswith("refs/"):
        ref = "refs/heads/" + ref
    try:
        return wb.git.committed_file(f"{WB_DIR}/{name}", ref)
    except (GitError, OSError, ValueError):
        return None


# -- the guard window ----------------------------------------------------------------------------------
def note_edit(p: Paths, file: str) -> None:
    """Remember when a hand edit of `file` happened (its mtime), for human_guard_seconds. An mtime in the future
    (clock skew, a restored backup, `touch -d`) counts as the moment the edit is first seen: an agent write the
    guard refuses leaves the edit unrecorded, so the next load sees the same edit again, and its window must
    not start over."""
    import time

    guard = caches.read_guard(p)
    try:
        mtime = (p.wb / file).stat().st_mtime
    except FileNotFoundError:
        return
    now = time.time()
    if mtime <= now:
        guard[file] = mtime
    elif guard.get(f"{file} mtime") != mtime:  # first seen now
        guard[file] = now
    guard[f"{file} mtime"] = mtime
    caches.write_guard(p, guard)


def check_guard(p: Paths, config: dict[str, Any], file: str) -> None:
    """Refuse an agent write to `file` within human_guard_seconds of a hand edit: the human's edit wins. The
    wait is never longer than the window, whatever time the guard file holds."""
    import time

    window = float(config.get("human_guard_seconds", 5))
    edited = caches.read_guard(p).get(file)
    if not window or not isinstance(edited, int | float):
        return
    left = min(edited + window - time.time(), window)
    if left > 0:
        raise HumanGuard(file, left)
