"""The task verbs: add, import, start, block, done, set, list, next, comment, delete, show."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from workbench.api.core import BenchCore
from workbench.api.rules import (
    SETTABLE_TASK_KEYS,
    archived_task,
    goalposts_moved,
    head_of,
    is_archived,
    next_task_id,
    not_on_board,
    open_children,
    parent_problem,
    person_only,
    require_open,
    scope_blocking,
    set_command,
    shortened,
)
from workbench.errors import NotFound, PersonRequired, Refused, UsageError
from workbench.model import digest, ids, provenance, reducer
from workbench.model.dependencies import unmet_dependencies
from workbench.model.ids import TASK_ID
from workbench.model.redaction import redact, secret_values
from workbench.ops.acceptance import (
    dependency_problem,
    last_line,
    run_all,
    task_problem,
    unmet_refusal,
)
from workbench.progress import tick as progress_tick
from workbench.store import trust
from workbench.store.transaction import LastWrite, Transaction

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class TaskVerbs(BenchCore):
    """The task verbs: add, import, start, block, done, set, list, next, comment, delete, show."""

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
                        and not is_archived(board, dep):
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
            tx.summary = f"wb: add {task['id']} {shortened(added['title'])}"  # redacted before it is cut short
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
                          else f"wb: add {first} {shortened(added[0]['title'])}")
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
            raise not_on_board(self.wb, tx.docs, task_id)
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
            require_open(task, "start")
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
            head = head_of(self.root)
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
            require_open(task, "block")
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
            raise not_on_board(self.wb, loaded_docs, task_id)
        require_open(task, "finish")
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
            require_open(current, "finish")
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
                                       "head": head_of(self.root)}
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
        out["sha256"] = digest.sha256(data).hexdigest()
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
                        and not is_archived(tx.docs.board, dep):
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
        from workbench.ops import taskquery  # here, as below: a write lists nothing

        return taskquery.list_tasks(self.wb, status, where)

    def list_archived(self, status: str | None = None) -> list[dict[str, Any]]:
        """The tasks of the board's archive (issue 20), oldest segment first, each with `archived`: the segment
        file under `.workbench/` that holds it. `wb task list --all` shows them after the board's."""
        from workbench.ops import taskquery

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
        from workbench.ops.status import next_task

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
            tx.summary = f"wb: {task_id} comment {shortened(text.strip(), 40)}"
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
            task = archived_task(self.wb, docs, task_id)
        from workbench.ops.sync import resolve_renumbered  # issue 15: an id a sync renumbered stays findable

        task, _ = resolve_renumbered(self.wb, board, task_id, task)
        if task is None:
            raise NotFound(f"no task {task_id} on the board or in its archive (see `wb task list --all`)")
        return task

