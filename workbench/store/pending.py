"""What wb acknowledged but git does not hold yet, kept where no checkout or stash can take it.

`.workbench/` is in the user's work tree, so the user's own git can take it away at any moment: a `git stash`
between wb's log append and its commit, a `git checkout -- .workbench`, a `merge --abort` or `reset --hard`
after a write wb could not commit (mid-merge, no identity). So before a transaction writes the work tree, it
appends its events and tool-call records to `pending.jsonl` in the git directory (`.git/wb/pending.jsonl`, or
`.git/wb/worktrees/<key>/` for a linked worktree: its own git directory goes with `git worktree remove`, see
store/kept.py), with fsync — the mutation is acknowledged only once it is there. A commit that contains them empties it.

While a merge, rebase, cherry-pick, revert or bisect is in progress, or HEAD is detached, wb does not write
the work tree at all (a write there makes the user's `--abort`, `bisect reset` or `checkout` fail): events
go to this journal alone, every load folds them in, and the first transaction after the operation ends
writes them to `.workbench/` and commits them. A load also folds in, and the next transaction writes again,
any pending event the work tree lost to the user's git.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from workbench import faults
from workbench.model.jsonl import encode, loads_record, split_lines

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.git.repo import GitRepo
    from workbench.store.eventlog import EventLog


class Pending:
    def __init__(self, keep: Path) -> None:
        # `keep`: GitRepo.keep_dir, the git directory's wb/ (a linked worktree: the common git directory's
        # wb/worktrees/<key>/, which `git worktree remove` leaves alone; store/kept.py)
        self.path = keep / "pending.jsonl"
        # the last batch a commit holds, kept until a later write has seen it in the log: a `git stash` or
        # `merge --abort` of the user's that read HEAD before wb's commit can move the branch back over it
        # a moment after (git's reflog then says "reset: moving to HEAD" at the older commit)
        self.committed = keep / "committed.jsonl"
        # pending events that no longer applied to the branch they landed on (`set_aside`), for a person to read
        self.aside = keep / "refused.jsonl"

    def __bool__(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except OSError:
            return False

    def read(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(events, call records) in the order they were acknowledged; a torn last line (a crash mid-append,
        never acknowledged) is skipped."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return [], []
        return _records(raw)

    def append(self, events: list[dict[str, Any]], calls: list[dict[str, Any]], *, durable: bool = True,
               files: dict[str, bytes] | None = None) -> None:
        """Durable before it returns (fsync of the file, and of the directory when it is new). `durable=False`
        when the batch is about to reach the fsynced event log and a commit anyway: the journal then only has
        to outlive the process (a kill -9, a checkout mid-write), which the page cache does; `sync()` makes
        it durable after all when the commit is deferred and the journal stays the only copy. `files`: the
        files of `.workbench/` the events name (the handoff packet, an acceptance output), kept with them when
        the work tree is not written now, and written by the write that lands them (`files()`)."""
        if not events and not calls and not files:
            return
        lines = [json.dumps({"kind": "call", "record": c}, ensure_ascii=False, separators=(",", ":")).encode()
                 for c in calls]
        if files:
            import base64  # here: most batches keep no file

            lines += [json.dumps({"kind": "file", "rel": rel, "b64": base64.b64encode(data).decode()}).encode()
                      for rel, data in files.items()]
        lines += [b'{"kind":"event","record":' + encode(e) + b"}" for e in events]
        new = not self.path.parent.is_dir()
        self.path.parent.mkdir(exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, b"".join(line + b"\n" for line in lines))
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if new and durable:
            dfd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def files(self) -> dict[str, bytes]:
        """{path in .workbench/: bytes} of the files kept with the journal's events (the last one of each)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        out: dict[str, bytes] = {}
        for line in split_lines(raw)[0]:
            record = loads_record(line)
            if record is not None and record.get("kind") == "file" and isinstance(record.get("rel"), str):
                import base64  # here: most journals keep no file

                try:
                    out[record["rel"]] = base64.b64decode(str(record.get("b64", "")), validate=True)
                except ValueError:
                    continue
        return out

    def sync(self) -> None:
        """fsync what `append(durable=False)` wrote, and the directory that holds it."""
        for target, flags in ((self.path, os.O_RDONLY), (self.path.parent, os.O_RDONLY)):
            try:
                fd = os.open(target, flags)
            except FileNotFoundError:
                return
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def settle(self, ref: str | None = None, commit: str | None = None) -> None:
        """Everything in it is in a commit now: kept aside as the last committed batch, with the branch and the
        commit that hold it (see `taken_back`). Without them (state on its own ref: no user's git moves it)
        it is simply emptied."""
        if ref is None or commit is None:
            self.clear()
            return
        if not self.path.exists():
            return
        # the last batch dropped, then this one renamed into its place: a rename over an existing file has
        # ext4 write the renamed file's data out at once (auto_da_alloc), ~0.4 ms of a mutation (issue 33). A
        # kill between the two leaves this batch in the journal, where the next load finds its events in the
        # log and leaves them (the batch before is one the load of this write checked already)
        self.forget()
        faults.point("settle_dropped_last")
        try:
            os.rename(self.path, self.committed)
        except FileNotFoundError:
            return
        with open(self.committed, "ab") as fh:  # the page cache is enough: it only has to outlive the process
            fh.write(json.dumps({"kind": "commit", "ref": ref, "sha": commit}).encode() + b"\n")

    def taken_back(self, log: EventLog, git: GitRepo) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(events, call records) of the last committed batch that are on no branch now: the work tree's log
        lacks them, HEAD is still on the branch wb committed them to, and that commit is no longer in the
        branch's history — the user's git moved the branch and the work tree back over wb's commit just
        after it was made. On another branch (a checkout) the commit is safe where it is: forgotten here. One
        read near the log's end when the batch is there (the usual case), and no git process."""
        from workbench.errors import WorkbenchError

        # the batch's last event and its commit, read line by line: the whole batch (a Bench.record_events of
        # 45,000 events, 22 MB) is neither parsed nor held by every first write after it (issue 33); only the
        # rare case below reads it whole
        made, last = _commit_and_last(self.committed)
        if last is None or made is None:
            return [], []
        try:
            if any(e.get("id") == last.get("id") for e in log.read_after(max(0, int(last.get("seq") or 1) - 1))):
                return [], []
            if git.symbolic_head() != made.get("ref"):
                self.forget()
                return [], []
            tip = git.read_ref(str(made["ref"]))
            if tip is not None and git.is_ancestor(str(made.get("sha")), tip):
                return [], []  # the branch still holds it: a work tree put back by hand, not a lost commit
            if not stale_reset(git.common_dir / "logs" / str(made["ref"]), str(made.get("sha"))):
                self.forget()  # the user moved the branch back on purpose (`git reset --hard HEAD~3`): an undo
                return [], []
            have = {e.get("id") for _line, e in log.iter_all()}  # rare: confirm against the whole log
        except (OSError, ValueError, WorkbenchError):
            return [], []  # a log that does not read: the load says what is wrong with it
        try:
            raw = self.committed.read_bytes()
        except FileNotFoundError:
            return [], []
        events, calls = _records(raw)
        return [e for e in events if e.get("id") not in have], calls

    def set_aside(self, events: list[dict[str, Any]]) -> Path:
        """Pending events that no longer apply to the branch (store/landing.py) moved out of the journal into
        `refused.jsonl` beside it (fsynced first: they were acknowledged, and a person may want them), so the
        rest lands and these are not tried again. Returns where they are kept."""
        aside = self.aside
        ids = {e.get("id") for e in events}
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, b"".join(b'{"kind":"event","record":' + encode(e) + b"}\n" for e in events))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return aside
        kept = [line + b"\n" for line in split_lines(raw)[0]
                if not ((r := loads_record(line)) is not None and r.get("kind") == "event"
                        and isinstance(r.get("record"), dict) and r["record"].get("id") in ids)]
        tmp = self.path.with_name(".tmp-pending.jsonl")
        with open(tmp, "wb") as fh:
            fh.write(b"".join(kept))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        return aside

    def set_aside_count(self) -> int:
        """How many events `set_aside` keeps (one stat when none)."""
        try:
            if not self.aside.stat().st_size:
                return 0
            return len(_records(self.aside.read_bytes())[0])
        except OSError:
            return 0

    def forget(self) -> None:
        try:
            self.committed.unlink()
        except FileNotFoundError:
            pass

    def revive(self, log: EventLog, git: GitRepo) -> int:
        """`taken_back`'s events appended to the journal again, so the load folds them in and the transaction
        writes and commits them. Returns how many."""
        lost, calls = self.taken_back(log, git)
        if not lost:
            return 0
        self.append(lost, calls)
        self.forget()
        return len(lost)

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def take_back(self, size: int) -> None:
        """The batch appended after `size` was refused (a full disk before it reached the log): it was never
        acknowledged, so the next write must not adopt it — the journal ends where it ended before."""
        try:
            os.truncate(self.path, size)
        except FileNotFoundError:
            pass

    def clear(self) -> None:
        """Everything in it is in a commit now. No fsync: a truncation lost to a power cut leaves events the log
        already holds, which a load finds there by id and leaves alone."""
        try:
            os.truncate(self.path, 0)
        except FileNotFoundError:
            pass


STALE_RESET = "reset: moving to HEAD"


def stale_reset(reflog: Path, sha: str) -> bool:
    """Whether the branch's reflog says its move away from wb's commit `sha` was a reset to HEAD as the user's
    git had read it before that commit: `git stash push` and `git merge --abort` reset to "HEAD", and git
    writes "reset: moving to HEAD" at the older commit. Any other move — `git reset --hard HEAD~3`, a reset to a
    named commit, an amend, a rebase — names where the user wanted the branch: the user undid wb's commits, and
    wb must not write them again. No reflog (core.logAllRefUpdates off) or no line for that move: it cannot be
    told, and what was acknowledged is kept (True)."""
    try:
        lines = reflog.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return True
    for line in reversed(lines):
        meta, _tab, message = line.partition("\t")
        fields = meta.split(" ", 2)
        if len(fields) >= 2 and fields[0] == sha and fields[1] != sha:
            return message.strip() == STALE_RESET
    return True


def _records(raw: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for line in split_lines(raw)[0]:
        record = loads_record(line)  # a damaged line is skipped
        if record is not None and isinstance(record.get("record"), dict) and record.get("kind") in ("event", "call"):
            (events if record.get("kind") == "event" else calls).append(record["record"])  # ("commit", "file")
    return events, calls


def missing_from_log(pending: list[dict[str, Any]], log_ids: set[str]) -> list[dict[str, Any]]:
    """The pending events the work tree's log lacks, in order, as fresh records (seq and prev are given again
    when they are written: the tail they were chained to may be gone)."""
    out = []
    for event in pending:
        if event.get("id") in log_ids:
            continue
        fresh = {k: v for k, v in event.items() if k not in ("seq", "prev", "more")}
        out.append(fresh)
    return out


_NEWEST = 16  # lines kept from the end of a committed batch while it is read: its last event is among them


def _commit_and_last(path: Path) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the first commit record, the last event's record) of the complete lines of a committed batch (a torn
    last line left out, as split_lines does), reading one line at a time: only lines naming "commit" are
    parsed for the first, and only the newest few for the second — all of them, from the end, only when none of
    those is an event."""
    from collections import deque

    made: dict[str, Any] | None = None
    newest: deque[bytes] = deque(maxlen=_NEWEST)
    count = 0
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # the torn tail
                line = line[:-1]
                count += 1
                newest.append(line)
                if made is None and b'"commit"' in line:
                    record = loads_record(line)
                    if record is not None and record.get("kind") == "commit":
                        made = record
    except FileNotFoundError:
        return None, None
    lines: Any = newest
    if count > _NEWEST and not any(_event_of(line) is not None for line in newest):
        try:
            lines = split_lines(path.read_bytes())[0]
        except FileNotFoundError:
            return None, None
    last = next((r for r in map(_event_of, reversed(lines)) if r is not None), None)
    return made, last


def _event_of(line: bytes) -> dict[str, Any] | None:
    record = loads_record(line)
    if record is not None and record.get("kind") == "event" and isinstance(record.get("record"), dict):
        event: dict[str, Any] = record["record"]
        return event
    return None
