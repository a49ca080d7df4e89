"""The Python API: every wb operation without the CLI, for agents that import wb.

    from workbench.api import Bench, init
    init("path/to/repo")
    bench = Bench.open("path/to/repo")
    task = bench.add_task("Write the parser", acceptance=["pytest -q tests/test_parser.py"])
    bench.start_task(task["id"])
    bench.note("Chose a hand-written parser: the grammar is tiny.")
    bench.done_task(task["id"])

Each mutating method is one transaction (lock, validation, event log, atomic snapshots, one git commit) and
raises a WorkbenchError subclass when refused. `bench.last` describes the last commit and its warnings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.errors import NotFound, Refused, UsageError
from workbench.model import ids, reducer
from workbench.model.ids import TASK_ID
from workbench.ops.acceptance import run_acceptance
from workbench.ops.replay import ReplayReport, replay
from workbench.ops.status import status_of
from workbench.ops.validate import validate_workbench
from workbench.store.transaction import LastWrite
from workbench.store.workbench import Transaction, Workbench

__all__ = ["Bench", "LastWrite", "ReplayReport", "init", "replay", "run_acceptance", "status_of", "validate_workbench"]

SETTABLE_TASK_KEYS = ("title", "description", "owner", "acceptance", "depends_on", "status", "reviews")
SETTABLE_STATE_KEYS = ("status", "next_action", "active_task_id", "touched_files", "assumptions", "blockers")
KEPT_STATE_KEYS = ("schema_version", "updated_at", "last_event", "counters", "session")


class Bench:
    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.last = LastWrite()

    @classmethod
    def open(cls, path: str | Path | None = None) -> Bench:
        return cls(Workbench.discover(Path(path) if path is not None else None))

    @property
    def root(self) -> Path:
        return self.wb.root

    def close(self) -> None:
        """End the helper git process a Bench keeps between commits (it also ends when this process does)."""
        self.wb.git.close()

    def __enter__(self) -> Bench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the write helper -----------------------------------------------------------------------
    def _tx(self, actor: str = "agent") -> Transaction:
        return self.wb.transaction(actor=actor)

    def _done(self, tx: Transaction) -> None:
        out = tx.outcome
        warnings = list(out.warnings) if out else []
        if out and out.skipped:
            warnings.insert(0, out.skipped)
        summary = (tx.summary or "").removeprefix("wb: ")
        self.last = LastWrite([e["seq"] for e in tx.events], summary, out.sha if out else None, warnings)

    # -- tasks --------------------------------------------------------------------------------
    def add_task(self, title: str, *, kind: str = "build", owner: str | None = None,
                 acceptance: list[str] | None = None, depends_on: list[str] | None = None,
                 description: str | None = None, reviews: str | None = None, actor: str = "agent") -> dict[str, Any]:
        """Add a task to the board; returns it with its new id."""
        with self._tx(actor) as tx:
            board = tx.docs.board
            for dep in [*(depends_on or []), *([reviews] if reviews else [])]:
                if isinstance(dep, str) and TASK_ID.match(dep) and reducer.find_task(board, dep) is None:
                    raise Refused(f"board.json: no task {dep} to depend on or review (see `wb task list`)")
            now = ids.utc_now()
            task: dict[str, Any] = {
                "id": next_task_id(board),
                "kind": kind,
                "title": title,
                "status": "todo",
                "owner": owner or ("reviewer" if kind == "review" else "builder"),
                "acceptance": list(acceptance) if acceptance is not None else [],
                "depends_on": list(depends_on) if depends_on is not None else [],
                "created_at": now,
                "updated_at": now,
            }
            if description:
                task["description"] = description
            if reviews is not None or kind == "review":
                task["reviews"] = reviews
            added = tx.emit("task.add", {"task": task}, ts=now)["payload"]["task"]
            tx.summary = f"wb: add {task['id']} {_short(added['title'])}"  # redacted before it is cut short
        self._done(tx)
        return task

    def _task(self, tx: Transaction, task_id: str) -> dict[str, Any]:
        task = reducer.find_task(tx.docs.board, task_id)
        if task is None:
            raise NotFound(f"no task {task_id} on the board (see `wb task list`)")
        return task

    def start_task(self, task_id: str, actor: str = "agent") -> dict[str, Any]:
        with self._tx(actor) as tx:
            task = self._task(tx, task_id)
            _require_open(task, "start")
            before = task["status"]
            tx.summary = f"wb: {task_id} {before} → in_progress"
            tx.emit("task.start", {"id": task_id, "from": before})
        self._done(tx)
        return dict(task)

    def block_task(self, task_id: str, reason: str, actor: str = "agent") -> dict[str, Any]:
        if not reason.strip():
            raise UsageError("a blocked task needs a reason: --reason TEXT")
        with self._tx(actor) as tx:
            task = self._task(tx, task_id)
            _require_open(task, "block")
            tx.summary = f"wb: {task_id} {task['status']} → blocked"
            tx.emit("task.block", {"id": task_id, "from": task["status"], "reason": reason.strip()})
        self._done(tx)
        return dict(task)

    def done_task(self, task_id: str, *, force: bool = False, actor: str = "agent",
                  timeout: float | None = None) -> dict[str, Any]:
        """Mark a task done once every acceptance command exits 0 (run in the repo root, outside the lock).
        `force=True` records the override and the failures instead of refusing."""
        snapshot = self.wb.load(detect_human=False).docs.board
        task = reducer.find_task(snapshot, task_id)
        if task is None:
            raise NotFound(f"no task {task_id} on the board (see `wb task list`)")
        _require_open(task, "finish")
        limit = timeout or float(self.wb.config["acceptance_timeout"])
        results = [run_acceptance(cmd, self.wb.root, limit) for cmd in task.get("acceptance", [])]
        failed = [r for r in results if r["exit"] != 0]
        if failed and not force:
            first = failed[0]
            raise Refused(f"{task_id}: acceptance failed: `{first['cmd']}` {first['outcome']}; fix it, or "
                          f"`wb task done {task_id} --force` to override (the override is recorded)")
        with self._tx(actor) as tx:
            current = self._task(tx, task_id)
            _require_open(current, "finish")
            if current.get("acceptance", []) != task.get("acceptance", []):
                raise Refused(f"{task_id}: its acceptance commands changed while they ran; run `wb task done` again")
            before = current["status"]
            tx.summary = f"wb: {task_id} {before} → done" + (" (forced)" if failed else "")
            tx.emit("task.done", {"id": task_id, "from": before, "forced": bool(failed),
                                  "acceptance": results})
        self._done(tx)
        return dict(current)

    def set_task(self, task_id: str, changes: dict[str, Any], actor: str = "agent") -> dict[str, Any]:
        bad = [k for k in changes if k not in SETTABLE_TASK_KEYS]
        if bad:
            raise UsageError(f"cannot set {', '.join(bad)} on a task; settable: {', '.join(SETTABLE_TASK_KEYS)}")
        with self._tx(actor) as tx:
            task = self._task(tx, task_id)
            for dep in changes.get("depends_on") or []:
                if isinstance(dep, str) and reducer.find_task(tx.docs.board, dep) is None:
                    raise Refused(f"board.json: no task {dep} to depend on (see `wb task list`)")
            real = {k: v for k, v in changes.items() if task.get(k) != v}
            if not real:
                return dict(task)
            tx.summary = f"wb: {task_id} set {', '.join(sorted(real))}"
            tx.emit("task.set", {"id": task_id, "changes": real})
        self._done(tx)
        return dict(task)

    def list_tasks(self, status: str | None = None) -> list[dict[str, Any]]:
        tasks = self.wb.load(detect_human=False).docs.board["tasks"]
        return [t for t in tasks if status is None or t.get("status") == status]

    def show_task(self, task_id: str) -> dict[str, Any]:
        task = reducer.find_task(self.wb.load(detect_human=False).docs.board, task_id)
        if task is None:
            raise NotFound(f"no task {task_id} on the board (see `wb task list`)")
        return task

    # -- state and notes ------------------------------------------------------------------------
    def note(self, text: str, actor: str = "agent") -> None:
        if not text.strip():
            raise UsageError("a note needs text")
        with self._tx(actor) as tx:
            noted = tx.emit("note.add", {"text": text.strip()})["payload"]["text"]
            tx.summary = f"wb: note {_short(noted)}"  # redacted before it is cut short
        self._done(tx)

    def set_state(self, changes: dict[str, Any], actor: str = "agent") -> dict[str, Any]:
        """Set state fields such as next_action; unknown keys are refused by the schema, and the fields wb keeps
        itself (counters, the live session, last_event…) are refused here."""
        kept = [k for k in changes if k in KEPT_STATE_KEYS]
        if kept:
            raise UsageError(f"{', '.join(kept)} is kept by wb and cannot be set; settable: "
                             f"{', '.join(SETTABLE_STATE_KEYS)}")
        with self._tx(actor) as tx:
            real = {k: v for k, v in changes.items() if tx.docs.state.get(k, object()) != v}
            if not real:
                return dict(tx.docs.state)
            tx.summary = f"wb: set {', '.join(sorted(real))}"
            tx.emit("state.set", {"changes": real})
        self._done(tx)
        return dict(tx.docs.state)

    # -- reading ------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return status_of(self.wb)

    def log(self, *, type: str | None = None, session: str | None = None,
            limit: int | None = None) -> list[dict[str, Any]]:
        events = [e for _line, e in self.wb.log.iter_all()
                  if (type is None or e["type"] == type or e["type"].startswith(type + "."))
                  and (session is None or e.get("session") == session)]
        return events[-limit:] if limit else events

    def validate(self, progress: Callable[[int, int], None] | None = None) -> list[str]:
        return validate_workbench(self.wb, progress)

    def replay(self, progress: Callable[[int, int], None] | None = None) -> ReplayReport:
        return replay(self.wb, progress)


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _require_open(task: dict[str, Any], verb: str) -> None:
    if task["status"] in ("done", "cancelled"):
        raise Refused(f"{task['id']} is {task['status']}; cannot {verb} it "
                      f"(reopen with `wb task set {task['id']} status=todo`)")


def next_task_id(board: dict[str, Any]) -> str:
    highest = 0
    for task in board["tasks"]:
        tid = task.get("id", "")
        if isinstance(tid, str) and TASK_ID.match(tid):
            highest = max(highest, int(tid[2:]))
    return f"T-{highest + 1:03d}"


def init(path: str | Path | None = None, ref: str | None = None) -> tuple[Bench, bool, LastWrite]:
    """Create `.workbench/` (idempotent). `ref` records state on that branch instead of the checked-out one.
    Returns (bench, created, what was committed)."""
    from workbench.ops import init as initcmd

    wb, created, last = initcmd.init(Path(path) if path is not None else Path.cwd(), ref)
    return Bench(wb), created, last
