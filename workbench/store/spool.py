"""A coding agent's hook events, kept where git never sees them until a transaction folds them into the log.

A hook runs twice per tool call of the agent. Were each to append to `.workbench/events.jsonl`, the work tree
would stay dirty until the turn's commit, and the agent's own `git checkout`, `git stash`, `git rebase` or
`git add -A && git commit` would carry, stash, refuse on or sweep up wb's files. So a hook appends one line to
`spool.jsonl` in this worktree's own git directory (`.git/wb/`, or `.git/worktrees/NAME/wb/` for a linked
worktree: each worktree has its own `.workbench/` on its own branch, so its agent's events belong to its log
and its turn to it alone, as with the pending journal), and touches nothing else.

Every transaction (`Transaction.__enter__`) folds the spool in: each line becomes an event of the log whose
`id` is the line's own, validated, chained, redacted and committed with the transaction; lines whose id the
log or the pending journal already holds are skipped, so a fold killed at any point and run again duplicates
nothing. The folded lines leave the spool only once the transaction's events are durable (in the log, or in
the pending journal while git is mid-operation): a crash before then loses nothing. Hooks append under a lock
of the spool (lockf), and a fold drops what it folded under the same lock, keeping any line appended meanwhile.

The agent's turn (its first hook to its Stop) is marked by `turn.json` beside the spool: a change to
`.workbench/` found during a turn is the agent's (`agent.edit`), not a person's. `redact.json` keeps the names
of the variables config.yaml's `redact` lists, and the SQLite database's path when config.yaml names that
backend, keyed by config.yaml's size and mtime, so a hook redacts and guards the database without loading
config.yaml (the hook's path imports no YAML parser, nor pathlib).

A workbench kept in SQLite (store/sqlitedb.py) has the same spool in the same place (its git directory's `wb/`,
beside the database; `.workbench/.local/wb/` for one kept without git), and its transaction folds it the same way
(store/sqlitetx.py): the hooks stay one append each, with no database connection, and the fold's events are
in the database once its COMMIT returns.

This module imports only the standard library and model/cjson at its top: it is on every hook's path.
"""

from __future__ import annotations

import os
import time

from workbench.git.keep import KEPT, KEPT_FOR, keep_dir_of  # noqa: F401 - where a hook asks for them
from workbench.model import cjson

TYPE_CHECKING = False  # not typing's: importing typing costs a hook a tenth of its time
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.stagecontext import StageContext

SPOOL = "spool.jsonl"
TURN = "turn.json"
REDACT_NAMES = "redact.json"
TURN_STALE_SECONDS = 3600.0  # a turn whose last hook is older than this ended without a Stop (a crash)


def find_root(start: str) -> str | None:
    """The git work tree containing `start`, walking up as `git.repo.find_worktree` does (without pathlib,
    which a hook does not import); None outside one."""
    here = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def git_dir_of(root: str | os.PathLike[str]) -> str | None:
    """The git directory of the work tree `root`, as `git rev-parse --git-dir` names it, read without a
    subprocess: `.git` itself, or the directory a `.git` file points to (a linked worktree, a submodule).
    None when the environment (GIT_DIR) or an odd `.git` leaves it to git to say."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_COMMON_DIR"):
        return None
    dot = os.path.join(os.fspath(root), ".git")
    if os.path.isdir(dot):
        return dot
    try:
        with open(dot, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = os.path.join(os.fspath(root), text[len("gitdir:"):].strip())  # an absolute one stays itself
    return os.path.normpath(target) if os.path.isdir(target) else None


class Spool:
    def __init__(self, git_dir: str | os.PathLike[str]) -> None:
        self.dir = os.path.join(os.fspath(git_dir), "wb")
        self.path = os.path.join(self.dir, SPOOL)
        self.turn_path = os.path.join(self.dir, TURN)

    # -- the hook's side: append ----------------------------------------------------------------------
    def append(self, record: dict[str, Any]) -> None:
        """One line, appended under the spool's lock. No fsync: a write() that returned survives the
        process's kill -9; a power cut may lose the last hook events not yet folded (never a write of wb's)."""
        line = cjson.dumps(record).encode("utf-8", "surrogatepass")
        while True:
            fd = self._open(os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                os.lockf(fd, os.F_LOCK, 0)  # the whole file (from offset 0); os.lockf: no fcntl to import
                if self._is_current(fd):  # a fold may have replaced the file while we waited for its lock
                    os.write(fd, line + b"\n")
                    return
            finally:
                os.close(fd)  # releases the lock

    def _open(self, flags: int) -> int:
        try:
            return os.open(self.path, flags, 0o644)
        except FileNotFoundError:
            if not flags & os.O_CREAT:
                raise
            os.makedirs(self.dir, exist_ok=True)
            return os.open(self.path, flags, 0o644)

    def _is_current(self, fd: int) -> bool:
        try:
            return os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            return False

    # -- the fold's side: read, then drop what was folded --------------------------------------------
    def read(self) -> tuple[list[dict[str, Any]], int]:
        """(the records, the bytes of complete lines read). A torn last line (a hook killed mid-write) is
        left for later; a damaged line is skipped."""
        from workbench.model.jsonl import loads_record, split_lines

        try:
            fd = os.open(self.path, os.O_RDWR)  # lockf's lock needs a descriptor open for writing
        except FileNotFoundError:
            return [], 0
        try:
            os.lockf(fd, os.F_LOCK, 0)
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        lines, torn = split_lines(data)
        records = [r for r in (loads_record(line) for line in lines) if r is not None]
        return records, len(data) - len(torn)

    def drop(self, size: int) -> None:
        """Remove the first `size` bytes (the lines a fold made durable); lines appended since stay."""
        if size <= 0:
            return
        try:
            fd = os.open(self.path, os.O_RDWR)
        except FileNotFoundError:
            return
        try:
            os.lockf(fd, os.F_LOCK, 0)
            total = os.fstat(fd).st_size
            if total <= size:
                os.ftruncate(fd, 0)
                return
            os.lseek(fd, size, os.SEEK_SET)
            rest = b""
            while chunk := os.read(fd, 1 << 20):
                rest += chunk
            # a crash from here on leaves the old file (its folded lines are skipped by id) or the new one
            tmp = os.path.join(self.dir, f".spool-{os.getpid()}.tmp")
            tfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(tfd, rest)
                os.fsync(tfd)
            finally:
                os.close(tfd)
            os.replace(tmp, self.path)  # hooks waiting on the old file's lock see it replaced and reopen
        finally:
            os.close(fd)

    # -- the agent's turn -------------------------------------------------------------------------------
    def begin_turn(self, info: dict[str, Any]) -> None:
        """Mark the agent's turn as going on (its first hook creates the marker, every later one touches it)."""
        try:
            os.utime(self.turn_path)
            return
        except FileNotFoundError:
            pass
        try:
            fd = os.open(self.turn_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return
        except FileNotFoundError:
            os.makedirs(self.dir, exist_ok=True)
            return self.begin_turn(info)
        try:
            os.write(fd, cjson.dumps({**info, "since": time.time()}).encode())
        finally:
            os.close(fd)

    def turn(self) -> dict[str, Any] | None:
        """The agent's turn going on now ({agent, agent_session, since}), or None."""
        try:
            if time.time() - os.stat(self.turn_path).st_mtime > TURN_STALE_SECONDS:
                return None
            with open(self.turn_path, "rb") as f:
                data = cjson.loads(f.read().decode("utf-8", "replace") or "{}")
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else {}

    def end_turn(self) -> None:
        try:
            os.unlink(self.turn_path)
        except FileNotFoundError:
            pass

    # -- what a hook needs of config.yaml, without config.yaml ------------------------------------------
    def config_facts(self, config: str) -> dict[str, Any] | None:
        """What a hook reads of config.yaml, as last cached for this very config.yaml (its size and mtime):
        `names`, the variables its `redact` lists, and `db`, the SQLite database's path when config.yaml names
        that backend (else None). None when the cache is missing or stale."""
        try:
            st = os.stat(config)
            with open(os.path.join(self.dir, REDACT_NAMES), "rb") as f:
                cached = cjson.loads(f.read().decode("utf-8", "replace"))
        except (OSError, ValueError):
            return None
        if not isinstance(cached, dict) or cached.get("config") != [st.st_mtime_ns, st.st_size]:
            return None
        if cached.get("kept") != 1:  # cached before a linked worktree's database moved out (keep_dir_of)
            return None
        names, db = cached.get("names"), cached.get("db", False)
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            return None
        if not (db is None or isinstance(db, str)):  # False: a cache written before it held the database's path
            return None
        return {"names": names, "db": db}

    def keep_config_facts(self, config: str, names: list[str], db: str | None) -> None:
        """Cache the names (never their values) and the database's path for the config.yaml read just now."""
        try:
            st = os.stat(config)
            os.makedirs(self.dir, exist_ok=True)
            tmp = os.path.join(self.dir, f".redact-{os.getpid()}.tmp")
            with open(tmp, "w") as f:
                f.write(cjson.dumps({"config": [st.st_mtime_ns, st.st_size], "names": names, "db": db, "kept": 1}))
            os.replace(tmp, os.path.join(self.dir, REDACT_NAMES))
        except OSError:
            pass  # a cache: the next hook reads config.yaml again


# -- folding, inside a transaction ---------------------------------------------------------------------
def fold(tx: StageContext) -> int:
    """Emit the spool's events into `tx` (entered, under the lock): each with its line's id and time, as
    `agent`; lines already in the log or the pending journal, and lines that are not an agent event, are
    skipped. Records how much of the spool to drop once the transaction's events are durable (`settle`).
    Returns how many events were folded."""
    import re

    from workbench.model.clip import clip_payload
    from workbench.model.eventtypes import HARNESS_EVENTS
    from workbench.model.reducer import REDUCERS

    spool = Spool(tx.wb.git.git_dir)
    records, size = spool.read()
    tx.spool_size = size
    if not records:
        return 0
    pending_events, _calls = tx.wb.pending.read()
    tail = tx.wb.log.tail().seq
    # a fold whose transaction died after its events became durable left them at the log's end (or in the
    # pending journal): the next transaction, this one, looks there
    known = {e.get("id") for e in pending_events}
    known |= {e.get("id") for e in tx.wb.log.read_after(max(0, tail - len(records) - 256))}
    ulid = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
    stamp = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
    kind = re.compile(r"^agent(\.[a-z_]+)+$")
    folded = 0
    for record in records:
        rid, type_, payload, ts = (record.get(k) for k in ("id", "type", "payload", "ts"))
        if not (isinstance(rid, str) and ulid.match(rid) and isinstance(type_, str) and kind.match(type_)
                and type_ not in REDUCERS and type_ not in HARNESS_EVENTS and isinstance(payload, dict)
                and isinstance(ts, str) and stamp.match(ts)):
            continue  # not a line a hook wrote: never folded into the documents, never a refusal
        if rid in known:
            continue
        known.add(rid)
        event = tx.emit(type_, clip_payload(payload), actor="agent", ts=ts, via="hook")
        event["id"] = rid
        folded += 1
    return folded


def settle(tx: StageContext) -> None:
    """After `tx` committed (its events are in the log, or in the pending journal): drop the folded lines."""
    if tx.spool_size:
        Spool(tx.wb.git.git_dir).drop(tx.spool_size)
        tx.spool_size = 0


def agent_turn(tx: StageContext) -> dict[str, Any] | None:
    return Spool(tx.wb.git.git_dir).turn()


def emit_agent_edit(tx: StageContext, edit: dict[str, Any], turn: dict[str, Any]) -> None:
    """A change to `.workbench/` found during the agent's turn: recorded as `agent.edit` by `agent`, and held
    to the agent's rules — a task does not become done by an edit (its acceptance never ran): it keeps the
    status it had; nor is it removed (no wb verb removes one): it stays. The payload lists both under
    `refused`."""
    payload = dict(edit)
    payload["agent"] = str(turn.get("agent") or "")
    payload["agent_session"] = str(turn.get("agent_session") or "")
    if edit.get("file") == "board.json":
        before = {t.get("id"): t for t in _board_before(tx).get("tasks", []) if isinstance(t, dict)}
        upsert, refused = [], []
        for task in edit.get("upsert", []):
            old = before.get(task.get("id"))
            old_status = old.get("status", "todo") if old else "todo"
            if task.get("status") == "done" and old_status != "done":
                task = {**task, "status": old_status}
                refused.append({"task": task.get("id"), "status": "done",
                                "rule": f"a task is done when its acceptance passes: `wb task done {task.get('id')}`"})
            upsert.append(task)
        for task_id in edit.get("remove", []):  # no verb of wb removes a task: it stays, where it was
            if task_id in before:
                upsert.append(before[task_id])
                refused.append({"task": task_id, "removed": True, "rule": "a task is not removed: "
                                f"`wb task set {task_id} status=cancelled` cancels it"})
        payload["upsert"] = upsert
        payload["remove"] = []
        if refused:
            payload["refused"] = refused
            restored = {r["task"] for r in refused if r.get("removed")}
            if restored and "order" not in edit:
                now = [t.get("id") for t in tx.docs.board.get("tasks", [])]
                payload["order"] = [tid for tid in before if tid in restored or tid in now] + \
                    [tid for tid in now if tid not in before]
    tx.emit("agent.edit", payload, actor="agent", via="edit")


def _board_before(tx: StageContext) -> dict[str, Any]:
    """board.json as wb last wrote it (its cache; in a fresh clone, as committed)."""
    from workbench.errors import GitError, WorkbenchError
    from workbench.model.boardfile import parse_board
    from workbench.model.layout import WB_DIR
    from workbench.store import caches

    raw = caches.read_board_cache(tx.wb.paths)
    if raw is None:
        try:
            raw = tx.wb.git.committed_file(f"{WB_DIR}/board.json", "HEAD")
        except (GitError, OSError, ValueError):
            raw = None
    try:
        return parse_board(raw) if raw else {}
    except WorkbenchError:
        return {}
