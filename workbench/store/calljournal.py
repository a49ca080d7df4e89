"""The calls that reach the outside world, journaled where no checkout can take them and every worktree sees.

calls.jsonl lives in `.workbench/`, so it goes with the branch: a session paused on `main`, carried to
`other` by `git checkout -b other` and finished there, is still paused on `main` once the user checks it
out again — and without more, `wb resume` there would run the same tools a second time. So every tool call
wb makes is also claimed, by its idempotency key (`session:step:attempt`), in
`<git common dir>/wb/calls.jsonl` before it runs, and its result is written there when it ends; every yield
answered is recorded there too. The common directory is the repository's own (`.git`), shared by every
linked worktree and touched by no checkout, stash or reset.

On the SQLite backend the call records are the database's calls table (store/sqlitedb.py), written in the
transaction of the event that journals them; this journal is kept as on files, the one record a tool's outcome
reaches outside any transaction (between the tool's end and the `tool.result` that records it): in the git
common directory, or for a workbench kept without git (`wb init --no-git`) in `.workbench/.local/wb/`.

A claim is made under an flock of `calls.lock` beside the journal, so two worktrees resuming the same session
at the same moment cannot both claim one call or both answer one yield. Each record says where it was made
(`branch`, `worktree`): a claim or an answer made here (this worktree, this branch) is this session's own
(a retry after a crash), one made anywhere else means the session went on there.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.model.jsonl import loads_record, split_lines


class CallJournal:
    def __init__(self, common_dir: Path, branch: str | None, worktree: Path) -> None:
        self.path = common_dir / "wb" / "calls.jsonl"
        self.where = {"branch": branch or "(detached HEAD)", "worktree": str(worktree)}

    @classmethod
    def for_worktree(cls, root: Path, git: Any = None) -> CallJournal | None:
        """The journal of the repository `root` is a worktree of; None outside git (an in-memory loop's tools).
        `git`: the workbench's own (`Workbench.git`): a repository's, or for a workbench kept in SQLite without
        git (`wb init --no-git`) its NoGit (store/sqlitedb.py), whose common directory is `.workbench/.local/`:
        the journal is there, and its records say `(no git)` for the branch."""
        from workbench.errors import GitError
        from workbench.git.repo import GitRepo

        try:
            if git is None:
                git = GitRepo(root)
            elif getattr(git, "local", None) is not None:  # NoGit: no branch, no worktree but this one
                return cls(git.common_dir, "(no git)", root.resolve())
            head = git.symbolic_head()
            return cls(git.common_dir, head[len("refs/heads/"):] if head and head.startswith("refs/heads/")
                       else head, root.resolve())
        except (GitError, OSError, IndexError):
            return None

    def here(self, record: dict[str, Any]) -> bool:
        return bool(record.get("where") == self.where)

    def describe(self, record: dict[str, Any]) -> str:
        where = record.get("where") or {}
        return f"on branch {where.get('branch', '?')} in worktree {where.get('worktree', '?')}"

    # -- tool calls ---------------------------------------------------------------------------------------
    def claim_call(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """Claim the call `record["key"]` before it runs: None when it is ours to run now (claimed, durably),
        else the last record of that key (made elsewhere, or here before a crash) — the call is not run again."""
        with self._locked():
            prior = self.call(record["key"])
            if prior is not None:
                return prior
            self._append({**record, "kind": "call", "where": self.where})
        return None

    def finish_call(self, record: dict[str, Any]) -> None:
        """The outcome of a claimed call (status done | error, with its result or error)."""
        with self._locked():
            self._append({**record, "kind": "call", "where": self.where})

    def call(self, key: str) -> dict[str, Any] | None:
        found = None
        for record in self._records(key):
            if record.get("kind") == "call" and record.get("key") == key:
                found = record
        return found

    # -- yields ---------------------------------------------------------------------------------------
    def claim_answer(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """Record the answer to yield `record["yield_id"]`: None when it is this worktree's and branch's to give
        (no answer yet, or an answer given here before a crash), else the answer given elsewhere."""
        with self._locked():
            prior = self.answer(record["yield_id"])
            if prior is None:
                self._append({**record, "kind": "answer", "where": self.where})
        return None if prior is None or self.here(prior) else prior

    def answer(self, yield_id: str) -> dict[str, Any] | None:
        """The first answer given to the yield, wherever it was given, or None."""
        for record in self._records(yield_id):
            if record.get("kind") == "answer" and record.get("yield_id") == yield_id:
                return record
        return None

    # -- the file ---------------------------------------------------------------------------------------
    def _records(self, needle: str) -> Iterator[dict[str, Any]]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        token = needle.encode()
        for line in split_lines(raw)[0]:  # a torn last line (a crash mid-append) was never acknowledged
            if token in line:
                record = loads_record(line)
                if record is not None:
                    yield record

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str).encode() + b"\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        new = not self.path.parent.is_dir()
        self.path.parent.mkdir(exist_ok=True)
        if new:
            fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(self.path.with_name("calls.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock
