"""The bodies of `wb mcp`'s tools (`Tools`), each calling the Python API (`workbench.api.Bench`, the command line's
verbs), so a call is the same transaction as on the command line: lock, validation, event log, atomic snapshots,
one git commit. A refused call comes back as an error `Answer` whose text is the one-line message the CLI prints
(without its `wb: `); every other answer carries the data and the same JSON as text, for clients that read only
text. The tool table is integrations/mcptools.py's."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from workbench.errors import Refused, UsageError, WorkbenchError
from workbench.integrations.mcptools import (
    EVENT_DEFAULT_FIELDS,
    LIST_LIMIT,
    LOG_LIMIT,
    PAGE_BYTES,
    SPECS,
    TASK_DEFAULT_FIELDS,
    TASK_FIELDS,
    check_arguments,
)

if TYPE_CHECKING:
    from workbench.api import Bench

class Text(NamedTuple):
    text: str


class Answer(NamedTuple):
    """A tool's answer: the data (`structuredContent`), the same as JSON text, or an error's one line."""

    text: str
    data: dict[str, Any] | None = None
    is_error: bool = False

    @property
    def content(self) -> list[Text]:
        return [Text(self.text)]


class Tools:
    """The tool bodies, one call at a time: the SDK runs tool calls concurrently, and an agent's calls should
    land in the order they run (a harness run is never interleaved with its own task updates)."""

    def __init__(self, start: Path | None) -> None:
        self.start = start
        self._mutex = threading.Lock()
        self._opened: list[Bench] = []

    def bench(self) -> Bench:
        # Opened afresh for each call, as each CLI process does: a server lives as long as the agent's session,
        # and config.yaml (tools, hooks, budgets) may change meanwhile. Opening is cheap (a walk up to .git).
        # A server started before `wb init` answers each call with the one-line error instead of failing.
        # Closed when the call ends (`call`): a Bench keeps a helper git process between its commits.
        from workbench.api import Bench

        bench = Bench.open(self.start)
        self._opened.append(bench)
        return bench

    @staticmethod
    def served(bench: Bench, command: str) -> None:
        """Refuse a tool whose `wb` command the backend keeping the workbench does not serve, with the CLI's one
        line (store/backend.SQLITE_UNSUPPORTED: the harness and `wb sync` on SQLite, for now)."""
        from workbench.store import backend

        if command in backend.SQLITE_UNSUPPORTED and backend.kind_of(bench.wb.config) == "sqlite":
            raise backend.unsupported(backend.SQLITE_UNSUPPORTED[command])

    def dispatch(self, name: str, args: Any) -> Answer:
        """Check `args` against tool `name`'s input schema and call it."""
        try:
            checked = check_arguments(name, SPECS[name].input, args)
        except WorkbenchError as err:
            return _error(str(err))
        method: Callable[..., Answer] = getattr(self, name)
        return method(**checked)

    def call(self, fn: Callable[[], dict[str, Any]]) -> Answer:
        with self._mutex:
            try:
                return _answer(fn())
            except WorkbenchError as err:
                return _error(str(err))
            except Exception as err:  # a bug: one line, as the CLI says it, never a silent generic message
                return _error(f"internal error: {type(err).__name__}: {err}")
            finally:
                while self._opened:
                    self._opened.pop().close()

    # -- reading --------------------------------------------------------------------------------
    def status(self) -> Answer:
        def status_() -> dict[str, Any]:
            data = self.bench().status()
            ready = data.get("ready") or {}
            if ready.get("tasks"):  # the same start as this server's call, beside the wb command
                ready["call"] = f'task_update {{"id": "{ready["tasks"][0]["id"]}", "action": "start"}}'
            return data

        return self.call(status_)

    def task_list(self, status: str | None = None, limit: int | None = None, offset: int = 0,
                  fields: list[str] | None = None, where: dict[str, Any] | None = None) -> Answer:
        def list_() -> dict[str, Any]:
            for i, name in enumerate(fields or []):
                if name not in TASK_FIELDS:
                    raise UsageError(f"task_list: fields[{i}]: {json.dumps(name)} is not one of "
                                     f"{', '.join(TASK_FIELDS)}")
            tasks = self.bench().list_tasks(status, where)
            keep = fields or TASK_DEFAULT_FIELDS
            page = fit([{k: t[k] for k in keep if k in t} for t in tasks[offset:offset + (limit or LIST_LIMIT)]],
                       limit)
            more = offset + len(page) < len(tasks)
            return {"tasks": page, "total": len(tasks), "next_offset": offset + len(page) if more else None}

        return self.call(list_)

    def log(self, type: str | None = None, limit: int | None = None, offset: int = 0,
            fields: list[str] | None = None) -> Answer:
        def read() -> dict[str, Any]:
            from workbench.review.eventview import summarize

            bench = self.bench()
            events = bench.log(type=type)
            if type and not events:
                _known_type(type, bench)
            end = max(0, len(events) - offset)
            keep = fields or EVENT_DEFAULT_FIELDS
            newest_first = [{k: (summarize(e.get("payload") or {}) if k == "summary" else e[k]) for k in keep
                             if k == "summary" or k in e}
                            for e in reversed(events[max(0, end - (limit or LOG_LIMIT)):end])]
            page = fit(newest_first, limit)[::-1]
            begin = end - len(page)
            return {"events": page, "total": len(events), "next_offset": offset + len(page) if begin > 0 else None}

        return self.call(read)

    # -- writing --------------------------------------------------------------------------------
    def task_add(self, title: str, acceptance: list[str] | None = None, kind: str = "build",
                 reviews: str | None = None, owner: str | None = None, depends_on: list[str] | None = None,
                 description: str | None = None, scope: dict[str, Any] | None = None, priority: int | None = None,
                 labels: list[str] | None = None, parent: str | None = None, assignee: str | None = None) -> Answer:
        def add() -> dict[str, Any]:
            bench = self.bench()
            task = bench.add_task(title, kind=kind, owner=owner, acceptance=acceptance or [],
                                  depends_on=depends_on or [], description=description, reviews=reviews,
                                  scope=scope, priority=priority, labels=labels, parent=parent, assignee=assignee)
            return _written(bench, task=task)

        return self.call(add)

    def task_update(self, id: str, action: str, reason: str | None = None, changes: dict[str, Any] | None = None,
                    force: bool = False) -> Answer:
        def update() -> dict[str, Any]:
            bench = self.bench()
            if action == "start":
                task = bench.start_task(id, force=force)
            elif action == "done":
                task = bench.done_task(id, force=force)
            elif action == "block":
                task = bench.block_task(id, reason or "")
            elif action == "set":
                if not changes:
                    raise UsageError("task_update set needs changes, e.g. {\"owner\": \"human\"}")
                task = bench.set_task(id, changes)
            else:
                raise UsageError(f"task_update: action {action!r} is not one of start, done, block, set")
            return _written(bench, task=task)

        return self.call(update)

    def note(self, text: str) -> Answer:
        def add() -> dict[str, Any]:
            bench = self.bench()
            bench.note(text)
            return _written(bench)

        return self.call(add)

    def set_state(self, changes: dict[str, Any]) -> Answer:
        def set_() -> dict[str, Any]:
            if not changes:
                raise UsageError("set_state needs changes, e.g. {\"next_action\": \"Write the parser\"}")
            bench = self.bench()
            state = bench.set_state(changes)
            return _written(bench, state={k: state.get(k) for k in changes})

        return self.call(set_)

    # -- the harness ----------------------------------------------------------------------------
    def run(self, goal: str, plan: str | None = None, steps: list[dict[str, Any]] | None = None,
            max_turns: int | None = None, max_tool_calls: int | None = None,
            max_seconds: float | None = None) -> Answer:
        def start() -> dict[str, Any]:
            if not goal.strip():
                raise UsageError("run: goal must not be empty")
            bench = self.bench()
            if (plan is None) == (steps is None):
                raise UsageError("run needs one of plan (a plan file) or steps (an inline plan)")
            where = inside(bench.root, plan) if plan is not None else None
            self.served(bench, "run")
            return _outcome(bench.run(goal, plan=where, steps=steps, max_turns=max_turns,
                                      max_tool_calls=max_tool_calls, max_seconds=max_seconds), bench)

        return self.call(start)

    def resume(self, decision: str | None = None, result: Any = None, error: str | None = None,
               extend: dict[str, float] | None = None, retry: bool = False, skip: bool = False,
               yield_id: str | None = None, plan: str | None = None) -> Answer:
        def go_on() -> dict[str, Any]:
            bench = self.bench()
            where = inside(bench.root, plan) if plan else None
            self.served(bench, "resume")
            return _outcome(bench.resume(result=result, error=error, approve=decision == "approve",
                                         deny=decision == "deny", extend=extend, yield_id=yield_id,
                                         retry=retry, skip=skip, plan=where), bench)

        return self.call(go_on)

    def abort(self, reason: str) -> Answer:
        def abort_() -> dict[str, Any]:
            bench = self.bench()
            self.served(bench, "abort")
            return _outcome(bench.abort(reason.strip()))

        return self.call(abort_)

    # -- many agents, many clones (issue 15) -----------------------------------------------------
    def claim(self, id: str | None = None, agent: str | None = None, lease: str | None = None) -> Answer:
        def claim_() -> dict[str, Any]:
            bench = self.bench()
            if id is None:
                won = bench.claim_next(agent=agent, lease=lease)
                return won if won is not None else {"claimed": None, "why": "no task is ready to claim"}
            return bench.claim(id, agent=agent, lease=lease)

        return self.call(claim_)

    def sync(self, remote: str | None = None) -> Answer:
        def sync_() -> dict[str, Any]:
            bench = self.bench()
            self.served(bench, "sync")
            return bench.sync(remote)

        return self.call(sync_)


def _known_type(family: str, bench: Bench) -> None:
    """Refuse an event type or family no event can have, rather than answer an empty page as if none had
    happened yet (`tsk` for `task`). Known: what wb folds, the harness's, and whatever the log holds."""
    from workbench.model.eventtypes import HARNESS_EVENTS
    from workbench.model.reducer import REDUCERS

    types = {*REDUCERS, *HARNESS_EVENTS, *(e["type"] for e in bench.log())}
    if family.startswith("agent") or any(t == family or t.startswith(family + ".") for t in types):
        return
    families = sorted({t.split(".")[0] for t in types} | {"agent"})
    raise UsageError(f"log: type {family!r} names no event type; families: {', '.join(families)}")


def fit(items: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """A default page (`limit` not given): as many items as fit in PAGE_BYTES of JSON, at least one. A page
    the caller sized is theirs."""
    if limit is not None:
        return items
    size = 0
    for i, item in enumerate(items):
        size += len(json.dumps(item, ensure_ascii=False, separators=(",", ":"))) + 1
        if size > PAGE_BYTES and i:
            return items[:i]
    return items


def inside(root: Path, plan: str) -> Path:
    """The plan file `plan` (relative to the repository root) if it lies inside the repository, symlinks
    resolved, and outside its `.git`; Refused otherwise, before anything reads it."""
    base = root.resolve()
    path = (root / plan).resolve()
    if not path.is_relative_to(base) or path == base or path.relative_to(base).parts[0] == ".git":
        raise Refused(f"plan {plan!r} is outside the repository {base}: give a plan file inside it")
    return path


def _answer(data: dict[str, Any]) -> Answer:
    from workbench.model.redaction import redact_known  # an answer may carry a tool's output or a hand edit

    clean = redact_known(data)
    return Answer(json.dumps(clean, ensure_ascii=False, separators=(",", ":"), default=str),
                  json.loads(json.dumps(clean, default=str)))


def _error(message: str) -> Answer:
    from workbench.model.redaction import redact_known

    return Answer(" ".join(redact_known(message).splitlines()), is_error=True)


def _written(bench: Bench, **data: Any) -> dict[str, Any]:
    last = bench.last
    return {**data, "summary": last.summary, "commit": last.commit, "warnings": last.warnings}


def _outcome(outcome: Any, bench: Bench | None = None) -> dict[str, Any]:
    from workbench.ops.yields import commands

    if outcome.done:
        return {"done": True, "state": outcome.state.value, "reason": outcome.reason, "steps": outcome.steps}
    return {"done": False, "state": outcome.state.value, "reason": outcome.reason, "kind": outcome.kind,
            "yield_id": outcome.yield_id, "payload": outcome.payload, "commands": commands(outcome),
            "calls": calls(outcome, _persons_approval(bench))}


def _persons_approval(bench: Bench | None) -> bool:
    """issue 19: under `approvals: human` (the default) no MCP client approves or denies: a person does."""
    return bench is None or bench.wb.config.get("approvals") != "any"


def calls(p: Any, persons: bool = False) -> list[str]:
    """What answers a yield, as this server's tool calls (`commands` are the same as wb commands); an approval
    a person must give (`persons`) is asked of a person, at a terminal."""
    if p.kind == "approval" and persons:
        return ["ask a person to run at a terminal: wb resume --approve (or wb resume --deny)",
                'abort {"reason": "..."}']
    if p.kind == "approval":
        return ['resume {"decision": "approve"}', 'resume {"decision": "deny"}', 'abort {"reason": "..."}']
    if p.kind in ("tool_result", "in_doubt"):
        again = ['resume {"decision": "approve"}'] if p.kind == "in_doubt" else []
        return ['resume {"result": ...}', 'resume {"error": "what went wrong"}', *again, 'abort {"reason": "..."}']
    if str(p.reason).startswith("step_failed:"):
        return ['resume {"retry": true}', 'resume {"skip": true}', 'abort {"reason": "..."}']
    if str(p.reason).startswith("budget"):
        return ['resume {"extend": {"turns": 5}}', 'abort {"reason": "..."}']
    return ["resume {}", 'abort {"reason": "..."}']
