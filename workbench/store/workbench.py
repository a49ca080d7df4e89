"""The workbench on disk: finding it, and loading its documents (snapshots + the events after them).

A load reads the snapshots (state.md from wb's own cache when it is unchanged), notes a person's hand edits
(workbench.store.humanedit), folds in the events the snapshots do not hold yet (after a crash) and validates what
it did not write itself. Writing goes through `Workbench.transaction()` (workbench.store.transaction) alone.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import GitError, NotFound, Refused
from workbench.git.repo import CommitOutcome, GitRepo, find_worktree
from workbench.model import reducer, schemas
from workbench.model.boardfile import check_board_shape, parse_board
from workbench.model.jsonl import loads_record, split_lines
from workbench.model.layout import WB_DIR, Paths, check_no_links
from workbench.model.redaction import redact, secret_values
from workbench.model.reducer import Docs
from workbench.store import caches, humanedit
from workbench.store.config import load_config
from workbench.store.eventlog import EventLog, Tail
from workbench.store.lock import WorkbenchLock
from workbench.store.transaction import Transaction


@dataclass
class Loaded:
    docs: Docs
    tail: Tail
    state_node: Any  # round-trip node of state.md, None when not parsed
    state_raw: bytes  # state.md as read
    file_state: dict[str, Any]  # its frontmatter as read, before the events after it were folded in
    human_edits: list[dict[str, Any]] = field(default_factory=list)
    replayed: int = 0  # events after the snapshot folded in on load (crash recovery)


class Workbench:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths = Paths(root)
        check_no_links(self.paths)
        self.log = EventLog(self.paths.events)
        self.git = GitRepo(root)
        self._config: dict[str, Any] | None = None
        # the last state.md this process read or wrote: (bytes, round-trip node, data, body)
        self._node_cache: tuple[bytes, Any, dict[str, Any], str] | None = None

    @classmethod
    def discover(cls, start: Path | None = None) -> Workbench:
        root = find_worktree(start or Path.cwd())
        wb = cls(root)
        if not wb.paths.wb.is_dir():
            raise NotFound(f"no workbench in {root}: run `wb init` first")
        return wb

    # -- config -------------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        if self._config is None:
            self._config = load_config(self.paths.config)
        return self._config

    def lock(self) -> WorkbenchLock:
        env = os.environ.get("WB_LOCK_TIMEOUT")
        timeout = float(env) if env else float(self.config["lock_timeout"])
        return WorkbenchLock(self.paths.lock, timeout)

    # -- reading ------------------------------------------------------------------------------
    def load(self, *, detect_human: bool = True, need_node: bool = False, need_body: bool = True) -> Loaded:
        """Snapshots + the events after them. Without the lock this is a consistent-enough read for display;
        a transaction calls it under the lock. `need_body=False` (wb status) skips reading the decision log
        when state.md is as wb wrote it: the history's size then costs nothing."""
        p = self.paths
        try:
            board_raw = p.board.read_bytes()
            state_cached = caches.read_state_cache(p)
            state_raw = b"" if (state_cached and state_cached["fresh"] and not need_body) else p.state.read_bytes()
        except FileNotFoundError as err:
            raise NotFound(f"{WB_DIR}/{Path(err.filename).name} is missing: restore it with git "
                           "(`git checkout -- .workbench`) or run `wb doctor`") from None
        if state_raw and state_cached and not state_cached["fresh"]:
            state_cached["fresh"] = state_cached.get("sha") == caches.sha(state_raw)
        node = None
        if not need_node and state_cached and state_cached["fresh"]:
            state = state_cached["state"]
            body = caches.cached_body(p) if need_body else ""
            if body is None:
                node, state, body = self.parse_state(state_raw or p.state.read_bytes())
        else:
            if state_cached is not None and "body" not in state_cached:
                state_cached["body"] = caches.cached_body(p)
                if state_cached["body"] is None:
                    state_cached = None
            node, state, body = self.parse_state(state_raw)
        board = parse_board(board_raw)
        schemas.check_version("state.md", state.get("schema_version"), reducer.STATE_VERSION)
        schemas.check_version("board.json", board.get("schema_version"), reducer.BOARD_VERSION)
        if node is not None:  # read from the file, not from wb's own cache: a hand edit or a clone, validated
            schemas.check("state", state, "state.md")
        check_board_shape(board)
        if caches.read_board_cache(p) != board_raw:  # not what wb last wrote: a hand edit (or a clone), validated whole
            schemas.check("board", board, "board.json")
        file_state = copy.deepcopy(state)
        docs = Docs(state, body, board)
        human: list[dict[str, Any]] = []
        if detect_human:
            human = humanedit.find_edits(self, docs, state_raw, board_raw, state_cached)
        last = _int(state.get("last_event"))
        board_from = _int(board.get("last_event"))
        tail, after = self.log.scan_after(last)
        if human and after:  # a crash after the log append kept a recorded hand edit from the snapshots
            recorded = [e["payload"] for e in after if e["type"] == "human.edit"]
            human = [edit for edit in human if edit not in recorded]
        if tail.seq < last:
            if (p.wb / ".migrate.json").exists():  # the snapshots are written before the migration's event
                raise Refused("a `wb migrate` was interrupted before it finished: run `wb migrate` to finish it")
            raise Refused(f"state.md: last_event {last} is beyond the event log's last seq {tail.seq}; "
                          "run `wb doctor`")
        for event in after:
            schemas.check("event", event, f"events.jsonl (seq {event['seq']})")  # unvalidated until folded
            try:
                reducer.apply(docs, event, board_from=board_from)
            except (KeyError, TypeError, AttributeError, ValueError, IndexError) as err:
                raise Refused(f"events.jsonl: seq {event['seq']} cannot be applied ({err}); "
                              "run `wb doctor`") from None
        if after:  # folded on load (after a crash, or a line written by hand): what they rebuild must be valid
            try:
                body_ok = isinstance(docs.body, str)
            except TypeError:
                body_ok = False
            if not body_ok:
                raise Refused("events.jsonl: the events after the snapshots rebuild a decision log that is not "
                              "text; run `wb doctor`")
            schemas.check("state", docs.state, "state.md (with the events after it)")
            schemas.check("board", docs.board, "board.json (with the events after it)")
        return Loaded(docs, tail, node, state_raw, file_state, human, replayed=len(after))

    def parse_state(self, raw: bytes) -> tuple[Any, dict[str, Any], str]:
        """(round-trip node, frontmatter, body) of state.md's bytes; the last parse is kept for the next one."""
        from workbench.model import statefile

        if self._node_cache is None or self._node_cache[0] != raw:
            parsed = statefile.parse(raw)
            self._node_cache = (raw, parsed.node, parsed.data, parsed.body)
        _, node, data, body = self._node_cache
        return node, copy.deepcopy(data), body

    def keep_state_node(self, raw: bytes, node: Any, data: dict[str, Any], body: str) -> None:
        """Remember state.md as a transaction just wrote it, so the next parse of those bytes is free."""
        self._node_cache = (raw, node, data, body)

    # -- writing ------------------------------------------------------------------------------
    def transaction(self, actor: str = "agent", session: str | None = None, *, commit: bool = True) -> Transaction:
        """One mutation. `commit=False` writes the files but leaves the git commit to a later `checkpoint`
        (a harness step commits once, at its end or at the yield that interrupts it)."""
        return Transaction(self, actor, session, commit=commit)

    def checkpoint(self, summary: str, session: str | None = None) -> CommitOutcome:
        """Commit whatever the workbench holds now (the end of a harness step)."""
        git_cfg = self.config["git"]
        if git_cfg.get("commit") == "off":
            return CommitOutcome()
        summary = redact(summary, secret_values(self.config))  # a step's description may quote a secret
        with self.lock():
            trailers = [f"Wb-Event: {self.log.tail().seq}"] + ([f"Wb-Session: {session}"] if session else [])
            try:
                return self.git.commit_workbench(f"{summary}\n\n" + "\n".join(trailers) + "\n", git_cfg.get("ref"))
            except (GitError, OSError) as err:  # OSError: a full disk while writing git's objects
                return CommitOutcome(skipped=f"written but not committed: {getattr(err, 'strerror', None) or err}")

    def recorded_call(self, key: str) -> dict[str, Any] | None:
        """The last journal record of a tool call (calls.jsonl), or None."""
        try:
            data = self.paths.calls.read_bytes()
        except FileNotFoundError:
            return None
        found = None
        for line in split_lines(data)[0]:  # a torn last line (no newline) was never acknowledged
            if key.encode() not in line:
                continue
            record = loads_record(line)  # a damaged line is skipped
            if record is not None and record.get("key") == key:
                found = record
        return found


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
