"""The one transaction that writes `.workbench/`.

take the lock → load (snapshot + replay of events after `last_event`, human edits detected) → apply events
→ validate every changed document → append events (fsync) → write snapshots atomically → git commit (the one
commit policy, workbench.store.commit) → release. Every mutation, `wb init` (a `create` transaction) and
doctor's repairs are transactions. The writes that cannot be one — `wb migrate` (it reads files this wb
cannot load, with its own intent file for crash safety), the merge driver (inside `git merge`), a tool's
artifacts — use the same store functions: `atomic.write_workbench_file`, the one cache writer
(`caches`), the one commit policy. Nothing else writes `.workbench/` (tests/arch/test_write_path.py).
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import faults
from workbench.errors import Busy, Refused, SchemaRefused, WorkbenchError
from workbench.git.repo import CommitOutcome
from workbench.model import ids, provenance, reducer, schemas
from workbench.model.boardfile import check_board
from workbench.model.layout import check_writable
from workbench.model.redaction import redact, secret_values
from workbench.model.reducer import Docs
from workbench.store import archive, caches, configedit, humanedit, logprefix, sealedfiles, spool, trust
from workbench.store import commit as commit_policy
from workbench.store.atomic import FileChanged, append_lines, atomic_write, read_or_none, write_workbench_file
from workbench.store.config import parse_config
from workbench.store.eventlog import LogMoved, Tail, chain
from workbench.store.sealing import seal_log

if TYPE_CHECKING:
    from workbench.model.provenance import Who
    from workbench.store.workbench import Loaded, Workbench

# how long a write keeps loading again because a person saved state.md or board.json since its last load, before
# it gives up (nothing written) and asks to be run again
HAND_SAVE_SECONDS = 10.0


@dataclass
class LastWrite:
    seqs: list[int] = field(default_factory=list)
    summary: str = ""  # what the write did, as in its commit message: "T-004 in_progress → done"
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)


class SnapshotsBehind(WorkbenchError):
    """The events were appended (the change is recorded) but a snapshot could not be written."""

    def __init__(self, err: OSError) -> None:
        self.err = err
        name = Path(str(err.filename)).name if err.filename else "state.md/board.json"
        if name.startswith(".tmp-"):  # atomic_write's temp file: name its target
            name = name.split("-", 2)[-1]
        super().__init__(f"recorded in events.jsonl, but writing {name} failed: {err.strerror or err}; the next "
                         "wb command brings state.md and board.json up to date (`wb doctor --fix` does it now)")


class Transaction:
    """One mutation: under the lock, events in → documents validated → log, snapshots, commit.

    Use as a context manager; `emit()` records events (folded into `docs` at once, so later logic sees them);
    leaving the block without an exception commits, an exception aborts with nothing written.
    """

    def __init__(self, wb: Workbench, actor: str, session: str | None, *, commit: bool = True,
                 create: bool = False, who: Who | None = None, dry: bool = False) -> None:
        self.wb = wb
        # `dry` (`wb doctor`): load with the pending journal folded in, adopt it, run every check the write runs
        # (the sealed-file gate, `_validate`, `check_writable`) and stop before the first byte is written
        self.dry = dry
        self.who = who or provenance.current()
        self.create = create
        self.new_files: dict[str, bytes] = {}  # `create_file`: written at commit when still absent
        self.put_files: dict[str, bytes] = {}  # `put_file`: written (replaced) at commit, after the snapshots
        self.git_commit = commit
        self.agent_board_changed = False
        self.calls: list[dict[str, Any]] = []
        self.actor = actor
        self.session = session
        self.events: list[dict[str, Any]] = []
        self.board_changed = False
        self.summary: str | None = None
        self.outcome: CommitOutcome | None = None
        self._rebuild = False
        self.deferred: str | None = None  # why the work tree is not written now (the pending journal holds it)
        self.adopted = 0  # how many of `events` came from the pending journal
        self.revived = 0  # how many of those the user's git had taken back from the branch after their commit
        self.spool_size = 0  # bytes of the agent hooks' spool folded in, dropped once committed (store/spool.py)
        self._lock = wb.lock()
        self._loaded: Loaded | None = None
        self._board_seen: bytes | None = None
        self._begun = 0
        self._secrets = secret_values(wb.config)
        self._config_seen = False  # config.yaml to be noted as seen once this transaction is durable
        self.refused: list[dict[str, Any]] = []  # an agent's board.json edits refused (humanedit.GUARDED)
        self._aside: str | None = None  # the line naming pending events that no longer apply (`_set_aside`)
        self._config_edit: dict[str, Any] | None = None  # the config.edit event the load found (issue 31)
        self._edit_warnings: list[str] = []  # what committing that edit on its own warned
        self._alone = False  # committing that edit now: never left to a writer queued behind (group commit)
        self.recorded_first: list[dict[str, Any]] = []  # the events that edit's own commit holds

    @property
    def docs(self) -> Docs:
        assert self._loaded is not None, "transaction not entered"
        return self._loaded.docs

    @property
    def loaded(self) -> Loaded:
        """What this transaction's load read (the pending journal's landed events and refusals with it)."""
        assert self._loaded is not None, "transaction not entered"
        return self._loaded

    @property
    def _tail(self) -> Tail:
        """Where this transaction's events chain: the log's tail, or after the pending events it defers."""
        assert self._loaded is not None
        return self._loaded.virtual_tail if self.deferred else self._loaded.tail

    @property
    def base_seq(self) -> int:
        """The seq of the log's last event before this transaction, pending events included (0: an empty log
        and nothing pending, a new workbench)."""
        assert self._loaded is not None, "transaction not entered"
        return self._loaded.virtual_tail.seq

    @property
    def rebuilt(self) -> tuple[str, ...]:
        """The snapshots a `create` transaction found missing and writes (rebuilt from the log)."""
        assert self._loaded is not None, "transaction not entered"
        return self._loaded.rebuilt

    def __enter__(self) -> Transaction:
        if self.create:
            self.wb.paths.wb.mkdir(exist_ok=True)
        else:
            _warm()
        self._lock.acquire()
        try:
            if not self.create:  # a checkout or stash of the user's half-way through the work tree is not read
                self.wb.git.wait_for_users_git()
            self._begin()
            if self._config_edit is not None:
                self._commit_config_edit(self._config_edit)
        except BaseException:
            self._lock.release()
            raise
        return self

    def _commit_config_edit(self, edit: dict[str, Any]) -> None:
        """A hand edit of config.yaml the load found is committed before this write, on its own and named
        (`wb: config.yaml edited by hand: tools +check`), never inside the write's own commit with only a trailer
        (issue 31): a reviewer of `git log` sees who changed what wb may run — a harness step's write too, whose
        own events wait for the step's commit. Then the load is made again, and the caller's events follow. Not
        when nothing would be committed now (commit off, git mid-operation, a dry run, wb init)."""
        if self.create or self.dry or self.deferred or not commit_policy.commits(self.wb.config["git"]):
            return
        words = configedit.describe(edit["payload"])
        named = ["config.yaml edited by hand" + (f": {'; '.join(words)}" if words else "")]
        named += [f"{e['payload'].get('file')} edited by hand" for e in self.events  # found by the same load
                  if e["type"] == "human.edit" and isinstance(e.get("payload"), dict)]
        self.summary = "wb: " + "; ".join(named)
        git_commit, self.git_commit, self._alone = self.git_commit, True, True
        try:
            self.commit()
        finally:
            self.git_commit, self._alone = git_commit, False
        spool.settle(self)
        configedit.remember(self.wb)
        self.recorded_first = list(self.events)
        if self.outcome is not None:
            self._edit_warnings = ([self.outcome.skipped] if self.outcome.skipped else []) + self.outcome.warnings
        self.summary, self.outcome, self.calls, self.put_files, self.new_files = None, None, [], {}, {}
        self._begin()

    def _begin(self) -> None:
        """Load, adopt what the pending journal holds, record the hand edits the load found (an agent's, during
        its turn), fold in the agent hooks' spool. Run again, from scratch, when a person saved a snapshot
        before anything was written (`_rebase`)."""
        # board.json as it was before the load read it: a save after this moment is seen again before the
        # write (state.md's bytes the load keeps itself)
        self._board_seen = read_or_none(self.wb.paths.board)
        if not self.create and not self.dry:
            self.revived = self.wb.pending.revive(self.wb.log, self.wb.git)  # the user's git took it back
        self._loaded = self.wb.load(create=self.create, thorough=True)
        self.events = []
        self.adopted = 0
        self.agent_board_changed = False
        self.board_changed = self._loaded.replayed > 0 or "board.json" in self._loaded.rebuilt
        self.deferred = self.wb.deferred()
        if self._loaded.pending and not self.deferred:
            # acknowledged events the work tree lost (or that waited for git's operation to end): they
            # are already folded into the documents; this transaction writes and commits them
            self.adopted = len(self._loaded.pending)
            self.events.extend(self._loaded.pending)
            self.board_changed = True
            for rel, data in self.wb.pending.files().items():  # the files they name: the handoff, an output
                self.put_files.setdefault(rel, data)
        config_edit, self._config_seen = configedit.find(self.wb)
        turn = None
        if not self.create and (self._loaded.human_edits or config_edit):  # during an agent's turn: its edit
            turn = humanedit.agent_acting(self.wb, spool.agent_turn(self))
        self.refused = []
        for edit in self._loaded.human_edits:
            before = edit.pop(humanedit.BEFORE, None)
            committed = edit.pop(humanedit.COMMITTED, False)
            if self.adopted and edit["file"] == "board.json":
                # the edit is in the snapshot the adopted events were folded after, but it is recorded after
                # them: its order keeps the board as the load has it (a task it adds is not moved past theirs)
                edit["order"] = [t["id"] for t in self.docs.board["tasks"]]
            if turn is not None:
                if edit["file"] == "board.json" and isinstance(before, dict):
                    kept, refused = humanedit.guard_agent_board_edit(self.docs, edit, before)
                    if refused:
                        self._refuse(refused, turn)
                    if kept is None:
                        continue
                    edit = kept
                spool.emit_agent_edit(self, edit, turn)
                continue
            if not self.dry and not committed:  # one git committed (a cherry-pick's merge) is no one mid-edit
                humanedit.note_edit(self.wb.paths, edit["file"])
            self.emit("human.edit", edit, actor="human", via="edit")
        self._config_edit = None
        if config_edit is not None:
            if turn is not None:
                config_edit.update(agent=str(turn.get("agent") or ""),
                                   agent_session=str(turn.get("agent_session") or ""))
            self._config_edit = self.emit("config.edit", config_edit, actor="agent" if turn is not None else "human",
                                          via="edit")
        if not self.create:
            spool.fold(self)  # the agent hooks' events, kept out of the work tree until now
        self._begun = len(self.events)  # the caller's own events follow

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self.dry:
            try:
                if exc_type is None:
                    self.commit()
            finally:
                self._lock.release()
            return
        try:
            if exc_type is None:
                self.commit()
                spool.settle(self)
                if self._config_seen:  # the config.edit (if any) is durable now (log or pending journal)
                    configedit.remember(self.wb)
                if self.refused and self.outcome is not None:
                    self.outcome.warnings.extend(humanedit.refused_lines(self.refused))
                if self._aside is not None:
                    if self.outcome is None:
                        self.outcome = CommitOutcome()
                    self.outcome.warnings.append(self._aside)
                if self._edit_warnings:
                    if self.outcome is None:
                        self.outcome = CommitOutcome()
                    self.outcome.warnings[:0] = self._edit_warnings
            elif self.refused and isinstance(exc, Exception):
                self._keep_refusal()
            if exc_type is not None or not self.events:
                self._commit_owed()
        finally:
            self._lock.release()

    def _keep_refusal(self) -> None:
        """The caller's write failed (`wb task done` whose acceptance failed, or changed while it ran): the
        refusal of the agent's edit its load found is recorded and board.json restored all the same, alone."""
        try:
            self._begin()  # from the files again: the failed write's own events are gone
            self.summary, self.calls, self.put_files, self.new_files = None, [], {}, {}  # and what it would write
            if self.refused:
                self.commit()
                spool.settle(self)
        except Exception:  # noqa: BLE001 - the caller's error is the one to report; the next write tries again
            pass

    def _refuse(self, refused: list[dict[str, Any]], turn: dict[str, Any]) -> None:
        """An agent's edit of board.json that changed what only wb's verbs (and a person) may change: board.json
        goes back to what the log folds to (the documents already have it), and the refusal is an event."""
        self.refused.extend(refused)
        self.emit("agent.edit_refused", {"file": "board.json", "refused": refused,
                                         "agent": str(turn.get("agent") or ""),
                                         "agent_session": str(turn.get("agent_session") or "")}, actor="agent",
                  via="edit")
        self.board_changed = True

    def emit(self, type_: str, payload: dict[str, Any], *, actor: str | None = None,
             session: str | None = None, ts: str | None = None, via: str | None = None) -> dict[str, Any]:
        loaded = self._loaded
        assert loaded is not None
        payload = redact(payload, self._secrets)  # the one door to events, state.md and board.json
        event = {
            "schema_version": 1,
            "seq": self._tail.seq + len(self.events) + 1,
            "id": ids.new_id(),
            "ts": _in_order(ts or ids.utc_now(), loaded.docs.state.get("updated_at")),
            "type": type_,
            "actor": actor or self.actor,
            **self._provenance(actor or self.actor, via),
            "session": session if session is not None else self.session,
            "payload": payload,
        }
        if trust.skipped():  # what ran on WB_TRUST_REPO_COMMANDS's word alone is on the record (issue 30)
            event["trust"] = "env"
        self.events.append(event)
        if reducer.apply(self.docs, event):
            self.board_changed = True
            if event["actor"] != "human":
                self.agent_board_changed = True
        return event

    def _provenance(self, actor: str, via: str | None) -> dict[str, Any]:
        """How the actor of an event was established (model/provenance.py): the transaction's `who` when the
        event is its actor's; wb's own bookkeeping is `via: wb`; `via` names the door of any other."""
        who = self.who
        if via is None and actor == who.actor:
            return who.fields()
        if via is None:
            via = "wb" if actor == "wb" else who.via
        return {"via": via, "tty": who.tty and via in ("terminal", "script")}

    def rebuild_snapshots(self, docs: Docs) -> None:
        """Write the snapshots the whole log rebuilds instead of the ones on disk (`wb doctor --fix`, after git
        merged board.json or state.md file by file and they no longer agree with the log). No event: the log
        is the truth, and replaying it reproduces these snapshots."""
        assert self._loaded is not None
        self._loaded.docs = docs
        self.board_changed = True
        self._rebuild = True

    def journal(self, record: dict[str, Any]) -> None:
        """A calls.jsonl record, made durable before this transaction's events."""
        self.calls.append(redact(record, self._secrets))

    def create_file(self, rel: str, data: bytes) -> None:
        """A file of `.workbench/` besides the snapshots and logs (`wb init`'s config.yaml, .gitignore…),
        written at commit, before the log, if it does not exist by then. config.yaml is validated first."""
        if rel == "config.yaml":
            parse_config(data)
        self.new_files[rel] = data

    def put_file(self, rel: str, data: bytes) -> None:
        """A file of `.workbench/` this transaction writes whole (replacing it), after the log and the snapshots
        and before the commit that records it: an acceptance command's output in artifacts/, the handoff packet
        (issue 16). Only with at least one event: the event says why the file changed."""
        self.put_files[rel] = data

    def commit(self) -> None:
        from workbench.model.statefile import too_deep  # statefile is kept off the read-only path of `wb status`

        loaded = self._loaded
        assert loaded is not None
        if loaded.refused and not self.deferred and not self.dry:
            self._set_aside(loaded.refused)
        if self.dry:
            self._dry_run(too_deep)
            return
        if not self.events:
            self._write_new_files()
            if loaded.replayed or loaded.rebuilt or self._rebuild:
                self._write_snapshots(loaded)  # a crash left the snapshots behind the log: catch them up
            return
        if commit_policy.commits(self.wb.config["git"]):  # a sealed file changed by hand is never committed:
            sealedfiles.check(self.wb)  # refused before anything is written
        if self.board_changed:  # finished tasks past the threshold move to a sealed segment (store/archive.py)
            archive.seal_due(self)
        deadline = time.monotonic() + HAND_SAVE_SECONDS
        while True:
            self._validate(too_deep)
            faults.point("before_event_append")
            saved = self._saved_by_hand()
            if saved is None:
                break
            if time.monotonic() > deadline:
                raise Busy(f"{saved} kept being saved by hand for {HAND_SAVE_SECONDS:g}s while this write ran; "
                           "nothing was written: run the command again")
            # a person saved it since the load: nothing is written yet, so load again — their edit is then
            # recorded as human.edit — and apply this write's own events after it
            self._rebase(saved)
        if commit_policy.commits(self.wb.config["git"]) and not self.deferred:
            # nor a log the user's git took committed lines out of (what this write lands back is counted)
            logprefix.check(self.wb, self.events)
        check_writable(self.wb.paths)  # a read-only workbench refuses before the log, not half-way through
        journal_mark = self.wb.pending.size()
        try:
            self._append()
        except OSError:  # a full disk before the batch was in the log: refused, so the journal takes it back
            if not self._log_ends_with_ours():
                self.wb.pending.take_back(journal_mark)
            raise

    def _append(self) -> None:
        if commit_policy.commits(self.wb.config["git"]):  # acknowledged once here, where no checkout can take it
            self.wb.pending.append(self.events[self.adopted:], self.calls, durable=bool(self.deferred),
                                   files=self.put_files if self.deferred else None)
            faults.point("after_pending_append")  # in the pending journal alone: the next load folds it in
            if not self.deferred and not self.wb.config["git"].get("ref"):
                # wait out a git command of the user's, then look again: a merge, checkout or stash may have
                # begun since the load, and the work tree is then git's until it ends
                self.wb.git.wait_for_users_git()
                self.deferred = self.wb.deferred()
                if self.deferred:  # the journal is the only copy until that operation ends
                    self.wb.pending.append([], [], files=self.put_files, durable=False)
                    self.wb.pending.sync()
        if self.deferred:
            self.outcome = CommitOutcome(skipped=f"recorded, not yet committed: {self.deferred}; wb writes it to "
                                                 ".workbench/ and commits it at the first wb command after that")
            return
        loaded = self._loaded  # a hand save since the load made it load again
        assert loaded is not None
        self._adopt_calls()
        self._write_new_files()
        if self.calls:
            append_lines(self.wb.paths.calls, [json.dumps(r, ensure_ascii=False, separators=(",", ":"))
                                               for r in self.calls])
        try:
            self.wb.log.append(self.events, loaded.tail)
        except LogMoved as err:
            if not commit_policy.commits(self.wb.config["git"]):
                raise Refused(f"{err}; nothing was written: run the command again") from None
            # the batch is in the pending journal: the next load folds it in and the next write writes it
            self.wb.pending.append([], [], files=self.put_files)
            self.outcome = CommitOutcome(skipped=f"recorded, not yet written: {err}; the next wb write writes "
                                                 "and commits it")
            return
        faults.point("after_event_append")
        try:
            kept = self._write_snapshots(loaded)
        except OSError as err:  # disk full after the append: the change is in the log, the snapshots catch up
            raise SnapshotsBehind(err) from None
        for rel, data in self.put_files.items():  # the files the events name (acceptance output, the handoff)
            write_workbench_file(self.wb.paths.wb, rel, data)
        seal_log(self.wb.log, self.wb.config)  # events.jsonl past its threshold moves to log/, in this commit
        if kept:
            self.outcome = CommitOutcome(skipped=f"recorded in events.jsonl, not yet committed: {kept} was saved "
                                                 "by hand just as wb wrote it and is left as saved; the next wb "
                                                 "write records that edit and commits both")
            return
        left = self._leave_commit()
        self.outcome = CommitOutcome() if left or not self.git_commit else self._git_commit()
        if self.revived:
            self.outcome.warnings.append(f"wrote again {self.revived} acknowledged event(s) that the user's git "
                                         "moved the branch back over just after wb committed them")
        if self.git_commit and not left and self.outcome.skipped is None and self._log_ends_with_ours():
            # committed; had the user's git moved the log meanwhile, the next load adopts
            on_branch = not self.wb.config["git"].get("ref") and self.outcome.sha is not None
            self.wb.pending.settle(self.wb.git.symbolic_head() if on_branch else None, self.outcome.sha)

    def _dry_run(self, too_deep: Any) -> None:
        """Every check the write would run, in its order, and nothing written (`wb doctor`): raises what the
        next write would refuse."""
        if commit_policy.commits(self.wb.config["git"]) and self.events:
            sealedfiles.check(self.wb)
        self.board_changed = self.board_changed or bool(self.events)
        self._validate(too_deep)
        if commit_policy.commits(self.wb.config["git"]) and self.events and not self.deferred:
            logprefix.check(self.wb, self.events)
        check_writable(self.wb.paths)

    def _set_aside(self, refused: list[dict[str, Any]]) -> None:
        """Pending events that no longer apply to this branch (store/landing.py): out of the journal, into
        `refused.jsonl` beside it, and named in this write's warnings — the rest of the journal lands."""
        from workbench.store.landing import describe

        void = [e for e in refused if e.get("void")]
        left = [e for e in refused if not e.get("void")]
        lines = []
        if left:
            where = self.wb.pending.set_aside(left)
            lines.append(f"{len(left)} acknowledged event(s) that waited in the git directory no longer apply to "
                         f"this branch and were not written: {', '.join(describe(e) for e in left)} (kept in "
                         f"{where})")
        if void:
            lines.append(f"{len(void)} acknowledged event(s) that waited in the git directory name a task this "
                         f"branch archived: recorded, void, as a rebase keeps them: "
                         f"{', '.join(describe(e) for e in void)}")
        self._aside = "; ".join(lines)

    def _log_ends_with_ours(self) -> bool:
        """The work tree's log still ends with this transaction's last event (no `git stash` or checkout took
        it between the append and the commit), so what was committed holds it."""
        from workbench.model.jsonl import encode, line_hash

        return self.wb.log.tail().hash == line_hash(encode(self.events[-1]))

    def _adopt_calls(self) -> None:
        """Tool-call records of the pending journal that calls.jsonl lost to the user's git: written again."""
        if not self.adopted:
            return
        _events, calls = self.wb.pending.read()
        try:
            have = self.wb.paths.calls.read_bytes()
        except FileNotFoundError:
            have = b""
        lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in calls]
        lost = [line for line in lines if line.encode() not in have]
        if lost:
            append_lines(self.wb.paths.calls, lost)

    def _write_new_files(self) -> None:
        for rel, data in self.new_files.items():
            if not (self.wb.paths.wb / rel).exists():
                write_workbench_file(self.wb.paths.wb, rel, data)

    def _write_snapshots(self, loaded: Loaded) -> str | None:
        """Write board.json and state.md (and wb's caches of them). Returns the file a person saved in the last
        moment before its rename, which is left as they saved it (None: both written). Its cache is left too,
        so the next load tells their edit from wb's write and records it; a board.json left so leaves state.md
        behind as well (the log brings both up to date, state.md's last_event saying from where)."""
        from workbench.model import statefile

        p = self.wb.paths
        docs = self.docs
        seen_board = None if "board.json" in loaded.rebuilt else self._board_seen
        seen_state = None if "state.md" in loaded.rebuilt else loaded.state_raw
        if self.board_changed or loaded.replayed:
            archive.write_sealed(p, docs)  # before the board that references them
            board_raw = docs.encode_board()
            # No directory fsync: the log append above is durable, and a rename lost to a power cut leaves
            # the old snapshot, whose last_event is behind the log; the next load folds the rest in.
            try:
                atomic_write(p.board, board_raw, sync_dir=False, expect=None if self._rebuild else seen_board)
            except FileChanged:
                if not self._git_did_it("board.json"):
                    return "board.json"
                atomic_write(p.board, board_raw, sync_dir=False)
            faults.point("after_board_write")
        else:
            board_raw = None
        state_raw = None
        node = loaded.state_node
        if node is None:
            state_raw = statefile.render_fast(loaded.state_raw, loaded.file_state, docs.state, docs.body)
            if state_raw is None:
                node = self.wb.parse_state(loaded.state_raw)[0]
        if state_raw is None:
            state_raw = statefile.render(node, docs.state, docs.body)
        kept = None
        written = None
        try:
            written = atomic_write(p.state, state_raw, sync_dir=False, expect=None if self._rebuild else seen_state)
        except FileChanged:
            if self._git_did_it("state.md"):
                written = atomic_write(p.state, state_raw, sync_dir=False)
            else:
                kept = "state.md"
        faults.point("after_state_write")
        if board_raw is not None or not p.board_cache.exists():
            caches.write_board_cache(p, p.board.read_bytes() if board_raw is None else board_raw)
        if kept:
            return kept
        caches.write_state_cache(p, state_raw, docs.state, docs.body, written=written)
        if node is not None:
            self.wb.keep_state_node(state_raw, node, copy.deepcopy(docs.state), docs.body)
        return None

    # -- a person's save while the write is in flight -------------------------------------------------------
    def _saved_by_hand(self) -> str | None:
        """The snapshot a person saved since the load (its bytes are not the ones the load read), or None. Not
        asked when the work tree is not written (deferred) or is rebuilt whole (`wb doctor --fix`)."""
        loaded = self._loaded
        assert loaded is not None
        if self.deferred or self._rebuild:
            return None
        p = self.wb.paths
        if "state.md" not in loaded.rebuilt and read_or_none(p.state) not in (loaded.state_raw, None):
            return "state.md"
        if "board.json" not in loaded.rebuilt and read_or_none(p.board) not in (self._board_seen, None):
            return "board.json"
        return None

    def _git_did_it(self, name: str) -> bool:
        """Whether the change of `name` under this write is the user's git rather than a person's save: once
        git lets go of the index, the file is as HEAD has it (a checkout, stash or reset put it there). wb's
        log already holds this write then, and it writes the file as before; the next load sorts it out. (A
        held index.lock alone says nothing: another wb writer's index update holds it too.)"""
        self.wb.git.wait_for_users_git(2.0)
        try:
            return read_or_none(self.wb.paths.wb / name) == self.wb.git.committed_file(f".workbench/{name}")
        except (OSError, WorkbenchError):
            return False

    def _rebase(self, saved: str) -> None:
        """Load again and apply this write's own events after what the person saved (and its human.edit)."""
        own = self.events[self._begun:]
        if not self.create:  # the user's own git (a checkout, a stash) may be what changed it: let it finish
            self.wb.git.wait_for_users_git()
        self._begin()
        for event in own:
            event["seq"] = self._tail.seq + len(self.events) + 1
            self.events.append(event)
            try:
                changed = reducer.apply(self.docs, event)
            except (KeyError, TypeError, AttributeError, ValueError, IndexError) as err:
                raise Refused(f"{saved} was saved by hand while this write ran, and the write no longer applies "
                              f"to it ({event['type']}: {err}); nothing was written: run the command again") from None
            if changed:
                self.board_changed = True
                if event["actor"] != "human":
                    self.agent_board_changed = True

    def _validate(self, too_deep: Any) -> None:
        """Every event, state, board and call record checked before anything is written."""
        try:
            chain(self.events, self._tail)
        except UnicodeEncodeError:
            raise Refused("refused: the change holds text that is not valid Unicode (a lone surrogate, such as "
                          "bytes that are not UTF-8 in a command-line argument)") from None
        for event in self.events:
            schemas.check("event", event, f"events.jsonl (seq {event['seq']})")
        schemas.check("state", self.docs.state, "state.md")
        if too_deep(self.docs.state.get("session"), 56):  # state.md must read back (yamlio.MAX_DEPTH)
            raise SchemaRefused("state.md", "session", "nested more than 56 levels deep (a step's args?)")
        if self.board_changed:
            check_board(self.docs)
        for record in self.calls:
            schemas.check("call", record, "calls.jsonl")
        if self.actor == "agent":  # after validation: a broken hand edit is reported as such, not as busy
            humanedit.check_guard(self.wb.paths, self.wb.config, "state.md")
            if self.agent_board_changed:  # recording the human's own edit is not an agent write
                humanedit.check_guard(self.wb.paths, self.wb.config, "board.json")

    # -- group commit (store/commit.py) ----------------------------------------------------------------------
    def _leave_commit(self) -> bool:
        """Leave this write's git commit to a writer queued behind on the lock (group commit), when there is one
        and the commit policy agrees; the write is acknowledged all the same: its events are in the fsynced log,
        and the pending journal that keeps them from the user's git is made durable too (no commit will settle
        it before the next writer's). Not for a write that carries events the user's git had taken back."""
        if not self.git_commit or self.revived or self.adopted or self._alone \
                or not commit_policy.commits(self.wb.config["git"]):
            return False
        if not commit_policy.leave_to_next(self.wb, self._lock):
            return False
        self.wb.pending.sync()
        last = self.events[-1]
        commit_policy.owe(self.wb, self.summary or default_summary(self.events), self.events[0]["seq"],
                          last["seq"], last.get("session"))
        return True

    def _commit_owed(self) -> None:
        """This transaction commits nothing of its own (no events, or its write failed), but a writer before it
        may have left its commit to it: made now, so that a write's commit never waits for a later write."""
        if not self.git_commit or self.deferred:
            return
        try:
            commit_policy.commit_owed(self.wb, self._lock)
        except Exception:  # noqa: BLE001 - the caller's own outcome is the one to report; the next write commits it
            pass

    def _git_commit(self) -> CommitOutcome:
        last = self.events[-1]
        outcome = commit_policy.commit(self.wb, self.summary or default_summary(self.events), seq=last["seq"],
                                       session=last.get("session"), events_since=self.events[0]["seq"] - 1,
                                       secrets=self._secrets)
        if outcome.sha:
            faults.point("after_git_commit")
        return outcome


def _warm() -> None:
    """What a write imports and compiles on its first use, done before the lock rather than under it: while
    one writer holds the lock, every writer queued behind it waits, so its time there is paid many times over
    (the validators of the documents it checks, the state.md writer)."""
    from workbench.model import statefile  # noqa: F401 - imported for its side effect: loaded once per process

    for kind in ("event", "state", "board"):
        schemas.is_valid(kind, None)


def _stamp_key(ts: str) -> tuple[str, str]:
    """An RFC 3339 UTC stamp, comparable whatever its precision (`…:33Z` is before `…:33.5Z`)."""
    whole, _, frac = ts.rstrip("Z").partition(".")
    return whole, frac.ljust(9, "0")


def _in_order(ts: str, previous: Any) -> str:
    """`ts`, or the previous event's stamp when `ts` is before it (issue 31): the log's stamps never go back.
    An event stamped before its transaction began (a harness event, an agent hook's) follows one recorded since
    (a hand edit found by the load). A previous stamp ahead of this clock (a clone's clock ahead, merged by a
    sync) is not followed past now: one clock ahead must not carry every later stamp with it."""
    if not isinstance(previous, str) or _stamp_key(ts) >= _stamp_key(previous):
        return ts
    now = ids.utc_now()
    return previous if _stamp_key(previous) <= _stamp_key(now) else max(ts, now, key=_stamp_key)


def default_summary(events: list[dict[str, Any]]) -> str:
    own = [e for e in events if e["type"] not in ("human.edit", "config.edit", "agent.edit_refused")] or events
    types = sorted({e["type"] for e in own})
    return "wb: " + ", ".join(types)
