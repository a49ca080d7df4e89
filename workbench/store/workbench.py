"""The workbench on disk: finding it, and loading its documents (snapshots + the events after them).

A load reads the snapshots (state.md from wb's own cache when it is unchanged), notes a person's hand edits
(workbench.store.humanedit), folds in the events the snapshots do not hold yet (after a crash) and validates what
it did not write itself. Writing goes through `Workbench.transaction()` (workbench.store.transaction) alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench import faults
from workbench.errors import GitError, NotFound, Refused
from workbench.git.discovery import RepoDirs, find_worktree
from workbench.model import schemas
from workbench.model.boardfile import check_board_against, check_board_shape, parse_board, read_board_bytes
from workbench.model.docs import BOARD_VERSION, STATE_VERSION, Docs
from workbench.model.jsonl import copied, loads_record, split_lines
from workbench.model.layout import WB_DIR, Paths, check_no_links
from workbench.store import caches
from workbench.store.eventlog import EventLog, Tail, chain
from workbench.store.loaded import Loaded
from workbench.store.pending import Pending, missing_from_log

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:  # imported where used: a reader (wb status) takes no lock and writes nothing
    from typing import Any

    from workbench.git.repo import CommitOutcome, GitRepo
    from workbench.model.provenance import Who
    from workbench.store.lock import WorkbenchLock
    from workbench.store.transaction import Transaction


class Workbench:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths = Paths(root)
        check_no_links(self.paths)
        self.log = EventLog(self.paths.events)
        self.log.before_sealed_change = self._sealed_change
        self._git: GitRepo | None = None  # built when first asked for (`git`): a read asks only `dirs`
        self._dirs: RepoDirs | None = None
        self._config: dict[str, Any] | None = None
        self.raw_config: dict[str, Any] = {}  # config.yaml as written, the held settings too (store/trust.py)
        self.held_settings: list[Any] = []  # its settings this clone has not trusted, not applied
        self._pending: Pending | None = None
        # the last state.md this process read or wrote: (bytes, round-trip node, data, body)
        self._node_cache: tuple[bytes, Any, dict[str, Any], str] | None = None
        # board.json as this process's last write wrote it and the board it wrote, taken once by the next load
        # when the file holds those bytes still (store/keptboard.py)
        self._kept_board: tuple[bytes, dict[str, Any]] | None = None

    @property
    def git(self) -> GitRepo:
        """The repository as wb records into it (git/repo.py): every layer of git/, built when first asked for."""
        if self._git is None:
            from workbench.git.repo import GitRepo

            self._git = GitRepo(self.root)
        return self._git

    @git.setter
    def git(self, repo: GitRepo) -> None:
        self._git = repo

    @property
    def dirs(self) -> RepoDirs:
        """What a read asks of git — where its directories are, whether a git command of the user's holds the
        index — without the layers that record a commit (git/discovery.py, the lowest of them): `wb task list`
        and `wb status` import none of those (issue 33). Once `git` is built, `git` itself: one discovery."""
        if self._git is not None:
            return self._git
        if self._dirs is None:
            self._dirs = RepoDirs(self.root)
        return self._dirs

    def _sealed_change(self, changes: dict[str, bytes | None]) -> None:
        """wb is about to write or remove these sealed segments: recorded for the commit gate first."""
        from workbench.model.segments import LOG_DIR
        from workbench.store import sealedfiles

        sealedfiles.record_own(self, {f"{LOG_DIR}/{name}": data for name, data in changes.items()})

    @classmethod
    def discover(cls, start: Path | None = None) -> Workbench:
        root = find_worktree(start or Path.cwd())
        wb = cls(root)
        if not wb.paths.wb.is_dir() or not wb.paths.config.exists():
            # a checkout or stash of the user's (it holds the index lock) may be half way through rewriting
            # .workbench/: wait for it to end before saying the workbench is gone
            if wb.dirs.wait_for_users_git() and wb.paths.wb.is_dir() and wb.paths.config.exists():
                wb.register_drivers_if_cloned()
                return wb
            left_out = wb.dirs.workbench_left_out()
            if left_out:
                raise NotFound(f"no workbench in the work tree {root}, but {left_out}")
            if not wb.paths.wb.is_dir():
                raise NotFound(f"no workbench in {root}: run `wb init` first")
        wb.register_drivers_if_cloned()
        return wb

    def register_drivers_if_cloned(self) -> None:
        """A clone carries .workbench/ but not the git config naming wb's diff and merge drivers: register
        them on the first wb command, so `git diff` and `git merge` work there without `wb init`."""
        from workbench.store import drivers

        try:
            if drivers.needs_registration(self.root, self.dirs.common_dir):
                drivers.register_drivers(self.root, self.dirs.common_dir, attributes_too=False)
        except (GitError, OSError):
            pass  # a read-only clone: the drivers are a convenience, never a reason to fail a command

    # -- config -------------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        if self._config is None:
            from workbench.store import trust
            from workbench.store.config import load_config  # imported when first read: `wb task list` never reads it

            config = load_config(self.paths.config)
            # a setting that acts on the person (whose name is on commits, their signing key, a push by itself)
            # applies once trusted here; until then wb acts as if it were not set (`wb trust` lists it)
            self.held_settings = trust.held_settings(self.git.common_dir, config)
            self.raw_config = config
            self._config = trust.without(config, self.held_settings) if self.held_settings else config
            self.git.configure(self._config["git"])  # author, signing, hooks: how state commits are made
        return self._config

    def reload_config(self) -> dict[str, Any]:
        """config.yaml read again (after `wb init` or `wb migrate` wrote it)."""
        self._config = None
        return self.config

    def lock(self) -> WorkbenchLock:
        from workbench.store.lock import WorkbenchLock

        env = os.environ.get("WB_LOCK_TIMEOUT")
        timeout = float(env) if env else float(self.config["lock_timeout"])
        return WorkbenchLock(self.paths.lock, timeout, queue=self.git.git_dir / "wb" / "lock-queue")

    # -- reading ------------------------------------------------------------------------------
    def load(self, *, detect_human: bool = True, need_node: bool = False, need_body: bool = True,
             create: bool = False, thorough: bool = False) -> Loaded:
        """Snapshots + the events after them. Without the lock this is a consistent-enough read for display;
        a transaction calls it under the lock. `need_body=False` (wb status) skips reading the decision log
        when state.md is as wb wrote it: the history's size then costs nothing. `create` (`wb init`): a
        missing state.md or board.json is read as the log rebuilds it — folded from its first event, or
        empty when the log is — and named in `rebuilt`, for the transaction to write. `thorough` (a
        transaction, replay): with no cache of wb's last write (a fresh clone), hand edits are looked for
        against what the log folds to, not against what is committed (once: the write then caches)."""
        p = self.paths
        if self.dirs.state_writing_marker.exists() and self.config["git"].get("ref"):  # issue 15 (ops/sync.py)
            raise Refused("a `wb sync` was interrupted while it wrote .workbench/: run `wb sync` to finish it")
        rebuilt: dict[str, bytes] = self._rebuild_missing() if create else {}
        try:
            board_raw, state_cached, state_raw = self._read_snapshots(rebuilt, need_body)
        except FileNotFoundError:
            # a checkout, stash or merge --abort of the user's rewrites the work tree file by file: a file
            # missing for that moment is back once their git lets go of the index, so look again once
            self.dirs.wait_for_users_git()
            try:
                board_raw, state_cached, state_raw = self._read_snapshots(rebuilt, need_body)
            except FileNotFoundError as err:
                raise NotFound(f"{WB_DIR}/{Path(err.filename).name} is missing: `wb doctor --fix` rebuilds it "
                               "from the event log") from None
        if rebuilt:
            detect_human = False  # nothing to compare a rebuilt file with: it is wb's own
        if state_raw and state_cached and not state_cached["fresh"]:
            state_cached["fresh"] = state_cached.get("sha") == caches.sha(state_raw)
        node = None
        from_file = True  # state.md read from the file, not from wb's cache of its own write: validated
        if not need_node and state_cached and state_cached["fresh"]:
            state = state_cached["state"]
            body = caches.cached_body(p, state_cached) if need_body else ""
            from_file = body is None
            if body is None:
                node, state, body = self.parse_state(state_raw or p.state.read_bytes())
        else:
            if state_cached is not None:
                state_cached["body"] = caches.cached_body(p, state_cached)
                if state_cached["body"] is None:
                    state_cached = None
            node, state, body = self.parse_state(state_raw) if need_node else self.read_state(state_raw)
        kept, self._kept_board = self._kept_board, None  # taken once: whoever this load hands it to may change it
        board_cache = None
        if kept is not None and (kept[0] is board_raw or kept[0] == board_raw):
            # what this process wrote and checked last, still the file's bytes: its board, not parsed again
            board_raw, board, own_board = kept[0], kept[1], True
        else:
            board_cache = caches.read_board_cache(p)
            own_board = board_cache == board_raw  # wb's own last write: checked when it was written
            board = parse_board(board_raw, own=own_board)
        schemas.check_version("state.md", state.get("schema_version"), STATE_VERSION)
        schemas.check_version("board.json", board.get("schema_version"), BOARD_VERSION)
        if from_file:  # read from the file, not from wb's own cache: a hand edit or a clone, validated
            schemas.check("state", state, "state.md")
        if not own_board:  # not what wb last wrote: a hand edit (or a clone), validated as a whole check does,
            check_board_shape(board)  # the tasks whose text is one of wb's last write's not again
            check_board_against(board, board_raw, board_cache)
        if node is None:  # read from wb's cache of state.md: JSON (and `copy` imports weakref: issue 33)
            file_state = copied(state)
        else:
            import copy

            file_state = copy.deepcopy(state)
        docs = Docs(state, body, board)
        if own_board:
            docs.board_raw = board_raw
        human: list[dict[str, Any]] = []
        renumbered = False  # board.json's last_event taken from the log (humanedit.find_edits): to be written
        if detect_human:  # a reader that does not look for hand edits (wb task list) imports nothing of them
            from workbench.store import humanedit

            numbered = docs.board.get("last_event")
            human = humanedit.find_edits(self, docs, state_raw, board_raw, state_cached, thorough=thorough)
            renumbered = docs.board.get("last_event") != numbered and not any(
                edit.get("file") == "board.json" for edit in human)
        last = _int(state.get("last_event"))
        board_from = _int(docs.board.get("last_event"))  # the board the edits were found against
        tail, after = self.log.scan_after(last)
        pending, refused = self.land_pending(tail, docs, after, last, board_from)
        folded = [e for e in pending if e["seq"] > last]  # those the snapshots do not hold yet (a stash can take
        # the log's line of a write whose snapshots it left): folded like the log's own events after them
        after = after + folded
        if human and after:  # a crash after the log append kept a recorded hand edit from the snapshots
            recorded = [e["payload"] for e in after if e["type"] == "human.edit"]
            human = [edit for edit in human
                     if {k: v for k, v in edit.items() if k not in humanedit.PRIVATE} not in recorded]
        if (pending[-1]["seq"] if pending else tail.seq) < last:
            if (p.wb / ".migrate.json").exists():  # the snapshots are written before the migration's event
                raise Refused("a `wb migrate` was interrupted before it finished: run `wb migrate` to finish it")
            raise Refused(f"state.md: last_event {last} is beyond the event log's last seq {tail.seq}; "
                          "run `wb doctor`")
        if after:  # folded here: a reader's usual load (nothing after the snapshots) imports no reducer
            from workbench.model import reducer
        for event in after:
            schemas.check("event", event, f"events.jsonl (seq {event['seq']})")  # unvalidated until folded
            try:
                reducer.apply(docs, event, board_from=board_from)
            except (KeyError, TypeError, AttributeError, ValueError, IndexError) as err:
                raise Refused(f"events.jsonl: seq {event['seq']} cannot be applied ({err}); "
                              "run `wb doctor`") from None
        for edit in human:  # a hand edit of the decision log goes on top of what the events since its base added
            base_body = edit.pop(humanedit.BASE_BODY, None)
            if after and base_body is not None and "body" in edit:
                edit["body"] = humanedit.merge_body(base_body, docs.body, edit["body"])
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
        return Loaded(docs, tail, node, state_raw, file_state, human, replayed=len(after) - len(folded),
                      rebuilt=tuple(rebuilt), pending=pending, refused=refused, renumbered=renumbered)

    def _read_snapshots(self, rebuilt: dict[str, bytes],
                        need_body: bool) -> tuple[bytes, dict[str, Any] | None, bytes]:
        """(board.json's bytes, the state cache, state.md's bytes — b"" when the cache stands in for it)."""
        p = self.paths
        board_raw = rebuilt.get("board.json") or read_board_bytes(p.board)
        if "state.md" in rebuilt:
            return board_raw, None, rebuilt["state.md"]
        if not need_body:  # wb status: the stat alone says whether the cache stands in for the file
            state_cached = caches.read_state_cache(p)
            faults.point("after_state_stat")
            return board_raw, state_cached, b"" if state_cached and state_cached["fresh"] else p.state.read_bytes()
        # the stat and the bytes of one open file: a save landing between a stat and a later read would pair the
        # person's bytes with wb's cached decision log, and the next write would drop their edit
        with open(p.state, "rb") as fh:
            st = os.fstat(fh.fileno())
            faults.point("after_state_stat")
            state_raw = fh.read()
        return board_raw, caches.read_state_cache(p, st), state_raw

    @property
    def pending(self) -> Pending:
        if self._pending is None:
            from workbench.store import kept

            self._pending = Pending(kept.prepare(self.dirs))
        return self._pending

    def pending_events(self, tail: Tail) -> list[dict[str, Any]]:
        """The acknowledged events of the pending journal that the work tree's log lacks, chained after `tail`.
        One stat when there are none (the usual case)."""
        if not self.pending:
            return []
        events, _calls = self.pending.read()
        if not events:
            return []
        recent = {e["id"] for e in self.log.read_after(max(0, tail.seq - len(events) - 64))}
        missing = missing_from_log(events, recent)
        if missing:  # rare: confirm against the whole log
            missing = missing_from_log(events, {e["id"] for _line, e in self.log.iter_all()})
        return chain(missing, tail) if missing else []

    def land_pending(self, tail: Tail, docs: Docs, after: list[dict[str, Any]], last: int, board_from: int
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(events, refused): the pending journal's events the log lacks, landed after `tail` by the one landing
        rule (store/landing.py: a task id the branch took meanwhile renumbered, with its `task.renumber`),
        and those that no longer apply to what the log folds to. One stat when there are none."""
        if not self.pending:
            return [], []
        events, _calls = self.pending.read()
        if not events:
            return [], []
        recent = {e["id"] for e in self.log.read_after(max(0, tail.seq - len(events) - 64))}
        if not missing_from_log(events, recent):
            return [], []
        log = [e for _line, e in self.log.iter_all()]  # rare: the whole log, for the ids it took
        missing = missing_from_log(events, {e["id"] for e in log})
        if not missing:
            return [], []
        import copy

        from workbench.model import reducer
        from workbench.store.landing import agent_name, land_pending

        trial = copy.deepcopy(docs)
        try:
            for event in after:
                reducer.apply(trial, event, board_from=board_from)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError):
            return chain(missing, tail), []  # the log's own events do not fold: the load says so
        landed, _renames, refused = land_pending(log, missing, tail, trial, agent_name(), self.git.worktree_id(),
                                                 folded=last)
        return landed, refused

    def deferred(self) -> str | None:
        """Why a write must not touch the work tree now (git is mid-operation, or HEAD is detached), or None.
        With state on its own ref (git.ref) or commits off, the work tree is wb's to write."""
        git_cfg = self.config["git"]
        if git_cfg.get("commit") == "off" or git_cfg.get("ref"):
            return None
        try:
            busy = self.git.operation_in_progress()
            if busy:
                return busy + " is in progress"
            if self.git.symbolic_head() is None:
                return "HEAD is detached"
        except OSError:
            return None
        return None

    def _rebuild_missing(self) -> dict[str, bytes]:
        """{name: bytes} of state.md and board.json, for the ones missing: as the whole log folds into them."""
        from workbench.model import ids, reducer, statefile
        from workbench.model.boardfile import encode_board

        p = self.paths
        missing = [name for name, path in (("state.md", p.state), ("board.json", p.board)) if not path.exists()]
        if not missing:
            return {}
        docs = reducer.fold((event for _line, event in self.log.iter_all()), empty_ts=ids.utc_now())
        assert docs is not None
        out = {"state.md": statefile.render(None, docs.state, docs.body), "board.json": encode_board(docs.board)}
        return {name: out[name] for name in missing}

    def parse_state(self, raw: bytes) -> tuple[Any, dict[str, Any], str]:
        """(round-trip node, frontmatter, body) of state.md's bytes; the last parse is kept for the next one."""
        import copy

        from workbench.model import statefile

        if self._node_cache is None or self._node_cache[0] != raw:
            parsed = statefile.parse(raw)
            self._node_cache = (raw, parsed.node, parsed.data, parsed.body)
        _, node, data, body = self._node_cache
        return node, copy.deepcopy(data), body

    def read_state(self, raw: bytes) -> tuple[Any, dict[str, Any], str]:
        """`parse_state`'s (node, frontmatter, body), the node None when the frontmatter is in the subset of YAML
        wb writes (statefile.parse_fast): read without ruamel, whose import and parse were ~15 ms of the first
        write after a pull brought another clone's state.md. The write renders the file line by line from these
        bytes (statefile.render_fast) and asks `parse_state` for a node only when that cannot."""
        if self._node_cache is None or self._node_cache[0] != raw:
            from workbench.model import statefile

            fast = statefile.parse_fast(raw)
            if fast is not None:
                return None, fast[0], fast[1]
        return self.parse_state(raw)

    def keep_state_node(self, raw: bytes, node: Any, data: dict[str, Any], body: str) -> None:
        """Remember state.md as a transaction just wrote it, so the next parse of those bytes is free."""
        self._node_cache = (raw, node, data, body)

    def keep_board(self, raw: bytes | None, docs: Docs | None) -> None:
        """Remember board.json as a transaction just wrote (or left) it, `raw`, and the board `docs` holds for
        those bytes, so the next load of the same bytes takes it instead of parsing them (store/keptboard.py);
        None: forget it. Nothing is kept of a board encoded whole (`touched` holds None)."""
        if raw is None or docs is None or None in docs.touched:
            self._kept_board = None
            return
        from workbench.store.keptboard import own_copy

        self._kept_board = (raw, own_copy(docs.board, docs.touched, raw))

    # -- writing ------------------------------------------------------------------------------
    def transaction(self, actor: str = "agent", session: str | None = None, *, commit: bool = True,
                    create: bool = False, who: Who | None = None, dry: bool = False) -> Transaction:
        """One mutation. `commit=False` writes the files but leaves the git commit to a later `checkpoint`
        (a harness step commits once, at its end or at the yield that interrupts it). `create` (`wb init`):
        `.workbench/` may not exist yet, and a missing snapshot is rebuilt from the log (see `load`). `who`: how
        the actor was established (default: the process's, `model/provenance.current`)."""
        from workbench.store.transaction import Transaction

        return Transaction(self, actor, session, commit=commit, create=create, who=who, dry=dry)

    def checkpoint(self, summary: str, session: str | None = None) -> CommitOutcome:
        """Commit whatever the workbench holds now (the end of a harness step, `wb init`, `wb doctor --fix`),
        under the one commit policy (workbench.store.commit)."""
        from workbench.git.repo import CommitOutcome
        from workbench.store import commit

        if not commit.commits(self.config["git"]):
            return CommitOutcome()  # without waiting for the lock
        with self.lock():
            if self.deferred():
                return CommitOutcome(skipped=None)  # the pending journal holds it until the operation ends
            tail = self.log.tail()
            outcome = commit.commit(self, summary, session=session)
            if outcome.skipped is None and self.pending and not self.pending_events(tail):
                self.pending.clear()  # every pending event is in the log, and the log is committed
            return outcome

    def recorded_call(self, key: str) -> dict[str, Any] | None:
        """The last journal record of a tool call (calls.jsonl), or None."""
        try:
            data = self.paths.calls.read_bytes()
        except FileNotFoundError:
            data = b""
        found = None
        for line in split_lines(data)[0]:  # a torn last line (no newline) was never acknowledged
            if key.encode() not in line:
                continue
            record = loads_record(line)  # a damaged line is skipped
            if record is not None and record.get("key") == key:
                found = record
        if self.pending:  # newer than calls.jsonl: recorded while git was mid-operation, or taken by git since
            for record in self.pending.read()[1]:
                if record.get("key") == key:
                    found = record
        return found


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
