"""The Python API: every wb operation without the CLI, for agents that import wb.

    from workbench.api import Bench, init
    init("path/to/repo")
    bench = Bench.open("path/to/repo")
    task = bench.add_task("Write the parser", acceptance=["pytest -q tests/test_parser.py"])
    bench.start_task(task["id"])
    bench.note("Chose a hand-written parser: the grammar is tiny.")
    bench.done_task(task["id"])
    outcome = bench.run("Ship it", plan="plan.yaml")       # `wb run`: a Result, or a Pending at a yield
    outcome = bench.resume(approve=True)                   # `wb resume --approve`

The verbs are the command line's, in snake_case: `wb resume --approve` is `bench.resume(approve=True)`,
`wb doctor --fix` is `bench.doctor(fix=True)`, `wb diff --format json A B` is `bench.diff("A", "B")`. Each
returns data and never prints. Each mutating method is one transaction (lock, validation, event log, atomic
snapshots, one git commit) and raises a WorkbenchError subclass when refused. `bench.last` describes the
last commit and its warnings.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import NotFound, PersonRequired, Refused, UsageError, WorkbenchError
from workbench.model import ids, provenance, reducer
from workbench.model.dependencies import unmet_dependencies
from workbench.model.ids import TASK_ID
from workbench.model.redaction import redact, secret_values
from workbench.ops import taskquery
from workbench.ops.acceptance import (
    dependency_problem,
    last_line,
    run_acceptance,
    run_all,
    task_problem,
    unmet_refusal,
)
from workbench.ops.status import STATUSES, next_task, status_of
from workbench.ops.taskquery import TASK_FILTERS, filter_tasks
from workbench.progress import tick as progress_tick
from workbench.store import opening, trust
from workbench.store.transaction import LastWrite, Transaction
from workbench.store.workbench import Workbench

if TYPE_CHECKING:  # the harness, review, doctor and migrate load only when their verb is called
    from workbench.harness.types import Pending, Result
    from workbench.migrate.apply import Report as MigrateReport
    from workbench.ops.doctor import Report as DoctorReport
    from workbench.ops.replay import ReplayReport, replay
    from workbench.ops.validate import validate_workbench

__all__ = ["TASK_FILTERS", "Bench", "LastWrite", "ReplayReport", "diff", "filter_tasks", "init", "replay",
           "run_acceptance", "status_of", "validate_workbench"]



def __getattr__(name: str) -> Any:
    """replay, ReplayReport and validate_workbench, imported when first asked for: replay's dataclasses bring
    inspect, ast and tokenize, which no write needs (issue 33: a `wb task add` imports what it uses)."""
    if name in ("ReplayReport", "replay"):
        from workbench.ops import replay as replay_module

        return getattr(replay_module, name)
    if name == "validate_workbench":
        from workbench.ops.validate import validate_workbench

        return validate_workbench
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


EVENT_TYPE = re.compile(r"^[a-z]+(\.[a-z_]+)+$")  # as schemas/event.schema.json
SETTABLE_TASK_KEYS = ("title", "description", "owner", "acceptance", "depends_on", "status", "reviews", "scope",
                      "priority", "labels", "parent", "assignee")  # issue 22: the last four
# -- scope contract & proof of done (issue 16): what only a proven person changes once a task has started
GOALPOSTS = ("acceptance", "scope")
SETTABLE_STATE_KEYS = ("status", "next_action", "active_task_id", "touched_files", "assumptions", "blockers")
KEPT_STATE_KEYS = ("schema_version", "updated_at", "last_event", "counters", "session")


class Bench:
    """One workbench, opened: its verbs are the command line's (see the module docstring)."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.last = LastWrite()
        self.joined: str | None = None  # `wb init` in a fresh clone: the state branch it took up, or None

    @classmethod
    def open(cls, path: str | Path | None = None) -> Bench:
        """The workbench of the git work tree containing `path` (default: the current directory); NotFound
        when there is no git repository or no `.workbench/` (run `init` first)."""
        return cls(opening.discover(Path(path) if path is not None else None))

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
        return self.wb.transaction(actor=self._actor(actor))

    @staticmethod
    def _actor(actor: str) -> str:
        """`actor`, once it may be claimed: `human` only for a person at a terminal (model/provenance.py) — a
        program's claim to be one must be confirmed on /dev/tty (ops/person.require_person), or is refused."""
        if actor == "human" and provenance.current().actor != "human":
            from workbench.ops.person import command_line, require_person

            require_person("a write as human", command_line(drop=("--actor", "human")))
        return actor

    def _done(self, tx: Transaction) -> None:
        out = tx.outcome
        warnings = list(out.warnings) if out else []
        if out and out.skipped:
            warnings.insert(0, out.skipped)
        summary = (tx.summary or "").removeprefix("wb: ")
        # the hand edits a write records are its events, committed on their own before it or not (issue 31)
        seqs = [e["seq"] for e in (*tx.recorded_first, *tx.events)]
        self.last = LastWrite(seqs, summary, out.sha if out else None, warnings)

    # -- tasks --------------------------------------------------------------------------------
    def add_task(self, title: str, *, kind: str = "build", owner: str | None = None,
                 acceptance: list[str] | None = None, depends_on: list[str] | None = None,
                 description: str | None = None, reviews: str | None = None, actor: str = "agent",
                 scope: dict[str, Any] | None = None, priority: int | None = None,
                 labels: list[str] | None = None, parent: str | None = None,
                 assignee: str | None = None) -> dict[str, Any]:
        """Add a task to the board; returns it with its new id. `scope` is its scope contract (`allowed`,
        `forbidden`, `approvals_required`, `outside`, `severity`: docs/handoff.md). Issue 22: `priority` 0
        (highest) … 4 (absent: 2), `labels`, `parent` (the epic it belongs to), `assignee`."""
        with self._tx(actor) as tx:
            board = tx.docs.board
            if parent is not None and reducer.find_task(board, parent) is None:
                raise Refused(f"board.json: no task {parent} to be the parent (see `wb task list`)")
            for dep in [*(depends_on or []), *([reviews] if reviews else [])]:
                if isinstance(dep, str) and TASK_ID.match(dep) and reducer.find_task(board, dep) is None \
                        and not _archived(board, dep):
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
            if scope:
                task["scope"] = scope
            extra = {"priority": priority, "labels": list(labels) if labels else None, "parent": parent,
                     "assignee": assignee}
            task.update({k: v for k, v in extra.items() if v is not None})
            task_problem(task)
            added = tx.emit("task.add", {"task": task}, ts=now)["payload"]["task"]
            tx.summary = f"wb: add {task['id']} {_short(added['title'])}"  # redacted before it is cut short
        self._done(tx)
        trust.remember(self.root, [trust.acceptance_command(c, [task["id"]]) for c in added.get("acceptance", [])])
        return task

    def import_tasks(self, source: str | bytes | Sequence[Mapping[str, Any]], *, format: str | None = None,
                     name: str = "-", actor: str = "agent",
                     progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
        """`wb task import FILE`: add many tasks in one transaction and one commit. `source` is a list of tasks
        in the board's task shape (only `title` required), or a file's text: a JSON list, or a Markdown
        checklist (`- [ ] title` with indented `accept:`/`depends:` lines; the grammar is in
        ops/taskimport.py and docs/cli.md). `name` names the file in messages (and picks the format by its
        suffix unless `format` is json or markdown). Ids are allocated as `add_task` allocates them, in file
        order; an `id` the file gives is a name that `depends_on`/`reviews` further down the file may use.
        All or nothing: the first bad entry is Refused (exit 5) naming its line or index, nothing written.
        Returns the tasks added (none: nothing written, no commit); `progress(done, total)` hears how far."""
        from workbench.ops import taskimport

        if isinstance(source, (str, bytes)):
            entries = taskimport.read(source, name, format)
        else:
            entries = taskimport.entries_of(list(source), "tasks" if name == "-" else name)
        if not entries:
            self.last = LastWrite()
            return []
        total = len(entries)
        with self._tx(actor) as tx:
            now = ids.utc_now()
            planned = taskimport.plan(tx.docs.board, entries, now, progress)
            added = []
            for i, task in enumerate(planned):
                added.append(tx.emit("task.add", {"task": task}, ts=now)["payload"]["task"])
                progress_tick(progress, total + i, 2 * total)
            first, last = added[0]["id"], added[-1]["id"]
            tx.summary = (f"wb: import {len(added)} tasks ({first}…{last})" if len(added) > 1
                          else f"wb: add {first} {_short(added[0]['title'])}")
        self._done(tx)
        if progress is not None:
            progress(2 * total, 2 * total)
        brought = [trust.acceptance_command(c, [t["id"]]) for t in added for c in t.get("acceptance", [])]
        if provenance.current().proven_person:  # a person read the file they imported
            trust.remember(self.root, brought)
        elif brought:  # a file's commands are the file's, not this clone's wb's: they wait for `wb trust`
            self.last.warnings.append(f"{len(brought)} acceptance command(s) came with the import and are not "
                                      "trusted here: a person reviews them with `wb trust`")
        return added

    def _task(self, tx: Transaction, task_id: str) -> dict[str, Any]:
        task = reducer.find_task(tx.docs.board, task_id)
        if task is None:
            raise _not_on_board(self.wb, tx.docs, task_id)
        return task

    def start_task(self, task_id: str, actor: str = "agent", *, force: bool = False) -> dict[str, Any]:
        """Start a task. One whose dependencies are not all done is Refused (exit 5) naming them (issue 22),
        unless `force`: a person's, proven at a terminal, and recorded (`unmet` in the task.start event)."""
        if force:
            board = self.wb.load(detect_human=False).docs.board
            seen = reducer.find_task(board, task_id)
            if seen is not None and seen.get("status") != "in_progress" and unmet_dependencies(board, seen):
                actor = person_only(f"starting {task_id} before its dependencies are done",
                                    f"wb task start {task_id} --force")
        with self._tx(actor) as tx:
            task = self._task(tx, task_id)
            _require_open(task, "start")
            if task["status"] == "in_progress":  # nothing to do: no event, no commit (the CLI says so)
                return dict(task)
            unmet = unmet_dependencies(tx.docs.board, task)
            if unmet and not (force and provenance.current().proven_person):
                raise unmet_refusal(task_id, unmet, "start")
            before = task["status"]
            tx.summary = f"wb: {task_id} {before} → in_progress" + (" (forced)" if unmet else "")
            # issue 16: the HEAD the task starts at, what `wb task done` compares its scope with
            started: dict[str, Any] = {"id": task_id, "from": before}
            if unmet:
                started["unmet"] = [d for d, _ in unmet]
            head = _head(self.root)
            if head:
                started["head"] = head
                if not task.get("start_head"):  # the first start: the base `task done` judges from
                    from workbench.ops.scope import dirty_at_start

                    before = dirty_at_start(self.root)
                    if before is not None:
                        started["dirty"] = before  # the user's edits already there are not the task's
            tx.emit("task.start", started)
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
                  timeout: float | None = None,
                  report: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Mark a task done once every acceptance command exits 0 (run in the repo root, outside the lock).
        `force=True` records the override and the failures (each command's output tail) instead of refusing; a
        refusal changes nothing and names the failure's last line. `report("start"|"end", …)` hears about each
        command, before and after it runs.

        The scope contract first (issue 16): what changed since the task started (its commits and the work
        tree) against its scope — a forbidden path, or one outside `allowed` whose severity is `block`, refuses
        (Refused, exit 5, naming each path and glob; only a person's `--force` overrides it, and that is
        recorded); a `warn` finding is recorded. The task.done event carries the proof: each command's exit,
        duration, output digest and tail (the whole output in artifacts/), the scope verdict and HEAD."""
        from workbench.ops.scope import verdict as scope_verdict

        loaded_docs = self.wb.load(detect_human=False).docs
        task = reducer.find_task(loaded_docs.board, task_id)
        if task is None:
            raise _not_on_board(self.wb, loaded_docs, task_id)
        _require_open(task, "finish")
        open_children(loaded_docs.board, task_id)
        unmet = unmet_dependencies(loaded_docs.board, task)
        if unmet and not force:  # issue 22: dependencies first, before any command runs
            raise unmet_refusal(task_id, unmet, "done")
        if force:  # issue 19: forcing done is a person's, proven at a terminal, before anything runs
            actor = person_only(f"forcing {task_id} done", f"wb task done {task_id} --force")
        verdict = scope_verdict(self.root, task, self._dirty_at_start(task))
        blocked = scope_blocking(verdict)
        if blocked and not force:
            raise Refused(f"{task_id}: changes outside its scope: {'; '.join(blocked)}; undo them, or ask a person "
                          f"to change the scope (`wb task set {task_id} scope=JSON`) or to force it "
                          f"(`wb task done {task_id} --force`, recorded)")
        trust.require(self.root, [trust.acceptance_command(c, [task_id]) for c in task.get("acceptance", [])])
        limit = timeout or float(self.wb.config["acceptance_timeout"])
        results = run_all(task.get("acceptance", []), self.wb.root, limit, report)
        failed = [r for r in results if r["exit"] != 0]
        if failed and not force:
            first = failed[0]  # a refusal changes nothing; the tail of the output is in the one line
            self._record_refused_done(task_id, failed)
            raise Refused(f"{task_id}: acceptance failed: `{first['cmd']}` {first['outcome']}"
                          + (f" ({last_line(first['output_tail'])})" if last_line(first["output_tail"]) else "")
                          + f"; fix it, or ask a person to run `wb task done {task_id} --force` (recorded)")
        with self._tx(actor) as tx:
            current = self._task(tx, task_id)
            _require_open(current, "finish")
            if current.get("acceptance", []) != task.get("acceptance", []):
                raise Refused(f"{task_id}: its acceptance commands changed while they ran; run `wb task done` again")
            if current != task:  # the checks ran without the lock: what they passed for must still stand
                changed = sorted(k for k in set(current) | set(task) if current.get(k) != task.get(k))
                raise Refused(f"{task_id} changed while its acceptance ran ({', '.join(changed)}); "
                              f"run `wb task done {task_id}` again")
            open_children(tx.docs.board, task_id)
            unmet = unmet_dependencies(tx.docs.board, current)
            if unmet and not force:
                raise unmet_refusal(task_id, unmet, "done")
            before = current["status"]
            forced = bool(failed) or bool(blocked) or bool(unmet)
            tx.summary = f"wb: {task_id} {before} → done" + (" (forced)" if forced else "")
            payload: dict[str, Any] = {"id": task_id, "from": before, "forced": forced,
                                       "acceptance": [self._proof_of_check(tx, task_id, i, r)
                                                      for i, r in enumerate(results, 1)],
                                       "head": _head(self.root)}
            if verdict is not None:
                payload["scope"] = verdict
            if blocked:
                payload["override"] = f"forced past the scope by {actor}: " + "; ".join(blocked)
            if unmet:
                payload["unmet"] = [d for d, _ in unmet]
            tx.emit("task.done", payload)
        self._done(tx)
        return dict(current)

    def _dirty_at_start(self, task: dict[str, Any]) -> dict[str, str] | None:
        """The work tree dirty when `task` first started, as its task.start recorded it (None: not recorded)."""
        from workbench.model.scope import is_empty

        if is_empty(task.get("scope")) or not task.get("start_head"):
            return None
        for _line, event in self.wb.log.iter_all():
            payload = event.get("payload") if event.get("type") == "task.start" else None
            if isinstance(payload, dict) and payload.get("id") == task["id"] \
                    and payload.get("head") == task["start_head"]:
                dirty = payload.get("dirty")
                return dirty if isinstance(dirty, dict) else None
        return None

    def _proof_of_check(self, tx: Transaction, task_id: str, n: int, result: dict[str, Any]) -> dict[str, Any]:
        """One acceptance command's proof for the task.done event: its whole output goes to artifacts/ (written
        with the event, committed with it), the event keeps the digest, the tail and the artifact's path."""
        out = dict(result)
        raw = out.pop("output", b"") or b""
        # redacted as an event is: the digest is of the bytes kept, so a reader can check the artifact
        data = redact(raw.decode(errors="replace"), secret_values(self.wb.config)).encode() if raw else b""
        out["sha256"] = hashlib.sha256(data).hexdigest()
        if data:
            name = f"acceptance-{task_id}-{tx.base_seq + len(tx.events) + 1}-{n}.txt"
            tx.put_file(f"artifacts/{name}", data)
            out["artifact"] = {"path": f".workbench/artifacts/{name}", "bytes": len(data)}
        return out

    def set_task(self, task_id: str, changes: dict[str, Any], actor: str = "agent", *,
                 override: str | None = None) -> dict[str, Any]:
        """Change fields of a task. Once it has started, its acceptance commands and scope change only by a
        person proven at a terminal (issue 19: ops/person.require_person), whatever `actor` says; `override`
        is the person's reason, recorded in the task.set event. An agent's attempt is PersonRequired (exit 5),
        naming the command a person runs (issue 16)."""
        bad = [k for k in changes if k not in SETTABLE_TASK_KEYS]
        if bad:
            raise UsageError(f"cannot set {', '.join(bad)} on a task; settable: {', '.join(SETTABLE_TASK_KEYS)}")
        if changes.get("status") == "done":
            raise Refused(f"{task_id}: a task is done when its acceptance passes: `wb task done {task_id}` runs it "
                          f"(a person's `--force` records an override)")
        seen = reducer.find_task(self.wb.load(detect_human=False).docs.board, task_id)
        moving = goalposts_moved(seen, changes) if seen is not None else []
        if moving:  # asked outside the lock: a person may take a while to type
            actor = person_only(f"changing the {' and '.join(moving)} of started task {task_id}",
                                set_command(task_id, changes, moving))
        with self._tx(actor) as tx:
            task = self._task(tx, task_id)
            task_problem({"kind": task.get("kind"), **changes})
            for dep in changes.get("depends_on") or []:
                if isinstance(dep, str) and reducer.find_task(tx.docs.board, dep) is None \
                        and not _archived(tx.docs.board, dep):
                    raise Refused(f"board.json: no task {dep} to depend on (see `wb task list`)")
            if "depends_on" in changes:
                dependency_problem(tx.docs.board, task_id, list(changes["depends_on"] or []))
            if changes.get("parent") is not None:
                parent_problem(tx.docs.board, task_id, changes["parent"])
            real = {k: v for k, v in changes.items() if task.get(k) != v}
            if not real:
                return dict(task)
            moved = goalposts_moved(task, real)
            if moved and not provenance.current().proven_person:  # it started while we read it
                raise PersonRequired(f"changing the {' and '.join(moved)} of started task {task_id}",
                                     set_command(task_id, real, moved), "the task has started")
            tx.summary = f"wb: {task_id} set {', '.join(sorted(real))}"
            set_payload: dict[str, Any] = {"id": task_id, "changes": real}
            if moved and override:
                set_payload["override"] = override.strip()
            tx.emit("task.set", set_payload)
        self._done(tx)
        trust.remember(self.root, [trust.acceptance_command(c, [task_id]) for c in real.get("acceptance") or []])
        return dict(task)

    def list_tasks(self, status: str | None = None, where: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """The tasks in board order, or only those with `status` (one of todo, in_progress, blocked, done,
        cancelled; anything else is a UsageError, not an empty list) and passing `where` (`filter_tasks`)."""
        return taskquery.list_tasks(self.wb, status, where)

    def list_archived(self, status: str | None = None) -> list[dict[str, Any]]:
        """The tasks of the board's archive (issue 20), oldest segment first, each with `archived`: the segment
        file under `.workbench/` that holds it. `wb task list --all` shows them after the board's."""
        return taskquery.list_archived(self.wb, status)

    def archived_count(self) -> int:
        """How many tasks the board's archive holds (read from board.json's references, no segment opened)."""
        from workbench.model.archive import archived_count

        return archived_count(self.wb.load(detect_human=False).docs.board)

    def _record_refused_done(self, task_id: str, failed: list[dict[str, Any]]) -> None:
        """The failed acceptance of a refused `done`, for the handoff's failed attempts (store/attempts.py)."""
        from workbench.store.attempts import Attempts

        attempt = {"kind": "acceptance_refused", "task": task_id, "after_event": self.wb.log.tail().seq,
                   "failed": [{"cmd": r["cmd"], "outcome": r["outcome"], "tail": last_line(r["output_tail"])}
                              for r in failed]}
        Attempts(self.wb.git.git_dir).record(redact(attempt, secret_values(self.wb.config)))

    def next_task(self, *, start: bool = False, actor: str = "agent") -> dict[str, Any]:
        """`wb task next [--start]`: the first ready task (todo, every dependency done, in board order), started
        when `start`. Returns `{"task": the task or None, "started": bool, "why": "" or why none is ready,
        "active": the active task when it is in progress, else None}`. `start` with a task in progress is
        refused (one task at a time; `start_task` starts one beside it)."""
        docs = self.wb.load(detect_human=False).docs
        tasks = docs.board["tasks"]
        active = reducer.find_task(docs.board, docs.state.get("active_task_id") or "")
        active = dict(active) if active and active.get("status") == "in_progress" else None
        task, why = next_task(tasks, docs.board)
        if task is None or not start:
            return {"task": dict(task) if task else None, "started": False, "why": why, "active": active}
        if active is not None:  # one task at a time: `--start` twice must not start two
            raise Refused(f"{active['id']} is in progress: finish it (`wb task done {active['id']}`) or block it "
                          f"first; `wb task start {task['id']}` starts {task['id']} beside it")
        started = self.start_task(task["id"], actor=actor)
        return {"task": started, "started": bool(self.last.seqs), "why": "", "active": active}

    def comment_task(self, task_id: str, text: str, actor: str = "agent") -> dict[str, Any]:
        """`wb task comment ID TEXT` (issue 22): a `task.comment` event; the task keeps it in `comments`."""
        if not text.strip():
            raise UsageError("a comment says something: wb task comment ID TEXT")
        with self._tx(actor) as tx:
            task = self._task(tx, task_id)
            tx.summary = f"wb: {task_id} comment {_short(text.strip(), 40)}"
            tx.emit("task.comment", {"id": task_id, "text": text.strip()})
        self._done(tx)
        return dict(task)

    def delete_task(self, task_id: str, actor: str = "agent") -> str:
        """`wb task delete ID` (issue 22): a cancelled task leaves the board for a segment of the archive of
        its own (a `board.archive` event: model/archive.py), so `wb task show`/`list --all` still find it and
        a dependency on it stays a cancelled one. Only a cancelled task; returns the segment file."""
        from workbench.model.archive import digest, encode_segment, segment_file

        with self._tx(actor) as tx:
            task = self._task(tx, task_id)
            if task["status"] != "cancelled":
                raise Refused(f"{task_id} is {task['status']}: only a cancelled task is deleted (cancel it first: "
                              f"`wb task set {task_id} status=cancelled`)")
            children = [t["id"] for t in tx.docs.board["tasks"] if t.get("parent") == task_id]
            if children:
                raise Refused(f"{task_id} is the parent of {', '.join(children)}: move them first "
                              f"(`wb task set ID parent=null`)")
            raw = encode_segment([task])
            sha = digest(raw)
            file = segment_file([task], sha)
            tx.summary = f"wb: delete {task_id} (cancelled; kept in .workbench/{file})"
            tx.emit("board.archive", {"file": file, "ids": [task_id], "sha256": sha})
        self._done(tx)
        return file

    def show_task(self, task_id: str) -> dict[str, Any]:
        """The task on the board, or in its archive (then with `archived`: the segment file that holds it)."""
        docs = self.wb.load(detect_human=False).docs
        board = docs.board
        task = reducer.find_task(board, task_id)
        if task is None:
            task = _archived_task(self.wb, docs, task_id)
        from workbench.ops.sync import resolve_renumbered  # issue 15: an id a sync renumbered stays findable

        task, _ = resolve_renumbered(self.wb, board, task_id, task)
        if task is None:
            raise NotFound(f"no task {task_id} on the board or in its archive (see `wb task list --all`)")
        return task

    # -- state and notes ------------------------------------------------------------------------
    def note(self, text: str, actor: str = "agent", *, about: Sequence[str] | None = None) -> None:
        """Append a note to the decision log; `about` (issue 22): the work-tree paths it is about, remembered with
        HEAD's commit, so status, prime and the handoff say once a later commit changes one of them."""
        if not text.strip():
            raise UsageError("a note needs text")
        with self._tx(actor) as tx:
            payload: dict[str, Any] = {"text": text.strip()}
            if about:
                payload["about"] = self._about(about)
            noted = tx.emit("note.add", payload)["payload"]["text"]
            tx.summary = f"wb: note {_short(noted)}"  # redacted before it is cut short
        self._done(tx)

    def _about(self, paths: Sequence[str], items: list[str] | None = None) -> dict[str, Any]:
        from workbench.git import changes

        if not all(isinstance(p, str) and p.strip() for p in paths):
            raise UsageError("--about needs paths in the work tree, e.g. --about src/parser.py")
        from workbench.ops.memory import paths_about

        about: dict[str, Any] = {"paths": paths_about(self.wb.root, self.wb.root, list(paths)),
                                 "commit": changes.code_head(self.wb.root)}
        if items is not None:
            about["items"] = items
        return about

    def set_state(self, changes: dict[str, Any], actor: str = "agent", *,
                  add: Mapping[str, Sequence[str]] | None = None,
                  about: Sequence[str] | None = None) -> dict[str, Any]:
        """Set state fields such as next_action; unknown keys are refused by the schema, and the fields wb keeps
        itself (counters, the live session, last_event…) are refused here. `add` appends items to list fields
        (`wb set assumptions+=TEXT`; an item already there is not repeated); `about` (issue 22): the paths the
        assumptions this call adds are about (see `note`)."""
        kept = [k for k in [*changes, *(add or {})] if k in KEPT_STATE_KEYS]
        if kept:
            raise UsageError(f"{', '.join(kept)} is kept by wb and cannot be set; settable: "
                             f"{', '.join(SETTABLE_STATE_KEYS)}")
        with self._tx(actor) as tx:
            changes = dict(changes)
            for key, items in (add or {}).items():
                current = changes.get(key, tx.docs.state.get(key))
                if not isinstance(current, list):
                    raise UsageError(f"{key}+=…: {key} is not a list (list fields: touched_files, assumptions, "
                                     "blockers)")
                changes[key] = [*current, *(i for i in items if i not in current)]
            active = changes.get("active_task_id")  # a malformed id is the schema's to refuse
            if isinstance(active, str) and re.fullmatch(r"T-\d{3,}", active) and \
                    reducer.find_task(tx.docs.board, active) is None:
                raise Refused(f"state.md: active_task_id: no task {active} on the board (see `wb task list`)")
            real = {k: v for k, v in changes.items() if tx.docs.state.get(k, object()) != v}
            payload: dict[str, Any] = {"changes": real}
            if about:
                before = tx.docs.state.get("assumptions") or []
                added = [a for a in real.get("assumptions") or [] if a not in before]
                if not added:
                    raise UsageError("--about names the paths an assumption this write adds is about: "
                                     "wb set assumptions+='TEXT' --about PATH")
                payload["about"] = self._about(about, added)
            if not real:
                return dict(tx.docs.state)
            tx.summary = f"wb: set {', '.join(sorted(real))}"
            tx.emit("state.set", payload)
        self._done(tx)
        return dict(tx.docs.state)

    def verify(self, item_ids: Sequence[str], actor: str = "agent") -> list[dict[str, Any]]:
        """`wb verify M-…` (issue 22): each memory item holds again as of HEAD; the event records who said so.
        Returns the items as confirmed."""
        from workbench.git import changes

        if not item_ids:
            raise UsageError("name the memory items to confirm, e.g. wb verify M-12 (wb status lists the stale ones)")
        with self._tx(actor) as tx:
            known = {m["id"]: m for m in tx.docs.state.get("memory") or []}
            missing = [i for i in item_ids if i not in known]
            if missing:
                listed = ", ".join(list(known)[:10]) or "none yet (wb note --about PATH records one)"
                raise NotFound(f"no memory item {', '.join(missing)} (items: {listed})")
            head = changes.code_head(self.wb.root)
            for item_id in dict.fromkeys(item_ids):
                tx.emit("memory.verify", {"id": item_id, "commit": head})
            tx.summary = f"wb: verify {', '.join(dict.fromkeys(item_ids))}"
        self._done(tx)
        return [m for m in tx.docs.state.get("memory") or [] if m["id"] in item_ids]

    # -- reading ------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return status_of(self.wb)

    def log(self, *, type: str | None = None, session: str | None = None,
            limit: int | None = None) -> list[dict[str, Any]]:
        """`wb log`: the events of a type (`task.done`) or family (`task`) and of a session, oldest first; with
        `limit`, only the newest that many (read from the end of the log: as fast at 50,000 events as at 50)."""
        from workbench.ops import eventlist

        if limit:
            return eventlist.newest(self.wb.log, limit, type=type, session=session)[0]
        return eventlist.every(self.wb.log, type=type, session=session)

    def log_newest(self, limit: int, *, type: str | None = None,
                   session: str | None = None) -> tuple[list[dict[str, Any]], int]:
        """(the newest `limit` matching events, oldest first; how many earlier events match): `wb log`'s page."""
        from workbench.ops import eventlist

        return eventlist.newest(self.wb.log, limit, type=type, session=session, paths=self.wb.paths)

    def board(self, *, label: str | None = None, owner: str | None = None,
              status: str | None = None) -> dict[str, Any]:
        """`wb board`: the tasks in columns by status, each card with ready, waits, claim, scope and a forced
        done (ops/board.py), filtered by label, owner (or assignee) and status."""
        from workbench.ops.board import columns

        if status is not None and status not in STATUSES:
            raise UsageError(f"status {status!r}: one of {', '.join(STATUSES)}")
        from workbench.store.leases import first_seen

        board = self.wb.load(detect_human=False, need_body=False).docs.board
        now = ids.utc_now()
        return columns(board["tasks"], board, label=label, owner=owner, status=status, now=now,
                       seen=first_seen(self.wb.git.git_dir, board, now))

    def task_history(self, task_id: str) -> list[dict[str, Any]]:
        """The events that name the task, oldest first (`wb board`'s history key)."""
        from workbench.ops.board import history

        return history(self.wb, task_id)

    def validate(self, progress: Callable[[int, int], None] | None = None, *, full: bool = False) -> list[str]:
        """Every workbench file against its schema, the log's chain, the snapshots against the log. Sealed
        segments checked before on this machine are trusted by digest; `full` checks everything again."""
        from workbench.ops.validate import validate_workbench

        return validate_workbench(self.wb, progress, full=full)

    def replay(self, progress: Callable[[int, int], None] | None = None) -> ReplayReport:
        from workbench.ops.replay import replay

        return replay(self.wb, progress)


    # -- the harness: `wb run`, `wb resume`, `wb abort` -----------------------------------------------------
    def run(self, goal: str, *, plan: str | Path | None = None, steps: list[dict[str, Any]] | None = None,
            planner: str | None = None, max_turns: int | None = None, max_tool_calls: int | None = None,
            max_seconds: float | None = None,
            approver: Callable[[dict[str, Any]], bool] | None = None) -> Pending | Result:
        """`wb run GOAL`: start a harness session and drive it until it is done or yields.

        The plan comes from `plan` (a YAML or JSON plan file; a relative path is read from the current
        directory), `steps` (an inline plan: `[{"description", "tool"?, "args"?, "mode"?}]`, checked by the
        same schema as a file), `planner` (a command: the request as JSON on stdin, the plan as JSON on
        stdout), or else `planner:` in config.yaml. The budgets default to config.yaml `budget`. `approver`,
        when given, is asked inline (`approver(request) -> bool`) for a tool call that needs approval;
        without it the session yields instead.

        Returns a `Result` (`.done` is True: `.state`, `.reason`, `.steps`; `wb run` exits 0) or a `Pending`
        (`.kind` is "approval", "tool_result" or "in_doubt" — exit 3 — or "pause" — exit 4; `.yield_id`,
        `.payload`, `.reason`). Raises `Busy` while another session is live."""
        from workbench.harness import bound

        if not goal.strip():
            raise UsageError("a run needs a goal: what the session is for, in one line")
        if plan is not None and steps is not None:
            raise UsageError("give plan (a plan file) or steps (an inline plan), not both")

        def go(path: Path | None) -> Pending | Result:
            return bound.run(self.wb, goal, plan=path, planner=planner, max_turns=max_turns,
                             max_tool_calls=max_tool_calls, max_seconds=max_seconds, approver=approver,
                             on_complete=self._session_ends)

        if steps is None:
            return go(Path(plan) if plan is not None else None)
        # inline steps go through the plan-file path, so they are validated by the same schema and code
        import tempfile  # here: every `wb task add` imports this module (issue 33)

        with tempfile.TemporaryDirectory(prefix="wb-plan-") as tmp:
            inline = Path(tmp) / "inline-plan.json"
            inline.write_text(json.dumps({"steps": steps}), encoding="utf-8")
            return go(inline)

    def resume(self, *, result: Any = None, error: str | None = None, approve: bool = False, deny: bool = False,
               extend: Mapping[str, float] | Sequence[str] | None = None, yield_id: str | None = None,
               plan: str | Path | None = None, planner: str | None = None,
               approver: Callable[[dict[str, Any]], bool] | None = None, retry: bool = False, skip: bool = False,
               approved_by: str = "agent") -> Pending | Result:
        """`wb resume`: continue the live session from where it stopped (a yield, a pause, or a crash).

        Answer what it waits for: `result` (the awaited tool's result, any JSON value) or `error` (why that
        tool failed); `approve=True` or `deny=True` for a tool call waiting for approval (denied, the step
        ends denied and the session goes on). `extend` raises budgets: `{"turns": N, "tool_calls": N,
        "seconds": N}` (or the CLI's `["turns=N"]`). `yield_id` refuses unless it is the pending yield.
        `plan`/`planner` are needed again when the session must replan. `retry`/`skip` answer a failed step's
        pause (`step_failed:<id>`). Approving or denying a confirm_once/mutating call is a person's under
        config.yaml `approvals: human` (the default): asked on /dev/tty, PersonRequired (exit 5) off a terminal
        and always over MCP; `approved_by="human"` is a claim proven the same way. Returns as `run`."""
        from workbench.harness import bound

        if approve and deny:
            raise UsageError("approve or deny, not both")
        if result is not None and error is not None:
            raise UsageError("give a result or an error, not both")
        if approve or deny:
            approved_by = self._approver_of(approve, approved_by)
        grow = bound.parse_extend(_extend_items(extend))
        return bound.resume(self.wb, payload=result, error=error,
                            approve=True if approve else (False if deny else None), extend=grow,
                            yield_id=yield_id, plan=Path(plan) if plan is not None else None, planner=planner,
                            approver=approver, retry=retry, skip=skip, approved_by=approved_by,
                            on_complete=self._session_ends)

    def _approver_of(self, approve: bool, claimed: str) -> str:
        """Who answers the pending approval (issue 19): a proven person under `approvals: human` or when one is
        claimed; under `approvals: any`, whoever runs this (an agent unless a person is at the terminal)."""
        from workbench.harness.bound import approvals_of

        session = self.wb.load(detect_human=False).docs.state.get("session") or {}
        pending = session.get("pending") or {}
        if pending.get("kind") == "in_doubt" and approve:
            # running a call in doubt again is approving it again: a person's, for a tool that asks one
            request = pending.get("payload") or {}
            mode = self._mode_of(session, request)
            if mode in ("confirm_once", "mutating") and approvals_of(self.wb.config) == "human":
                return person_only(f"running `{request.get('tool', '?')}` ({mode}) again, in doubt",
                                   "wb resume --approve")
            return claimed
        if pending.get("kind") != "approval":
            return claimed
        if approvals_of(self.wb.config) == "human" or claimed == "human":
            request = pending.get("payload") or {}
            verb, flag = ("approving", "--approve") if approve else ("denying", "--deny")
            return person_only(f"{verb} `{request.get('tool', '?')}` ({request.get('mode', 'mutating')})",
                               f"wb resume {flag}")
        return "human" if provenance.current().proven_person else "agent"

    def _mode_of(self, session: dict[str, Any], request: dict[str, Any]) -> str:
        """The mode a pending call's step runs in: the step's own, else its tool's, else `mutating` (a tool wb
        does not know)."""
        plan = session.get("plan") or []
        step = next((s for s in plan if isinstance(s, dict) and s.get("id") == request.get("step")), {})
        tool = (self.wb.config.get("tools") or {}).get(request.get("tool")) or {}
        return str(step.get("mode") or (tool.get("mode") if isinstance(tool, dict) else None) or "mutating")

    def _session_ends(self) -> None:
        """The end of a `wb run` session (issue 16): the handoff packet is written into the commit that ends
        it (no event of its own: `session.complete` is what it describes). A packet that cannot be written
        does not undo the session: its reason is a warning in `self.last`."""
        from workbench.ops.handoff import write_packet

        try:
            write_packet(self.wb)
        except (WorkbenchError, OSError) as err:
            self.last = LastWrite(warnings=[f"the handoff packet was not written: {err}"])

    def abort(self, reason: str | None = None) -> Result:
        """`wb abort --reason TEXT`: end the live session (paused or waiting); its events stay in the log and
        `reason` is recorded on the abort (default: who aborted, from how this process was started). The
        abort's actor is this process's (model/provenance.py). Returns the `Result` (its `.steps` with their
        final status); `Refused` when no session is live."""
        from workbench.harness import bound

        who = provenance.current()
        if not reason:
            reason = ("aborted by a person at a terminal" if who.actor == "human"
                      else f"aborted by an agent (via {who.via})")
        return bound.abort(self.wb, reason, on_complete=self._session_ends, by=who.actor)

    # -- repair, review, upgrade: `wb doctor`, `wb diff`, `wb migrate` -------------------------------------
    def doctor(self, fix: bool = False, progress: Callable[[int, int], None] | None = None, *,
               full: bool = False) -> DoctorReport:
        """`wb doctor [--fix]`: a torn log tail, snapshots behind the log, a broken hash chain, schema problems,
        uncommitted workbench changes, leftover temp files, a lock held now. With `fix`, repair what can be
        (never the hash chain), after waiting for a running wb to finish. Returns the report: `.healthy`
        (`wb doctor` exits 0 when True, else 1) and `.findings` (`.code`, `.message`, `.fixable`, `.fixed`;
        `.as_dict()` is an entry of `wb doctor --json`)."""
        from workbench.ops.doctor import examine

        if fix:
            with self.wb.lock():
                pass  # wait for a running wb to finish first
        if getattr(getattr(self.wb, "storage", None), "kind", None) == "sqlite":
            from workbench.ops.doctor_sqlite import examine_sqlite  # one database: nothing of files or git

            return examine_sqlite(self.wb, fix, full=full)
        return examine(self.wb, fix=fix, progress=progress, full=full)

    def diff(self, rev_a: str | None = None, rev_b: str | None = None, *,
             all_fields: bool = False) -> dict[str, Any]:
        """`wb diff [REV [REV]]`: what changed in the workbench between two revisions, by meaning — the dict
        `wb diff --format json` prints (docs/diff.md). See `diff()`."""
        return diff(self.root, rev_a, rev_b, all_fields=all_fields)

    def migrate(self, dry_run: bool = False, *, progress: Callable[[int, int], None] | None = None,
                now: str | None = None) -> MigrateReport:
        """`wb migrate [--dry-run]`: upgrade the files an older wb wrote, record `migration.apply` and commit.
        Idempotent; finishes an interrupted migration; `dry_run` computes the same plan and writes nothing.
        Returns the report (`.changed`, `.files`, `.commit`, `.warnings`; `.to_json()` is what
        `wb migrate --json` prints). A file newer than this wb is refused (`SchemaRefused`, exit 5)."""
        from workbench.migrate.apply import migrate

        if getattr(getattr(self.wb, "storage", None), "kind", None) == "sqlite":
            from workbench.migrate.sqlite import migrate_sqlite  # the database, in one transaction

            return migrate_sqlite(self.wb, dry_run=dry_run, now=now)
        return migrate(self.root, dry_run=dry_run, now=now, progress=progress)

    # -- the handoff packet and what changed since a yield (issue 16) --------------------------------------
    def handoff(self, actor: str = "wb") -> dict[str, Any]:
        """`wb handoff`: write .workbench/handoff.json and handoff.md from what the workbench holds (see
        ops/handoff.py) as one transaction: a `handoff.write` event, both files, one commit. Idempotent: when
        the packet is the one already written, nothing is written or committed (`self.last.seqs` is empty).
        Returns the packet. Also what the agent hooks' Stop/SessionEnd and the end of `wb run` call."""
        from workbench.ops.handoff import build, recent, unchanged
        from workbench.ops.status import waiting_writes

        with self.wb.transaction(actor=actor) as tx:
            # what waits in the git directory while git is mid-operation (otherwise this write lands it)
            waiting = waiting_writes(self.wb, tx.loaded) if tx.deferred else None
            data, raw, md = build(self.wb, tx.docs, recent(self.wb.log, tx.events), waiting)
            if not unchanged(self.wb, raw, md):
                tx.put_file("handoff.json", raw)
                tx.put_file("handoff.md", md)
                tx.summary = f"wb: handoff: {_short(data['next_action']['text'])}"
                tx.emit("handoff.write", {"sha256": hashlib.sha256(raw).hexdigest(),
                                          "next_action": data["next_action"], "risks": len(data["risks"]),
                                          "describes": data["describes"]["last_event"]})
        self._done(tx)
        return data

    def read_handoff(self) -> dict[str, Any] | None:
        """The latest packet written (handoff.json), or None."""
        raw = _read(self.wb.paths.wb / "handoff.json")
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def since_yield(self) -> dict[str, Any] | None:
        """What changed since the live session yielded (new commits, files changed, another branch or
        worktree): the dict `wb resume` shows before it continues and records in the resume event; None when
        no session waits or its yield recorded no position."""
        from workbench.git.changes import since

        session = self.wb.load(detect_human=False, need_body=False).docs.state.get("session")
        pending = session.get("pending") if isinstance(session, dict) else None
        if not isinstance(pending, dict):
            return None
        return since(self.root, pending.get("where"))

    # -- other agents' events: `wb hook` ------------------------------------------------------------------
    def record_event(self, type: str, payload: dict[str, Any], actor: str = "agent", *, commit: bool = True,
                     summary: str | None = None) -> dict[str, Any]:
        """Record one event of a type wb does not fold (e.g. `agent.tool_call`, as `wb hook claude-code` does)
        as one transaction: redact, clip the payload to size (`model/clip.py`), validate, append, and commit
        (`commit=False` leaves the commit to the next write). Returns the logged event; `Refused` for a type wb
        folds into state.md or the harness session, `UsageError` for a malformed type or payload. Many events
        at once: `record_events`, one transaction for all of them."""
        clipped = self._recordable(type, payload, actor)
        with self.wb.transaction(actor=self._actor(actor), commit=commit) as tx:
            tx.summary = summary or f"wb: {type}"
            event = tx.emit(type, clipped)
        self._done(tx)
        return event

    def record_events(self, events: Sequence[Mapping[str, Any]], actor: str = "agent", *, commit: bool = True,
                      summary: str | None = None) -> list[dict[str, Any]]:
        """Record many events (`[{"type": "agent.tool_call", "payload": {...}}, ...]`) in ONE transaction and
        one commit: each checked as `record_event` checks it (redacted, clipped, validated), all or nothing —
        one bad event refuses them all (its index named: `events[3]: …`) and nothing is written. The bulk path
        for API users: 50,000 events cost one commit, not 50,000. Returns the logged events (none given: none
        written, no commit)."""
        checked: list[tuple[str, dict[str, Any]]] = []
        for i, item in enumerate(events):
            if not isinstance(item, Mapping):
                raise UsageError(f"events[{i}]: an event is a mapping {{\"type\": …, \"payload\": {{…}}}}")
            extra = sorted(str(k) for k in set(item) - {"type", "payload"})
            if extra:
                raise UsageError(f"events[{i}]: unknown key {', '.join(extra)} (an event to record has "
                                 "`type` and `payload`; wb sets seq, id, ts, actor and prev)")
            try:
                payload = self._recordable(item.get("type"), item.get("payload"), actor)
                checked.append((str(item["type"]), payload))
            except WorkbenchError as err:
                raise type(err)(f"events[{i}]: {err.message}") from None
        if not checked:
            self.last = LastWrite()
            return []
        with self.wb.transaction(actor=self._actor(actor), commit=commit) as tx:
            logged = [tx.emit(kind, payload) for kind, payload in checked]
            kinds = sorted({kind for kind, _ in checked})
            tx.summary = summary or _short(f"wb: record {len(logged)} events ({', '.join(kinds)})", 72)
        self._done(tx)
        return logged

    def _recordable(self, type: Any, payload: Any, actor: str) -> dict[str, Any]:
        """An event wb does not fold, checked (type, actor, payload) and its payload redacted and clipped."""
        from workbench.model.clip import clip_payload
        from workbench.model.eventtypes import HARNESS_EVENTS

        if not isinstance(type, str) or not EVENT_TYPE.match(type):
            raise UsageError(f"event type {type!r}: expected dotted lower-case words, e.g. agent.tool_call")
        if type in reducer.REDUCERS or type in HARNESS_EVENTS:
            raise Refused(f"event type {type}: wb folds it into state.md or the harness session; record it "
                          f"through its own command, or choose a type of your own (e.g. "
                          f"agent.{type.split('.')[-1]})")
        if actor not in ("agent", "human", "wb"):
            raise UsageError(f"actor {actor!r}: agent, human or wb")
        if not isinstance(payload, dict):
            raise UsageError("an event payload is a JSON object")
        small = _small_json(payload)
        if small is not None:  # nothing to clip, before or after redaction: the transaction redacts it
            return small
        # redacted before clipping: a clip could cut a secret in two, and its sha256 would be of the secret
        return clip_payload(redact(payload, secret_values(self.wb.config)))

    # -- sync and claims (issue 15: docs/sync.md) ---------------------------------------------------------
    def sync(self, remote: str | None = None, *, push_branch: bool = False) -> dict[str, Any]:
        """`wb sync [REMOTE]`: fetch, merge the remote's state by wb's rules, commit, push (ops/sync.py).
        Returns the report as data (`up_to_date`, `pushed`, `taken`, `renumbered`…)."""
        from workbench.ops import sync as syncop

        return syncop.sync(self.wb, remote, push_branch=push_branch).as_dict()

    def claim(self, task_id: str, *, agent: str | None = None, lease: str | int | None = None,
              remote: str | None = None) -> dict[str, Any]:
        """`wb task claim ID`: win the task for `agent` across clones (ops/claims.py); Busy (exit 6) when
        another agent holds it. `lease`: seconds, or a duration such as "30m" (default 1 h)."""
        from workbench.ops import claims

        return claims.claim(self.wb, task_id, agent=agent, lease_s=lease_seconds(lease), remote=remote)

    def claim_next(self, *, agent: str | None = None, lease: str | int | None = None,
                   remote: str | None = None) -> dict[str, Any] | None:
        """`wb task next --claim`: claim the first ready task no other agent holds; None when none is ready."""
        from workbench.ops import claims

        return claims.claim_next(self.wb, agent=agent, lease_s=lease_seconds(lease), remote=remote)

    def claims(self) -> list[dict[str, Any]]:
        """The claims held now: [{id, agent, until, since, took_over_from?}]."""
        from workbench.ops import claims

        board = self.wb.load(detect_human=False, need_body=False).docs.board
        now = ids.utc_now()
        return claims.claims_held(board, now, claims.seen_leases(self.wb, board, now))


def diff(path: str | Path | None = None, rev_a: str | None = None, rev_b: str | None = None, *,
         all_fields: bool = False) -> dict[str, Any]:
    """`wb diff [REV [REV]]` in the git work tree containing `path`, as the dict `wb diff --format json` prints.
    No revision: HEAD (or the branch config.yaml `git.ref` records state on) against the working tree; one:
    it against the working tree (`A..B` and `A...B` as in git); two: `rev_a` against `rev_b`. `all_fields`
    keeps the fields every write changes (updated_at, last_event). A revision may be a point of the event log
    (`@SEQ`, `@-N`; docs/diff.md), the only kind a workbench kept in SQLite takes (with `now`; no revision is
    the start of its latest session against now). A module-level function as well as a verb: like `git diff`,
    it needs no workbench for git revisions (a side without one is an empty workbench)."""
    from workbench.errors import NotFound
    from workbench.git.repo import find_worktree
    from workbench.review.diff import diff as compare_revs
    from workbench.review.logpoints import LogSides
    from workbench.store import backend, opening

    if rev_a is None and rev_b is not None:
        raise UsageError("a second revision needs a first")
    start = Path(path) if path is not None else Path.cwd()
    try:
        root = find_worktree(start)
    except NotFound:  # outside any repository: a workbench kept in SQLite without git, or none
        found = backend.find_nogit(start)
        if found is None:
            raise
        root = found
    sqlite = backend.is_sqlite_config(root / ".workbench" / "config.yaml")  # its history is its event log
    points = LogSides(root, lambda: opening.discover(root), sqlite)
    revs = [r for r in (rev_a, rev_b) if r is not None]
    return compare_revs(root, revs, all_fields=all_fields, default_base="HEAD" if revs else _default_base(root),
                        points=points)


def _default_base(root: Path) -> str:
    """HEAD, or the branch config.yaml's git.ref records state on (then HEAD's tree has no workbench)."""
    config = root / ".workbench" / "config.yaml"
    if not config.exists():
        return "HEAD"
    from workbench.store.config import load_config

    try:
        ref = load_config(config)["git"].get("ref")
    except WorkbenchError:
        return "HEAD"
    return str(ref) if ref else "HEAD"


def lease_seconds(lease: str | int | None) -> int:
    from workbench.model.claims import DEFAULT_LEASE_S, parse_duration

    if lease is None:
        return DEFAULT_LEASE_S
    if isinstance(lease, int):
        if lease <= 0:
            raise UsageError("--lease: it must be longer than 0s")
        return lease
    try:
        return parse_duration(lease)
    except ValueError as err:
        raise UsageError(f"--lease: {err}") from None


def join(path: str | Path | None = None, ref: str = "wb-state", remote: str | None = None) -> bool:
    """A worktree or fresh clone without `.workbench/` takes up the existing state branch `ref` (this clone's,
    else the remote's) and registers wb's drivers; False when there is none to take up."""
    from workbench.git.repo import find_worktree
    from workbench.ops import sync as syncop
    from workbench.store.drivers import register_drivers

    root = find_worktree(Path(path) if path is not None else Path.cwd())
    wb = Workbench(root)
    if wb.paths.wb.is_dir() and wb.paths.events.exists():
        return False
    if not syncop.join(wb, ref, remote):
        return False
    register_drivers(root, wb.git.common_dir)
    return True


def _extend_items(extend: Mapping[str, float] | Sequence[str] | None) -> list[str]:
    """`--extend` items (`turns=N`) from a mapping, or the CLI's items as they are."""
    if extend is None:
        return []
    if isinstance(extend, str):
        return [extend]
    if isinstance(extend, Mapping):
        return [f"{name}={number}" for name, number in extend.items()]
    return list(extend)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def goalposts_moved(task: dict[str, Any], changes: dict[str, Any]) -> list[str]:
    """The goalposts (acceptance, scope) `changes` moves on a started task: a person's to move (issue 16, 19)."""
    started = task.get("status") != "todo" or bool(task.get("start_head"))
    if not started:
        return []
    return sorted(k for k in changes if k in GOALPOSTS and task.get(k) != changes[k])


def set_command(task_id: str, changes: dict[str, Any], keys: list[str]) -> str:
    """The `wb task set` a person runs to make these changes."""
    import shlex

    shown = " ".join(shlex.quote(f"{k}={json.dumps(changes[k], ensure_ascii=False)}") for k in keys)
    return f"wb task set {task_id} {shown}"


# -- person-only actions (issue 19): a person proven at a terminal; never a flag, MCP or a recorded reason ------
def person_only(action: str, command: str) -> str:
    """The actor of a person-only action: "human", once a person confirmed on /dev/tty (ops/person.py; asked
    at most once a process). MCP is an agent's door whatever its terminal: refused there without asking.
    PersonRequired (exit 5) names `command`, what the person runs."""
    from workbench.ops.person import require_person

    require_person(action, command)
    return "human"


def _head(root: Path) -> str | None:
    from workbench.git.changes import head

    try:
        return head(root)
    except WorkbenchError:  # no git on PATH: the proof says so by a null HEAD
        return None


def scope_blocking(verdict: dict[str, Any] | None) -> list[str]:
    from workbench.model.scope import blocking

    return blocking(verdict) if verdict else []


def _small_json(payload: dict[str, Any]) -> dict[str, Any] | None:
    """`payload` as JSON data when it is so small that `clip_payload` leaves it as it is, redacted first or not
    (the bulk path's shortcut: most events are a few hundred bytes): at most CLIP_TEXT/2 characters of JSON,
    so no string nears CLIP_TEXT even if each secret in it grew to the redaction mark, and fewer brackets than
    CLIP_DEPTH, so nothing nests that deep. None: take the whole way (redact, then clip)."""
    from workbench.model.clip import CLIP_DEPTH, CLIP_TEXT

    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) > CLIP_TEXT // 2 or text.count("[") + text.count("{") >= CLIP_DEPTH:
        return None
    data: dict[str, Any] = json.loads(text)
    return data


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _archived(board: dict[str, Any], task_id: str) -> bool:
    from workbench.model.archive import holding

    return holding(board, task_id) is not None


def _archived_task(wb: Workbench, docs: reducer.Docs, task_id: str) -> dict[str, Any] | None:
    """An archived task (issue 20) as `show_task` returns it: with `archived`, its segment file."""
    from workbench.store.archive import find

    found = find(wb.paths, docs, task_id)
    return {**found[0], "archived": found[1]} if found else None


def _not_on_board(wb: Workbench, docs: reducer.Docs, task_id: str) -> NotFound | Refused:
    """Why a write cannot name `task_id`: archived tasks are sealed (read-only), others do not exist."""
    from workbench.model.archive import holding

    ref = holding(docs.board, task_id)
    if ref is not None:
        return Refused(f"{task_id} is archived in .workbench/{ref['file']}: archived tasks are sealed and cannot "
                       "change (see it with `wb task show`; add a new task to take the work up again)")
    return NotFound(f"no task {task_id} on the board (see `wb task list`)")


def parent_problem(board: dict[str, Any], task_id: str, parent: str) -> None:
    """Refuse a parent that is missing, the task itself, or one of its own descendants (issue 22)."""
    seen = {task_id}
    node: str | None = parent
    while node is not None:
        if node in seen:
            raise Refused(f"board.json: {task_id} cannot have {parent} as parent: it would be its own ancestor")
        seen.add(node)
        found = reducer.find_task(board, node)
        if found is None:
            raise Refused(f"board.json: no task {node} to be the parent (see `wb task list`)")
        node = found.get("parent")


def open_children(board: dict[str, Any], task_id: str) -> None:
    """Refuse to finish a parent whose children are not all done or cancelled (issue 22), naming them."""
    left = [f"{t['id']} ({t.get('status')})" for t in board["tasks"]
            if t.get("parent") == task_id and t.get("status") not in ("done", "cancelled")]
    if left:
        raise Refused(f"{task_id} is the parent of {', '.join(left)}: finish or cancel "
                      f"{'it' if len(left) == 1 else 'them'} first")


def _require_open(task: dict[str, Any], verb: str) -> None:
    if task["status"] in ("done", "cancelled"):
        raise Refused(f"{task['id']} is {task['status']}; cannot {verb} it "
                      f"(reopen with `wb task set {task['id']} status=todo`)")


def next_task_id(board: dict[str, Any]) -> str:
    """Past every id on the board and in its archive (whose references say their highest without a read)."""
    from workbench.model.archive import highest_archived

    highest = highest_archived(board)
    for task in reversed(board["tasks"]):  # newest last: the rest rarely pass the first test
        tid = task.get("id", "")
        if isinstance(tid, str) and tid[2:].isdigit() and int(tid[2:]) > highest and TASK_ID.match(tid):
            highest = int(tid[2:])
    return f"T-{highest + 1:03d}"


def init(path: str | Path | None = None, ref: str | None = None, *, backend: str | None = None, no_git: bool = False,
         db: str | None = None) -> tuple[Bench, bool, LastWrite]:
    """Create `.workbench/` (idempotent). `ref` records state on that branch instead of the checked-out one.
    `backend="sqlite"` keeps it in one SQLite database (`db`, default under the git directory; `no_git`: no
    repository, the database in `.workbench/`; docs/storage.md). Returns (bench, created, what was committed)."""
    from workbench.ops import init as initcmd

    if backend is None:  # WB_DEFAULT_BACKEND: a CI runner's (or the test suite's) choice for every `wb init`
        import os

        backend = os.environ.get("WB_DEFAULT_BACKEND") or "files"
        if backend not in ("files", "sqlite"):
            raise UsageError(f"WB_DEFAULT_BACKEND: {backend!r} is not files or sqlite")
        if backend == "sqlite" and not no_git:  # a workbench already here stays in its own backend
            from workbench.git.repo import find_worktree
            from workbench.store import backend as storage

            config = find_worktree(Path(path) if path is not None else Path.cwd()) / ".workbench" / "config.yaml"
            if config.exists() and not storage.is_sqlite_config(config):
                backend = "files"
    if backend == "sqlite":
        if ref is not None:
            raise Refused("--ref records state on a git branch: not with --backend sqlite")
        wb, created, last = initcmd.init_sqlite(Path(path) if path is not None else Path.cwd(), no_git=no_git, db=db)
        return Bench(wb), created, last
    if no_git or db is not None:
        raise Refused(f"{'--no-git' if no_git else '--db'} needs --backend sqlite: the files backend keeps the "
                      "workbench in git")
    moved: list[str] | None = None
    if ref is None:  # a fresh clone of a repository whose state is on a branch of its own: take that up
        ref = _state_branch_to_take_up(path)
    joined = ref if ref is not None and join(path, ref) else None
    if ref is not None and joined is None:  # issue 15: take up the state branch that exists, or move to it
        from workbench.git.repo import find_worktree
        from workbench.ops.sync import move_to_ref

        root = find_worktree(Path(path) if path is not None else Path.cwd())
        if (root / ".workbench" / "config.yaml").exists():
            moved = move_to_ref(Workbench(root), ref)
    wb, created, last = initcmd.init(Path(path) if path is not None else Path.cwd(), ref)
    if moved:
        last.warnings.extend(moved)
    bench = Bench(wb)
    bench.joined = joined
    return bench, created, last


def _state_branch_to_take_up(path: str | Path | None) -> str | None:
    """`wb init` with no --ref where neither the work tree nor HEAD has a workbench, but this clone already
    knows a `wb-state` branch holding one (its own, or a remote's as `git clone` fetched it): "wb-state", which
    `wb init` then takes up as `wb init --ref wb-state` does — never a second, empty workbench beside it."""
    from workbench.git.repo import find_worktree

    root = find_worktree(Path(path) if path is not None else Path.cwd())
    if (root / ".workbench").exists():
        return None
    wb = Workbench(root)
    if wb.git.committed_file(".workbench/events.jsonl") is not None:
        return None  # the branch has one (a sparse checkout, a deletion): `wb init` says so
    for ref in ["refs/heads/wb-state", *(f"refs/remotes/{r}/wb-state" for r in wb.git.remotes())]:
        sha = wb.git.ref_sha(ref)
        if sha is not None and "events.jsonl" in wb.git.workbench_files_at(sha):
            return "wb-state"
    return None


def export_workbench(path: str | Path | None, target: str | Path) -> dict[str, Any]:
    """`wb export FILE`: the workbench found from `path`, whichever backend keeps it, dumped to `target`
    (ops/transfer.py): every event and call record as stored, and config.yaml."""
    from workbench.ops import transfer

    return transfer.export(opening.discover(Path(path) if path is not None else None), Path(target))


def import_workbench(path: str | Path | None, source: str | Path, backend: str = "files", *, no_git: bool = False,
                     db: str | None = None) -> dict[str, Any]:
    """`wb import FILE`: a new workbench in the git work tree of `path` (with `no_git`, `path` itself) from a
    dump `wb export` wrote, kept in `backend` ("files" or "sqlite")."""
    from workbench.ops import transfer

    return transfer.import_(Path(path) if path is not None else Path.cwd(), Path(source), backend, no_git=no_git,
                            db=db)
