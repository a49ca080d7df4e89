"""The one commit policy: how `.workbench/` becomes a git commit, for every path that writes it.

A mutation (the transaction), a harness step's checkpoint, `wb init`, `wb migrate` and `wb doctor --fix` all
commit through `commit()`, and nothing else calls `GitRepo.commit_workbench`. It decides, in one place:

- **"commit off"**: `git.commit: off` in config.yaml writes the files and never commits;
- **the gate**: the files about to be committed are validated first — config.yaml, state.md, board.json (each
  taken as valid without a re-read when it is byte for byte what wb itself last wrote, as a load does), the
  tail of events.jsonl (no torn line, the chain and the schema of the newest events) and of calls.jsonl (the
  lines appended since the gate last found it valid). A file that fails is never committed: nothing is (a
  commit is a snapshot of the whole workbench), the files stay on disk uncommitted, and the outcome says why
  in one line (the next commit after the file is fixed takes everything);
- **the message**: a summary, then the trailers `Wb-Event: <last seq>` and `Wb-Session: <id>`, the whole
  message redacted (config.yaml `redact`);
- **identity, mid-merge, detached HEAD, git.ref**: git/repo.py's `commit_workbench` (an operation in progress
  or a detached HEAD is a skipped commit, said as a warning);
- **errors**: a GitError (no identity, a ref that keeps moving) or an OSError (a full disk while writing git's
  objects) is a skipped commit with a one-line reason: the change is durable in the files, the next commit
  takes it;
- **group commit**: a transaction with writers queued behind it on the lock leaves its commit to the last of
  them (`leave_to_next`), as a database's group commit leaves the flush of its log to one writer for many:
  the write is acknowledged already — its events are in events.jsonl (fsync) and in the pending journal under
  the git directory — and only its git commit waits. It says what it left in `owed.jsonl` (beside the pending
  journal), and the next commit, by whichever path, carries it: one `Wb-Event` trailer per write it holds and
  each write's summary in its body. A commit is never left for more than GROUP_MAX writes or GROUP_SECONDS,
  so a queue that never empties still commits; a writer alone commits its own write, as before. Should every
  writer queued behind die before its turn, the write is committed by the next wb write (as after a crash
  between the log and the commit), and `wb status` says the workbench has uncommitted changes until then.

The caller holds the workbench lock.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from workbench.errors import GitError, NotFound, Refused, SchemaRefused, WorkbenchError
from workbench.git.objects import listing_key
from workbench.git.repo import CommitOutcome
from workbench.model import reducer, schemas
from workbench.model.boardfile import check_board_shape, duplicate_ids, parse_board, read_board_bytes
from workbench.model.display import escape
from workbench.model.jsonl import split_lines
from workbench.model.layout import COMMITTED_FILES, Paths
from workbench.model.redaction import redact, secret_values
from workbench.store import caches, sealedfiles
from workbench.store.config import load_config
from workbench.store.eventlog import Tail

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.git.repo import Gate
    from workbench.store.lock import WorkbenchLock
    from workbench.store.stagecontext import StageWorkbench

# group commit: a commit is left to the writer behind for at most this many writes, or this long
GROUP_MAX = 32
GROUP_SECONDS = 2.0

# How far back the gate reads a log it did not just write: the newest events (what a write since the last
# commit appended, in any ordinary case); `wb validate` reads the whole log.
TAIL_EVENTS = 64
_TAIL_BYTES = 1 << 16


def commit(wb: StageWorkbench, summary: str, *, seq: int | None = None, session: str | None = None,
           events_since: int | None = None, git: dict[str, Any] | None = None,
           secrets: list[str] | None = None) -> CommitOutcome:
    """Commit `.workbench/` as it is now, under the policy above. `seq` (the Wb-Event trailer) defaults to the
    log's last event; `events_since` is the seq after which the gate checks the log (default: the last
    TAIL_EVENTS events); `git` and `secrets` default to config.yaml's (`wb migrate` passes its own, read
    before config.yaml was migrated)."""
    git_cfg = wb.config["git"] if git is None else git
    if not commits(git_cfg):
        return CommitOutcome()
    left = owed(wb)
    if left:  # writes whose commit was left to this one: the gate checks their events too
        first = min(w["first"] for w in left) - 1
        events_since = first if events_since is None else min(events_since, first)
    checked = {rel: listing_key(wb.paths.wb / rel) for rel in COMMITTED_FILES}  # as the gate below reads them
    try:
        tail = check_committable(wb, events_since)
    except WorkbenchError as err:
        return CommitOutcome(skipped=f"not committed: {err}")
    except OSError as err:  # a file that cannot be read is not committed either
        return CommitOutcome(skipped=f"not committed: {err.filename or 'a workbench file'}: {err.strerror or err}")
    # the sealed files (store/sealedfiles.py) are checked on the listing the commit is made of
    gate = sealedfiles.commit_gate(wb, git_cfg.get("ref") or None)
    outcome = _land(wb, _message(summary, tail.seq if seq is None else seq, session, left), git_cfg, secrets,
                    checked, gate)
    if left and outcome.skipped is None:
        _owed_path(wb).unlink(missing_ok=True)  # carried (or already in HEAD's tree): owed no longer
    return outcome


def commit_sqlite_files(wb: StageWorkbench, summary: str) -> CommitOutcome:
    """A SQLite workbench's files in the work tree (config.yaml and .gitignore; its events and snapshots are in
    the database) committed by `wb init`, so that `git status` is clean after it as on files (issue 31): the
    same policy (commit off, identity, mid-merge, detached HEAD, git.ref, redaction), gated on config.yaml."""
    git_cfg = wb.config["git"]
    if not commits(git_cfg):
        return CommitOutcome()
    try:
        load_config(wb.paths.config)
    except WorkbenchError as err:
        return CommitOutcome(skipped=f"not committed: {err}")
    return _land(wb, _message(summary, wb.log.tail().seq, None, []), git_cfg, None)


def _land(wb: StageWorkbench, message: str, git_cfg: dict[str, Any], secrets: list[str] | None,
          checked: dict[str, tuple[int, int, int, int] | None] | None = None,
          gate: Gate | None = None) -> CommitOutcome:
    message = redact(message, secret_values(wb.config) if secrets is None else secrets)
    message = escape(message, layout=True)  # `git log` prints it raw: an ESC or a bidi override is shown, not obeyed
    try:
        return wb.git.commit_workbench(message, git_cfg.get("ref"), checked, gate)
    except (GitError, OSError) as err:  # OSError: a full disk while writing git's objects
        # The change is durable (log + snapshots); only its commit failed. The next write commits it.
        return CommitOutcome(skipped=f"written but not committed: {getattr(err, 'strerror', None) or err}")


def _message(summary: str, seq: int, session: str | None, left: list[dict[str, Any]]) -> str:
    """The summary line, then (a group commit) each write's own summary, then the trailers: a `Wb-Event` per
    write the commit carries and a `Wb-Session` per session among them."""
    writes = [*left, {"summary": summary.strip(), "seq": seq, "session": session}] if summary.strip() else left
    subject = writes[0]["summary"] if len(writes) == 1 else f"{writes[-1]['summary']} (+{len(writes) - 1} more)"
    body = "" if len(writes) == 1 else "\n".join(str(w["summary"]) for w in writes) + "\n\n"
    sessions = list(dict.fromkeys(str(w["session"]) for w in writes if w.get("session")))
    trailers = [f"Wb-Event: {w['seq']}" for w in writes] + [f"Wb-Session: {s}" for s in sessions]
    return f"{subject}\n\n{body}" + "\n".join(trailers) + "\n"


# -- group commit ----------------------------------------------------------------------------------------------
def leave_to_next(wb: StageWorkbench, lock: WorkbenchLock) -> bool:
    """Whether the transaction holding `lock` leaves its commit to a writer queued behind it: one is, and the
    commits left so far are fewer than GROUP_MAX and younger than GROUP_SECONDS."""
    if not lock.behind():
        return False
    left = owed(wb)
    return len(left) < GROUP_MAX and (not left or time.time() - float(left[0].get("at", 0)) < GROUP_SECONDS)


def commit_owed(wb: StageWorkbench, lock: WorkbenchLock) -> CommitOutcome | None:
    """The commit left to this writer, made although it has none of its own to make (its write had no events,
    or failed) — unless it can leave it in turn. None: nothing was owed, or it is left again."""
    if not owed(wb) or leave_to_next(wb, lock):
        return None
    return commit(wb, "")


def owe(wb: StageWorkbench, summary: str, first: int, seq: int, session: str | None) -> None:
    """Note a write whose commit is left to the next one (its events are durable already: no fsync here; a note
    lost to a power cut loses a trailer, never the write, which the next commit's tree holds all the same)."""
    path = _owed_path(wb)
    path.parent.mkdir(exist_ok=True)
    line = json.dumps({"summary": summary.strip(), "first": first, "seq": seq, "session": session,
                       "at": time.time()}, ensure_ascii=False)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def owed(wb: StageWorkbench) -> list[dict[str, Any]]:
    """The writes left to the next commit, in order; a damaged line (a torn append) is skipped."""
    try:
        raw = _owed_path(wb).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            write = json.loads(line)
        except ValueError:
            continue
        if isinstance(write, dict) and isinstance(write.get("seq"), int) and isinstance(write.get("first"), int):
            out.append(write)
    return out


def _owed_path(wb: StageWorkbench) -> Path:
    return wb.git.git_dir / "wb" / "owed.jsonl"


def commits(git: dict[str, Any]) -> bool:
    """Whether config.yaml's `git` settings commit at all (`commit: off` writes the files only)."""
    return git.get("commit") != "off"


# -- the gate --------------------------------------------------------------------------------------------------
def check_committable(wb: StageWorkbench, events_since: int | None = None) -> Tail:
    """Raise a WorkbenchError (one line: file, place, rule, what to do) when a file about to be committed fails
    validation; return the log's tail."""
    p = wb.paths
    load_config(p.config)  # cached by the file's hash: a re-check costs a read
    tail = _check_log(wb, events_since)
    _check_snapshots(p, tail)
    _check_calls(p)
    return tail


def _check_log(wb: StageWorkbench, events_since: int | None) -> Tail:
    if not wb.paths.events.exists():
        raise NotFound("events.jsonl is missing: restore it with git (`git checkout -- .workbench/events.jsonl`)")
    if events_since is None:
        events_since = max(0, wb.log.tail().seq - TAIL_EVENTS)
    tail, newest = wb.log.scan_after(events_since)  # seq without gaps and the hash chain, from the event before
    if tail.torn:
        raise Refused(f"events.jsonl ends with {tail.torn} bytes of an interrupted write (never acknowledged); "
                      "`wb doctor --fix` removes them")
    for event in newest:
        schemas.check("event", event, f"events.jsonl (seq {event['seq']})")
    return tail


def _check_snapshots(p: Paths, tail: Tail) -> None:
    """state.md and board.json: taken as valid when they are what wb last wrote (its .cache/ copies), as a load
    does; otherwise read and validated whole. Neither may be ahead of the log."""
    from workbench.model import statefile

    try:
        board_raw = read_board_bytes(p.board)
        state_cached = caches.read_state_cache(p)
    except FileNotFoundError as err:
        raise NotFound(f"{p.wb.name}/{err.filename and err.filename.rsplit('/', 1)[-1]} is missing: "
                       "`wb doctor --fix` rebuilds it from the event log") from None
    board_last = None  # wb's own board is never ahead of the state.md written with it
    if board_raw != caches.read_board_cache(p):
        board = parse_board(board_raw)
        schemas.check_version("board.json", board.get("schema_version"), reducer.BOARD_VERSION)
        check_board_shape(board)
        schemas.check("board", board, "board.json")
        for i, tid in duplicate_ids(board["tasks"])[:1]:
            raise SchemaRefused("board.json", f"tasks[{i}].id", f"duplicate id {tid}")
        board_last = board.get("last_event")
    if state_cached and (state_cached["fresh"] or state_cached.get("sha") == caches.sha(p.state.read_bytes())):
        state = state_cached["state"]
    else:
        state = statefile.parse(p.state.read_bytes()).data
        schemas.check_version("state.md", state.get("schema_version"), reducer.STATE_VERSION)
        schemas.check("state", state, "state.md")
    for name, last in (("state.md", state.get("last_event")), ("board.json", board_last)):
        if isinstance(last, int) and last > tail.seq:
            raise Refused(f"{name}: last_event {last} is beyond the event log's last seq {tail.seq}; "
                          "run `wb doctor`")


def _check_calls(p: Paths) -> None:
    """The lines of calls.jsonl appended since the gate last found it valid (its size then is kept in .cache/),
    or its newest lines when it was rewritten: whole, JSON, and valid call records."""
    if not p.calls.exists():
        return
    with open(p.calls, "rb") as fh:
        st = os.fstat(fh.fileno())
        seen = caches.read_calls_checked(p)
        if seen.get("size") == st.st_size and seen.get("mtime_ns") == st.st_mtime_ns:
            return  # as it was when last found valid
        start = max(0, st.st_size - _TAIL_BYTES)
        cut_first = start > 0  # the first line of a window from the middle may be cut
        known = seen.get("size")
        if isinstance(known, int) and 0 < known < st.st_size and st.st_size - known <= _TAIL_BYTES:
            fh.seek(known - 1)
            if fh.read(1) == b"\n":  # appended to since it was found valid: the new lines alone
                start, cut_first = known, False
        fh.seek(start)
        data = fh.read()
    if data and not data.endswith(b"\n"):
        raise Refused("calls.jsonl ends with a torn line (an interrupted write, never acknowledged); "
                      "`wb doctor --fix` removes it")
    lines = split_lines(data)[0]
    if cut_first:
        lines = lines[1:]  # the first line of a window from the middle may be cut
    newest = lines[-TAIL_EVENTS:]
    for n, line in enumerate(newest, start=len(lines) - len(newest) + 1):
        where = f"calls.jsonl:{n}" if start == 0 else "calls.jsonl (near its end)"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            raise Refused(f"{where}: damaged line (not JSON); fix the file or restore it with git") from None
        schemas.check("call", record, where)
    caches.write_calls_checked(p, st.st_size, st.st_mtime_ns)
