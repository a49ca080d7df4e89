"""A person's hand edit of state.md or board.json: told apart from wb's own write, and guarded for a while.

A snapshot that differs from what the log folds to at the snapshot's own last_event is a hand edit, whoever
committed it (issue 19). Each snapshot is first compared with the bytes wb last wrote (its cache; in a fresh
clone, the last commit); only when that cannot tell (the file holds what is committed) is the log folded. The
next transaction records the edit as a `human.edit` event (`agent.edit` during an agent's turn); for
human_guard_seconds after it, agent writes to that file are refused, so the person's edit wins.
"""

from __future__ import annotations

from pathlib import Path

from workbench.errors import Busy, GitError, Refused, WorkbenchError
from workbench.model import reducer
from workbench.model.boardfile import parse_board
from workbench.model.layout import WB_DIR, Paths
from workbench.store import caches

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.model.reducer import Docs
    from workbench.store.stagecontext import StageWorkbench


class HumanGuard(Busy):
    """An agent write inside the window after a hand edit of the same file."""

    def __init__(self, file: str, seconds_left: float) -> None:
        self.file = file
        self.seconds_left = seconds_left
        super().__init__(f"{file} was edited by hand moments ago; agent writes to it wait "
                         f"{seconds_left:.1f}s more (human_guard_seconds): retry then")


def find_edits(wb: StageWorkbench, docs: Docs, state_raw: bytes, board_raw: bytes,
               state_cached: dict[str, Any] | None, *, thorough: bool = False) -> list[dict[str, Any]]:
    """The hand edits of state.md and board.json: where a snapshot differs from what the log folds to at the
    snapshot's own last_event, whoever committed it. Cheaply first: a snapshot that holds what wb last wrote
    (its cache) is wb's; one that differs from the cache at the same last_event is a person's. One that differs
    from the cache but holds what is committed is either (a person's edit committed with plain git, or the
    user's git putting back what wb committed after a merge --abort): the log, folded to its last_event,
    decides. A newer last_event than the cache's is wb's own write that a crash kept from the cache. With no
    cache at all (a fresh clone), `thorough` asks the log; otherwise what was committed stands for the cache."""
    edits: list[dict[str, Any]] = []
    fold_state = fold_board = False
    board_before = caches.read_board_cache(wb.paths)
    if board_before != board_raw and state_cached is not None and state_cached.get("fresh"):
        renumbered = caches.board_alias(wb.paths, board_raw, state_cached.get("sha"))
        if renumbered is not None:  # the board git took whole in wb's merge: wb's, as the merged log numbers it
            docs.board["last_event"] = renumbered
            board_before = board_raw
    keep = True  # the fold of the sealed log kept for the next time (store/keptfold.py)
    if thorough and state_cached is None and board_before is None:  # a fresh clone: the log decides, once
        fold_state = fold_board = True
        keep = False  # its first command pays enough; a pull's write keeps it
    elif state_cached is None:  # a fresh clone: what was committed is what wb last wrote
        committed = _committed(wb, "state.md")
        if committed is not None and committed != state_raw:
            try:
                _node, data, body = wb.parse_state(committed)
                state_cached = {"state": data, "body": body, "fresh": False}
            except Refused:
                state_cached = None
    elif not state_cached["fresh"] and _is_committed(wb, "state.md", state_raw):
        state_cached, fold_state = None, True
    if state_cached and not state_cached["fresh"]:
        before = state_cached["state"]
        if docs.state.get("last_event") == before.get("last_event") and \
                docs.state.get("updated_at") != before.get("updated_at"):
            # the same seq, written at another time: after the user's git rewrote history (a reset, then writes
            # that landed since), seqs repeat, and the cache may be of a state.md no longer on this line — the log
            # decides whose this one is (a killed write of wb's own must never be taken for a person's edit)
            fold_state = True
        elif docs.state.get("last_event") == before.get("last_event"):
            edit = state_edit(before, state_cached["body"], docs.state, docs.body)
            assert edit is not None
            edits.append(_with_base(edit, state_cached["body"]))
        elif _int(docs.state.get("last_event")) < _int(before.get("last_event")):
            # saved over a newer write of wb's from an older read (an editor's buffer, saved after wb's rename):
            # what the person changed is measured against what they read, the log folded to the file's
            # last_event, not taken for a snapshot behind the log (whose fold would undo their save)
            fold_state = True
    if board_before is None and not fold_board:
        board_before = _committed(wb, "board.json")
    if board_before is not None and board_before != board_raw:
        if _is_committed(wb, "board.json", board_raw):
            fold_board = True
        else:
            old = parse_board(board_before)
            if docs.board.get("last_event") == old.get("last_event"):
                edits.append({**board_edit(old, docs.board), BEFORE: old})
            elif _int(docs.board.get("last_event")) < _int(old.get("last_event")):
                # saved over a newer board of wb's from an older read: the person's changes since what they
                # read, on top of wb's board (whose tasks their file lacks only because it is older)
                read_at = _int(docs.board.get("last_event"))
                base = fold_at(wb, {read_at}, keep=keep).get(read_at)
                edit = board_edit(base.board if base is not None else old, docs.board)
                if base is None:
                    edit["remove"] = []  # no fold to tell a removal from a task added since: keep them all
                docs.board = old
                if edit["upsert"] or edit["remove"] or "order" in edit:
                    edits.append({**edit, BEFORE: base.board if base is not None else old})
    if fold_state or fold_board:
        # board.json is the board as of state.md's last_event (it is written whenever it changes, and first: a
        # crash between the two writes leaves it ahead); its own last_event only says when it last changed,
        # and a merge git made file by file (a cherry-pick) may leave that behind
        state_at = _int(docs.state.get("last_event"))
        board_at = max(state_at, _int(docs.board.get("last_event")))
        folded = fold_at(wb, {seq for seq, wanted in ((state_at, fold_state), (board_at, fold_board),
                                                       (state_at, fold_board)) if wanted}, keep=keep)
        if board_at not in folded:  # a board numbered past the log's end: git took it whole from a branch whose
            board_at = state_at     # events the merged log numbers lower (a rebase that dropped a commit)
        if fold_state and state_at in folded:
            base = folded[state_at]
            edit = state_edit(base.state, base.body, docs.state, docs.body, always=False)
            if edit is not None:
                edits.insert(0, _with_base(edit, base.body))
        if fold_board and board_at in folded:
            edit = board_edit(folded[board_at].board, docs.board)
            if edit["upsert"] or edit["remove"] or "order" in edit:
                edits.append({**edit, BEFORE: folded[board_at].board})
            elif "last_event" in folded[board_at].board:
                # the tasks are the log's, numbered as another branch's log was: git took board.json whole from
                # the side that alone changed it, and the merged log put the other side's events among them.
                # Not an edit: the board is wb's, its last_event the one the log gives (the next write writes it)
                docs.board["last_event"] = folded[board_at].board["last_event"]
    for edit in edits:  # what git committed (a cherry-pick's file-by-file merge) is recorded, but no one waits on it
        if _is_committed(wb, str(edit.get("file")), state_raw if edit.get("file") == "state.md" else board_raw):
            edit[COMMITTED] = True
    return edits


# the board an edit was found against (what wb last wrote, or what the log folds to): for the transaction,
# which takes it out before the edit becomes an event's payload
BEFORE = "_before"
# the decision log a state.md edit was made from, for `merge_body`: taken out by the load
BASE_BODY = "_base_body"
# the edited file is as HEAD has it (git put it there: a cherry-pick, a plain-git commit of an edit): recorded as a
# human.edit all the same, but human_guard_seconds does not make the agent wait on it (no one is mid-edit)
COMMITTED = "_committed"
PRIVATE = (BEFORE, BASE_BODY, COMMITTED)  # the keys an edit carries for the load and the transaction, never recorded


def _with_base(edit: dict[str, Any], base_body: str) -> dict[str, Any]:
    if "body" in edit:
        edit[BASE_BODY] = base_body
    return edit


def merge_body(base: str, ours: str, theirs: str) -> str:
    """The decision log of a hand edit (`theirs`, made from `base`) on top of what the log folds to now
    (`ours`): the events after the snapshot the person edited (wb's notes, an earlier hand edit) are kept
    beside their lines. A decision log is appended to, so where both added lines, both stay: wb's first
    (`git merge-file --union`). Without git, the person's log with wb's lines it lacks after it."""
    if theirs in (base, ours):
        return ours
    if ours == base:
        return theirs
    import tempfile

    from workbench.git.repo import run_git

    with tempfile.TemporaryDirectory(prefix="wb-merge-") as tmp:
        names = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_text(text, encoding="utf-8")
            names.append(str(path))
        try:
            proc = run_git(Path(tmp), "merge-file", "--union", "-p", *names, check=False)
        except GitError:
            proc = None
    if proc is not None and proc.returncode == 0:
        return proc.stdout.decode("utf-8")
    have = set(theirs.splitlines())
    return theirs + "".join(line + "\n" for line in ours.splitlines() if line not in have)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def board_edit(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    old_tasks = {t.get("id"): t for t in old.get("tasks", []) if isinstance(t, dict)}
    new_tasks = [t for t in new.get("tasks", []) if isinstance(t, dict)]
    new_ids = [t.get("id") for t in new_tasks]
    upsert = [t for t in new_tasks if old_tasks.get(t.get("id")) != t]
    new_set = set(new_ids) if old_tasks else set()  # once: a set per task was quadratic (8 ms at 500 tasks)
    remove = [tid for tid in old_tasks if tid not in new_set]
    edit: dict[str, Any] = {"file": "board.json", "upsert": upsert, "remove": remove}
    kept_old_order = [tid for tid in old_tasks if tid in new_set]
    if [tid for tid in new_ids if tid in old_tasks] != kept_old_order:
        edit["order"] = new_ids
    return edit


def _is_committed(wb: StageWorkbench, name: str, raw: bytes) -> bool:
    """Whether the file holds what is committed: then no person edited it, whatever wb's cache says — the
    user's git put it back (a `merge --abort` after wb's merge driver cached the merge it never kept, a
    checkout). Asked only when the file differs from the cache: by blob id, the committed trees read in-process
    when they are loose objects (as after a pull of a few commits), which the write's commit then reads again from
    memory — not a `git cat-file` of the file (two of them were ~5 ms of the first write after a pull, issue 33)."""
    try:
        blob = wb.git.committed_wb_blob(name, _ref(wb))
    except (WorkbenchError, OSError, ValueError):  # config.yaml unreadable as this wb reads it (mid-migration),
        return False  # or git could not say (GitError is a WorkbenchError): not committed, as before
    return blob is not None and blob == wb.git.blob_id(raw)


def _ref(wb: StageWorkbench) -> str:
    """The ref wb commits to: HEAD, or config git.ref."""
    ref: str = wb.config["git"].get("ref") or "HEAD"
    return ref if ref == "HEAD" or ref.startswith("refs/") else "refs/heads/" + ref


def _committed(wb: StageWorkbench, name: str) -> bytes | None:
    """The file as last committed by wb (HEAD, or config git.ref), for a clone that has no .cache/ yet."""
    ref = _ref(wb)
    try:
        return wb.git.committed_file(f"{WB_DIR}/{name}", ref)
    except (GitError, OSError, ValueError):
        return None


# -- what the log folds to at a snapshot's last_event --------------------------------------------------
# The fold of the whole log that `wb replay` (validate, doctor) made just before it loads the snapshots to compare
# them: in a fresh clone that load's check for hand edits would fold the whole log again (issue 33). It serves
# while the log object it was read from still ends where it ended (seq and line hash: the hash chain binds every
# earlier line) and no one has folded more into it (its last_event unchanged); read-only, as every fold_at is.
_MADE: list[tuple[object, str | None, Docs]] = []


def made_fold(wb: StageWorkbench, docs: Docs) -> None:
    """`docs` is what the whole log of `wb` folds to, as it ends now, for the `fold_at`s that follow."""
    tail = wb.log.tail()
    _MADE[:] = [(wb.log, tail.hash, docs)] if tail.seq and docs.state.get("last_event") == tail.seq else []


def _made(wb: StageWorkbench, seq: int) -> Docs | None:
    for log, last_hash, docs in _MADE:
        if log is wb.log and docs.state.get("last_event") == seq:
            tail = wb.log.tail()
            if tail.seq == seq and tail.hash == last_hash:
                return docs
    return None


def fold_at(wb: StageWorkbench, seqs: set[int], *, keep: bool = True) -> dict[int, Docs]:
    """The documents the log folds to at each of `seqs` (events 1..seq; one pass each, and there are at most
    two). Empty for a log that cannot be read whole (damage is doctor's to report). `keep`: record the sealed
    log's fold when there is none to start from (store/keptfold.py)."""
    from collections.abc import Iterator

    from workbench.store.eventlog import EventLog

    out: dict[int, Docs] = {}
    for seq in sorted(seqs):
        made = _made(wb, seq)
        if made is not None:
            out[seq] = made
            continue
        if isinstance(wb.log, EventLog):  # from the fold of the sealed log kept here, when it still applies
            from workbench.store import keptfold

            try:
                kept = keptfold.fold_at(wb.log, wb.paths, seq, keep=keep)
            except WorkbenchError:
                return {}
            if kept is not None:
                out[seq] = kept
            continue
        def upto(last: int = seq) -> Iterator[dict[str, Any]]:  # SQLite's log
            for _line, event in wb.log.iter_all():
                if event["seq"] > last:
                    return
                yield event

        try:
            docs = reducer.fold(upto(), empty_ts="1970-01-01T00:00:00Z")
        except WorkbenchError:
            return {}
        if docs is not None:
            out[seq] = docs
    return out


def state_edit(base_state: dict[str, Any], base_body: str, state: dict[str, Any], body: str,
               *, always: bool = True) -> dict[str, Any] | None:
    """The `human.edit` of state.md that turns (base_state, base_body) into (state, body); None when nothing
    a person can set differs and not `always`."""
    skip = reducer.DERIVED_STATE_KEYS
    changes = {k: v for k, v in state.items() if k not in skip and base_state.get(k, object()) != v}
    removed = [k for k in base_state if k not in state and k not in skip]
    edit: dict[str, Any] = {"file": "state.md", "changes": changes, "removed": removed}
    if body != base_body:
        edit["body"] = body
    if not always and not changes and not removed and "body" not in edit:
        return None
    return edit


def diff_docs(base: Docs, now: Docs) -> list[dict[str, Any]]:
    """The hand edits that turn the documents `base` (what the log folds to) into `now` (the snapshots)."""
    edits: list[dict[str, Any]] = []
    state = state_edit(base.state, base.body, now.state, now.body, always=False)
    if state is not None:
        edits.append(state)
    board = board_edit(base.board, now.board)
    if board["upsert"] or board["remove"] or "order" in board:
        edits.append(board)
    return edits


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


# -- an agent's edit (issue 19 §2) ---------------------------------------------------------------------------
# What only wb's verbs may change on a task (each with its own rules: acceptance runs before done, a started
# task's acceptance and scope are a person's to change, claims are won by a push): an agent's edit of board.json
# that changes one is refused and board.json goes back to what the log folds to.
GUARDED = ("acceptance", "scope", "status", "owner", "claim")
AGENT_SESSION_STALE_SECONDS = 3600.0  # an open agent session whose last event is older has ended (a crash)


def guard_agent_board_edit(docs: Docs, edit: dict[str, Any], before: dict[str, Any]
                           ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(the part of an agent's board.json edit that is kept, or None when nothing is; what is refused, one
    {task, field, from, to} per task and field). The refused fields are put back in `docs` as they were."""
    old = {t.get("id"): t for t in before.get("tasks", []) if isinstance(t, dict)}
    missing = object()
    refused: list[dict[str, Any]] = []
    upsert = []
    for task in edit.get("upsert", []):
        prev = old.get(task.get("id"))
        if prev is None:  # a task the agent added: the agent's rules for a new task apply (store/spool.py)
            upsert.append(task)
            continue
        kept = dict(task)
        live = reducer.find_task(docs.board, str(task.get("id")))
        for name in GUARDED:
            was, now = prev.get(name, missing), task.get(name, missing)
            if was == now or (name == "status" and now == "done"):  # done: the agent.edit's own rule (spool.py)
                continue
            refused.append({"task": task.get("id"), "field": name, "from": None if was is missing else was,
                            "to": None if now is missing else now})
            for target in (kept, live):
                if target is None:
                    continue
                if was is missing:
                    target.pop(name, None)
                else:
                    target[name] = was
        if kept != prev:
            upsert.append(kept)
    out = {**edit, "upsert": upsert}
    if not upsert and not out.get("remove") and "order" not in out:
        return None, refused
    return out, refused


def refused_lines(refused: list[dict[str, Any]]) -> list[str]:
    """One line per refused task and field, for the agent to read."""
    return [f"board.json: {r['task']}: {r['field']} changed by an agent's edit: refused, board.json restored "
            f"(a task's {r['field']} changes through wb: `wb task …`, and a person)" for r in refused]


def agent_acting(wb: StageWorkbench, turn: dict[str, Any] | None) -> dict[str, Any] | None:
    """The agent whose edit a hand edit found now is: the one whose turn is marked (store/spool.py), else one
    whose session is open — an `agent.session_start` in the log or the hooks' spool, no `agent.session_end`
    after it, and an event of it in the last hour. The turn marker is a file under the git directory, which
    the agent can delete from its shell; the session's events are in the hash-chained log. None: a person."""
    if turn is not None:
        return turn
    import time
    from datetime import datetime

    from workbench.store.spool import Spool

    sessions: dict[str, dict[str, Any]] = {}

    def see(event: dict[str, Any]) -> None:
        type_, payload = event.get("type"), event.get("payload")
        if not isinstance(type_, str) or not type_.startswith("agent.") or not isinstance(payload, dict):
            return
        key = str(payload.get("agent_session") or "")
        if type_ == "agent.session_start":
            sessions[key] = {"agent": payload.get("agent"), "agent_session": key, "ts": event.get("ts")}
        elif type_ == "agent.session_end":
            sessions.pop(key, None)
        elif key in sessions:
            sessions[key]["ts"] = event.get("ts")

    try:
        for line, event in wb.log.iter_all():
            if b'"agent.' in line:
                see(event)
    except WorkbenchError:
        pass
    for record in Spool(wb.git.git_dir).read()[0]:
        see(record)
    now = time.time()
    for info in reversed(list(sessions.values())):
        try:
            last = datetime.fromisoformat(str(info.get("ts")).replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
        if now - last <= AGENT_SESSION_STALE_SECONDS:
            return {"agent": info.get("agent") or "", "agent_session": info["agent_session"]}
    return None
