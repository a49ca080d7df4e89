"""The one transaction that writes `.workbench/`: the context its stages share, and the running of them.

The stages — take the lock → load (snapshot + replay of events after `last_event`, the pending journal
adopted, human edits detected, the agent hooks' spool folded) → apply events → validate every changed
document → append events (fsync) → write snapshots atomically → git commit (the one commit policy,
workbench.store.commit) → release — are declared in order in store/pipeline.py, one module each in
store/stages/. Every mutation, `wb init` (a `create` transaction) and doctor's repairs are transactions. The
writes that cannot be one — `wb migrate` (it reads files this wb cannot load, with its own intent file for
crash safety), the merge driver (inside `git merge`), a tool's artifacts — use the same store functions:
`atomic.write_workbench_file`, the one cache writer (`caches`), the one commit policy. Nothing else writes
`.workbench/` (tests/arch/test_write_path.py).
"""

from __future__ import annotations

from collections.abc import Callable

from workbench.git.repo import CommitOutcome
from workbench.model import ids, provenance, reducer
from workbench.model.redaction import redact, secret_values
from workbench.model.reducer import Docs
from workbench.store import pipeline, trust
from workbench.store.config import parse_config
from workbench.store.eventlog import Tail
from workbench.store.snapshots import SnapshotsBehind

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from workbench.model.provenance import Who
    from workbench.store.eventlog import Appended
    from workbench.store.loaded import Loaded
    from workbench.store.stagecontext import StageContext, StageWorkbench

__all__ = ["LastWrite", "SnapshotsBehind", "Transaction", "default_summary"]


class LastWrite:
    """What the last write did: its events' seqs, its summary as in its commit message ("T-004 in_progress →
    done"), its commit and its warnings. A plain class, not a dataclass: dataclasses imports inspect, ast and
    tokenize, about 12 ms of every `wb task add` (issue 33)."""

    __slots__ = ("commit", "seqs", "summary", "warnings")

    def __init__(self, seqs: list[int] | None = None, summary: str = "", commit: str | None = None,
                 warnings: list[str] | None = None) -> None:
        self.seqs = seqs if seqs is not None else []
        self.summary = summary
        self.commit = commit
        self.warnings = warnings if warnings is not None else []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastWrite) and (self.seqs, self.summary, self.commit, self.warnings) == (
            other.seqs, other.summary, other.commit, other.warnings)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return (f"LastWrite(seqs={self.seqs!r}, summary={self.summary!r}, commit={self.commit!r}, "
                f"warnings={self.warnings!r})")


class Transaction:
    """One mutation: under the lock, events in → documents validated → log, snapshots, commit.

    Use as a context manager; `emit()` records events (folded into `docs` at once, so later logic sees them);
    leaving the block without an exception commits, an exception aborts with nothing written. The stages
    (store/pipeline.py) read and set the attributes below, those store/stagecontext.StageContext declares;
    nothing else does but through the methods.
    """

    PIPELINE: ClassVar[pipeline.Pipeline] = pipeline.FILES

    def __init__(self, wb: StageWorkbench, actor: str, session: str | None, *, commit: bool = True,
                 create: bool = False, who: Who | None = None, dry: bool = False) -> None:
        self.wb = wb
        # `dry` (`wb doctor`): load with the pending journal folded in, adopt it, run every check the write runs
        # (the sealed-file gate, validation, `check_writable`) and stop before the first byte is written
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
        self.rebuild = False  # `rebuild_snapshots`: the snapshots are written whole, whatever is on disk
        self.deferred: str | None = None  # why the work tree is not written now (the pending journal holds it)
        self.adopted = 0  # how many of `events` came from the pending journal
        self.revived = 0  # how many of those the user's git had taken back from the branch after their commit
        self.spool_size = 0  # bytes of the agent hooks' spool folded in, dropped once committed (store/spool.py)
        self.lock = wb.lock()
        self.held = False  # the lock is taken (stage `lock`) and not yet released (stage `release`)
        self._loaded: Loaded | None = None
        self.board_seen: bytes | None = None  # board.json's bytes just before the load read it
        self.body0 = ""  # SQLite: the decision log as loaded (rewritten only when it changed)
        self.begun = 0  # where the caller's own events begin in `events`
        self.secrets = secret_values(wb.config)
        self.config_seen = False  # config.yaml to be noted as seen once this transaction is durable
        self.refused: list[dict[str, Any]] = []  # an agent's board.json edits refused (humanedit.GUARDED)
        self.aside: str | None = None  # the line naming pending events that no longer apply (stage `set aside`)
        self.config_edit: dict[str, Any] | None = None  # the config.edit event the load found (issue 31)
        self.edit_warnings: list[str] = []  # what committing that edit on its own warned
        self.alone = False  # committing that edit now: never left to a writer queued behind (group commit)
        self.recorded_first: list[dict[str, Any]] = []  # the events that edit's own commit holds
        self.kept: str | None = None  # the snapshot left as a person saved it in the write's last moment
        self.left = False  # the git commit was left to a writer queued behind (group commit)
        self.failed: BaseException | None = None  # what the caller's block raised
        self.on_os_error: list[Callable[[], None]] = []  # undone when a write stage fails with an OSError
        self.appended: Appended | None = None  # the log's batch appended, fsynced by stage `snapshot`

    @property
    def docs(self) -> Docs:
        assert self._loaded is not None, "transaction not entered"
        return self._loaded.docs

    @property
    def loaded(self) -> Loaded:
        """What this transaction's load read (the pending journal's landed events and refusals with it)."""
        assert self._loaded is not None, "transaction not entered"
        return self._loaded

    @loaded.setter
    def loaded(self, loaded: Loaded) -> None:
        self._loaded = loaded

    @property
    def tail(self) -> Tail:
        """Where this transaction's events chain: the log's tail, or after the pending events it defers."""
        return self.loaded.virtual_tail if self.deferred else self.loaded.tail

    @property
    def base_seq(self) -> int:
        """The seq of the log's last event before this transaction, pending events included (0: an empty log
        and nothing pending, a new workbench)."""
        return self.loaded.virtual_tail.seq

    @property
    def rebuilt(self) -> tuple[str, ...]:
        """The snapshots a `create` transaction found missing and writes (rebuilt from the log)."""
        return self.loaded.rebuilt

    # -- running the stages (store/pipeline.py) -------------------------------------------------------------
    def run(self, span: tuple[str, str]) -> None:
        context: StageContext = self  # mypy checks here that a Transaction is what every stage is typed against
        pipeline.run(context, self.PIPELINE.span(*span))

    def __enter__(self) -> Transaction:
        try:
            self.run(self.PIPELINE.enter)
        except BaseException:
            self.run(self.PIPELINE.release)
            raise
        return self

    def begin(self) -> None:
        """Load again, from scratch (stages `load` to `fold spool`): a person saved a snapshot before anything
        was written, a config.yaml edit was committed on its own, or the caller's write failed."""
        self.run(self.PIPELINE.load)
        self.begun = len(self.events)  # the caller's own events follow

    def commit(self) -> None:
        """The write span: from what the load found set aside to the git commit and the journal settled."""
        self.on_os_error = []
        self.kept, self.left = None, False
        self.run(self.PIPELINE.write)

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        self.failed = exc if exc_type is not None else None
        try:
            if exc_type is None:
                self.commit()
            if not self.dry:
                self.run(self.PIPELINE.finish)
        finally:
            self.run(self.PIPELINE.release)

    def log_ends_with_ours(self) -> bool:
        """The work tree's log still ends with this transaction's last event (no `git stash` or checkout took
        it between the append and the commit), so what was committed holds it."""
        from workbench.model.jsonl import encode, line_hash

        return self.wb.log.tail().hash == line_hash(encode(self.events[-1]))

    def default_summary(self) -> str:
        return default_summary(self.events)

    def emit(self, type_: str, payload: dict[str, Any], *, actor: str | None = None,
             session: str | None = None, ts: str | None = None, via: str | None = None) -> dict[str, Any]:
        loaded = self.loaded
        payload = redact(payload, self.secrets)  # the one door to events, state.md and board.json
        event = {
            "schema_version": 1,
            "seq": self.tail.seq + len(self.events) + 1,
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
        self.loaded.docs = docs
        self.board_changed = True
        self.rebuild = True

    def journal(self, record: dict[str, Any]) -> None:
        """A calls.jsonl record, made durable before this transaction's events."""
        self.calls.append(redact(record, self.secrets))

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
