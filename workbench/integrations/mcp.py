"""`wb mcp`: the workbench as a Model Context Protocol server over stdio, on the official `mcp` SDK.

Each tool calls the Python API (`workbench.api.Bench`, the command line's verbs), so a call is the same
transaction as on the command line: lock, validation, event log, atomic snapshots, one git commit. A refused
call comes back as an MCP tool error whose text is the one-line message the CLI prints (without its `wb: `).

The tools are declared here as data (`SPECS`): a terse description, an input schema that refuses unknown
arguments (`additionalProperties: false`), an output schema, and the four annotations, each set on purpose.
Arguments are checked against the input schema here, before wb is called, and a bad one is one line naming
the argument (and, for an unknown one, the allowed ones). Every result carries `structuredContent` and the
same JSON as text, for clients that read only text. Every byte of `tools/list` is spent from the agent's
context in each session, so descriptions are short and schemas carry no titles (a test keeps the answer
within 6,144 bytes on both protocol versions).

Start-up: importing the SDK costs 0.6–2 s on a small machine, and a client waits for its first usable answer
(`tools/list` after `initialize`, or `server/discover`) before anything else. So this module imports only the
standard library; `serve` loads the SDK in a thread from the first instant, meanwhile answers `initialize`,
`tools/list`, `server/discover`, `ping` and the tool calls itself (mcpfast.py: the same answers the SDK gives),
and hands the connection to the SDK at the first message that needs it. `WB_MCP_PREANSWER=0` leaves every
answer to the SDK.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from workbench import __version__
from workbench.errors import Refused, UsageError, WorkbenchError

if TYPE_CHECKING:
    from workbench.api import Bench

INSTRUCTIONS = (
    "wb keeps this repository's agent state (task board, decision log, event log) and records every change: "
    "in .workbench/, committed to git, or in its SQLite database. Call status first each session: it names the "
    "active task or the tasks ready to start; record work with task_add, task_update, note and set_state."
)

# -- the tools, as data -----------------------------------------------------------------------------------
STATUSES = ["todo", "in_progress", "blocked", "done", "cancelled"]
TASK_FIELDS = ["id", "kind", "title", "status", "owner", "acceptance", "depends_on", "description", "reviews",
               "blocked_reason", "forced_done", "created_at", "updated_at", "scope", "proof", "claim", "priority",
               "labels", "parent", "assignee", "comments"]
TASK_DEFAULT_FIELDS = ["id", "status", "title"]
TASK_FILTERS = ("ready", "blocked", "label", "priority", "parent", "assignee", "search")  # api.TASK_FILTERS
EVENT_FIELDS = ["seq", "ts", "type", "actor", "session", "summary", "payload"]
EVENT_DEFAULT_FIELDS = ["seq", "type", "actor", "summary"]
LIST_LIMIT, LOG_LIMIT = 20, 10  # default page sizes, and a default page stops at PAGE_BYTES of JSON too,
PAGE_BYTES = 1600                # so a page with its text copy stays under 4 KB however long the titles

STR = {"type": "string"}
TEXT = {"type": "string", "minLength": 1}
INT = {"type": "integer"}
STRS = {"type": "array", "items": STR}
BOOL = {"type": "boolean"}


def _in(props: dict[str, Any], *required: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def _out(*required: str) -> dict[str, Any]:
    """An output schema: the keys that make the answer what it is (every answer has more: summary, commit and
    warnings for a write, total for a page, reason for an outcome; docs/integrations.md and docs/json.md). A
    client validates structuredContent against it and no model reads it, so it spends few of tools/list's
    6,144 bytes, which the 2026-07-28 protocol's envelope shares."""
    return {"type": "object", "required": list(required)}


def _page(limit: int, most: int, fields: list[str] | None) -> dict[str, Any]:
    """A page's arguments; `fields` None: any task key (checked by the tool, as TASK_FIELDS: the names would
    cost tools/list more bytes than the filters they make room for)."""
    return {"limit": {"type": "integer", "minimum": 1, "maximum": most, "default": limit},
            "offset": {"type": "integer", "minimum": 0},
            "fields": {"type": "array", "items": {"enum": fields} if fields else STR}}


OBJ = {"type": "object"}
WRITTEN = _out("commit")
OUTCOME = _out("done", "state")


class Spec(NamedTuple):
    description: str
    input: dict[str, Any]
    output: dict[str, Any]
    # readOnlyHint, destructiveHint, idempotentHint, openWorldHint: all four, on every tool
    hints: tuple[bool, bool, bool, bool]


READ = (True, False, True, False)


def hints_of(spec: Spec) -> dict[str, bool]:
    """The four hints, as the SDK's ToolAnnotations takes them. A read-only tool says readOnlyHint and
    openWorldHint alone: the specification makes destructiveHint and idempotentHint meaningful only when
    readOnlyHint is false (and every byte of tools/list is spent from each agent session's context)."""
    read_only, destructive, idempotent, open_world = spec.hints
    if read_only:
        return {"read_only_hint": True, "open_world_hint": open_world}
    return {"read_only_hint": False, "destructive_hint": destructive, "idempotent_hint": idempotent,
            "open_world_hint": open_world}
SPECS: dict[str, Spec] = {
    "status": Spec("Start here: active/ready tasks, next action, blockers, session.",
                   _in({}), _out("status", "next_action"), READ),
    "task_list": Spec("Tasks in board order, a page at a time.",
                      _in({"status": {"enum": STATUSES}, "where": {**OBJ, "description": ",".join(TASK_FILTERS)},
                           **_page(LIST_LIMIT, 500, None)}),
                      _out("tasks", "next_offset"), READ),
    "task_add": Spec("Add a task; returns it with its id.",
                     _in({"title": TEXT, "acceptance": {**STRS, "description": "must exit 0 for done"},
                          "kind": {"enum": ["build", "review"]}, "reviews": STR,
                          "owner": {"enum": ["builder", "reviewer", "human"]}, "depends_on": STRS,
                          "description": STR, "scope": OBJ, "priority": INT, "labels": STRS, "parent": STR,
                          "assignee": STR}, "title"),
                     _out("task"), (False, False, False, False)),
    "task_update": Spec("start, done (runs acceptance; force: recorded), block (reason) or set (changes).",
                        _in({"id": TEXT, "action": {"enum": ["start", "done", "block", "set"]}, "reason": STR,
                             "changes": OBJ, "force": BOOL}, "id", "action"),
                        _out("task"), (False, True, False, True)),
    "note": Spec("Append a decision or finding to the log.", _in({"text": TEXT}, "text"), WRITTEN,
                 (False, False, False, False)),
    "set_state": Spec("Set next_action, status, active_task_id, blockers, assumptions or touched_files.",
                      _in({"changes": OBJ}, "changes"),
                      _out("state"), (False, True, True, False)),
    "log": Spec("Events, a page at a time: the newest (offset counts back), oldest first.",
                _in({"type": {"type": "string", "description": "e.g. task.done"},
                     **_page(LOG_LIMIT, 200, EVENT_FIELDS)}),
                _out("events", "next_offset"), READ),
    "run": Spec("Run a harness session (plan file or steps) to its end or a yield.",
                _in({"goal": TEXT, "plan": STR, "steps": {"type": "array", "items": OBJ,
                                                           "description": "[{description, tool?, args?, mode?}]"},
                     "max_turns": INT, "max_tool_calls": INT, "max_seconds": {"type": "number"}}, "goal"),
                OUTCOME, (False, True, False, True)),
    "resume": Spec("Resume the live session after a yield/pause.",
                   _in({"decision": {"enum": ["approve", "deny"]}, "result": {"not": {"type": "null"}}, "error": STR,
                        "extend": {"type": "object", "description": "{turns|tool_calls|seconds: N}"},
                        "retry": BOOL, "skip": BOOL, "yield_id": STR, "plan": STR}),
                   OUTCOME, (False, True, False, True)),
    "abort": Spec("End the live session (its events stay).", _in({"reason": TEXT}, "reason"),
                  OUTCOME, (False, True, True, False)),
    "claim": Spec("Claim a task across clones (no id: first ready); lease e.g. 30m.",
                  _in({"id": STR, "agent": STR, "lease": STR}), OBJ, (False, False, False, True)),
    "sync": Spec("Fetch, merge and push the shared state (git.ref).", _in({"remote": STR}),
                 _out("up_to_date", "pushed"), (False, False, True, True)),
}
TOOLS = tuple(SPECS)


# -- arguments --------------------------------------------------------------------------------------------
def check_arguments(tool: str, schema: dict[str, Any], args: Any) -> dict[str, Any]:
    """`args` checked against the tool's input schema (the subset of JSON Schema the schemas above use), less
    the nulls (a default is the body's own); a UsageError of one line naming the argument otherwise."""
    if not isinstance(args, dict):
        raise UsageError(f"{tool}: arguments are a JSON object")
    props = schema["properties"]
    unknown = [k for k in args if k not in props]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], list(props), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        allowed = ", ".join(props) or "none"
        raise UsageError(f"{tool}: unknown argument {', '.join(map(repr, unknown))}{hint}; allowed: {allowed}")
    for name in schema.get("required", []):
        if args.get(name) is None:
            raise UsageError(f"{tool}: {name} is required")
    out = {}
    for name, rule in props.items():
        if name in args and args[name] is not None:
            _check(f"{tool}: {name}", rule, args[name])
            out[name] = args[name]
    return out


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "array": lambda v: isinstance(v, list), "object": lambda v: isinstance(v, dict), "null": lambda v: v is None,
}


def _check(where: str, rule: dict[str, Any], value: Any) -> None:
    kinds = rule.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_TYPES[k](value) for k in names):
            raise UsageError(f"{where}: expected {' or '.join(names)}, got {json.dumps(value, ensure_ascii=False)}")
    if "enum" in rule and value not in rule["enum"]:
        raise UsageError(f"{where}: {json.dumps(value, ensure_ascii=False)} is not one of "
                         f"{', '.join(map(str, rule['enum']))}")
    if isinstance(value, str) and len(value.strip()) < rule.get("minLength", 0):
        raise UsageError(f"{where}: must not be empty")
    if "minimum" in rule and value < rule["minimum"] or "maximum" in rule and value > rule["maximum"]:
        raise UsageError(f"{where}: {value} is out of range {rule.get('minimum', '')}..{rule.get('maximum', '')}")
    if isinstance(value, list) and "items" in rule:
        for i, item in enumerate(value):
            _check(f"{where}[{i}]", rule["items"], item)


# -- the tool bodies --------------------------------------------------------------------------------------
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


# -- serving: the SDK, loaded while the fast path answers (mcpfast.py) ----------------------------------
def listed_tools() -> list[dict[str, Any]]:
    """The tools/list entries as they go on the wire (the fast path answers with these; the SDK is given the
    same, and a test compares what each lists)."""
    def camel(hint: str) -> str:
        head, *rest = hint.split("_")
        return head + "".join(word.title() for word in rest)

    return [{"name": name, "description": spec.description, "inputSchema": spec.input, "outputSchema": spec.output,
             "annotations": {camel(k): v for k, v in hints_of(spec).items()}} for name, spec in SPECS.items()]


def fast_server() -> Any:
    from workbench.integrations import mcpfast

    return mcpfast.Server("wb", __version__, INSTRUCTIONS, listed_tools())


# The SDK's import (most of a start-up) begins once the fast path has answered the agent's first tool call, or
# this long after the start, whichever comes first: imported from the first instant, it took the processor from
# that call (one interpreter lock), which a client sends right after `tools/list` (issue 33).
SDK_AFTER_S = 0.5


def serve(start: Path | None = None) -> None:
    """Serve MCP on this process's stdin/stdout until the client closes stdin. Raises ImportError when the SDK
    cannot be loaded."""
    from workbench.integrations import mcpfast

    loaded: dict[str, Any] = {}
    go = threading.Event()  # the SDK's import waits for it, or for SDK_AFTER_S: not to slow the first call down

    def load() -> None:
        go.wait(SDK_AFTER_S)
        try:
            loaded["sdk"] = _load_sdk()
        except BaseException as err:  # re-raised in the main thread
            loaded["error"] = err

    loader = threading.Thread(target=load, name="wb-mcp-sdk", daemon=True)
    loader.start()
    tools = Tools(start)
    wire_in, wire_out, restore = _claim_stdio()
    try:
        versions = mcpfast.sdk_versions() if os.environ.get("WB_MCP_PREANSWER", "1") != "0" else None
        if versions is None:  # the SDK answers everything
            first = wire_in.readline()
            handover = mcpfast.Handover([first] if first else [], {})
        else:
            fast = mcpfast.FastPath(fast_server(), versions, call=tools.dispatch)  # Answer: (text, data, error)
            while True:
                line = wire_in.readline()
                if not line:  # the client left before it needed the SDK
                    go.set()
                    loader.join()
                    if "error" in loaded:
                        raise loaded["error"]
                    return
                refused = screen(line.decode("utf-8", "replace"))
                if refused is not None:
                    wire_out.write(refused)
                    wire_out.flush()
                    continue
                answer, done = fast.take(line)
                if answer is not None:
                    wire_out.write(answer)
                    wire_out.flush()
                if fast.calls:  # the agent's first call is answered: now the SDK may have the processor
                    go.set()
                if done:
                    handover = fast.handover(line)
                    break
        go.set()
        loader.join()
        if "error" in loaded:  # the client still gets an answer to what it asked, then the process says why
            _unanswered(handover, wire_out, loaded["error"])
            raise loaded["error"]
        _run(loaded["sdk"], tools, handover, wire_in, wire_out)
    finally:
        restore()


def _unanswered(handover: Any, wire_out: Any, err: BaseException) -> None:
    """An error answer to each request the fast path left to an SDK that could not be loaded."""
    for line in handover.lines:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and "method" in msg and msg.get("id") is not None and msg["id"] not in \
                handover.expected:
            wire_out.write(_rpc_error(msg["id"], -32603, f"wb mcp cannot load the MCP SDK ({type(err).__name__}: "
                                                         f"{str(err)[:200]}): pip install 'mcp>=2,<3'"))
    wire_out.flush()


def _load_sdk() -> Any:
    """The SDK's parts the server uses (most of the start-up time), and the API the tools call."""
    from types import SimpleNamespace

    import anyio
    import anyio.to_thread
    import mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    import workbench.api  # noqa: F401  the first call should not pay for it

    return SimpleNamespace(anyio=anyio, types=mcp_types, Server=Server, stdio_server=stdio_server, MCPError=MCPError)


def _claim_stdio() -> tuple[Any, Any, Callable[[], None]]:
    """The wire, on private descriptors; fd 0 becomes the null device and fd 1 stderr while serving, so no
    acceptance command or tool wb runs can read the client's messages or write into the protocol stream."""
    wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)  # not inherited by children (PEP 446)
    saved = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in saved:
            os.close(fd)

    return os.fdopen(wire_in_fd, "rb"), os.fdopen(wire_out_fd, "wb"), restore


def handshake_versions() -> tuple[str, ...] | None:
    """The protocol versions the SDK negotiates in `initialize`, read without importing the SDK."""
    from workbench.integrations import mcpfast

    versions = mcpfast.sdk_versions()
    return versions.handshake if versions else None


def initialize_result(requested: str, versions: tuple[str, ...]) -> dict[str, Any]:
    """What the SDK answers to `initialize` for this server (a test compares the two)."""
    from workbench.integrations import mcpfast

    return mcpfast.initialize_result(fast_server(), requested, versions)


def early_initialize(line: bytes) -> tuple[Any, dict[str, Any], bytes] | None:
    """(id, result, the answer's line) for a well-formed `initialize` request; None for anything else, which
    the SDK then reads and answers itself."""
    from workbench.integrations import mcpfast

    try:
        msg = json.loads(line)
    except ValueError:
        return None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or msg.get("method") != "initialize":
        return None
    versions = handshake_versions()
    if versions is None or not mcpfast.well_formed_initialize(msg):
        return None
    result = initialize_result(msg["params"]["protocolVersion"], versions)
    return msg["id"], result, mcpfast.line_of({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def _run(sdk: Any, tools: Tools, handover: Any, wire_in: Any, wire_out: Any) -> None:
    import io

    anyio, types = sdk.anyio, sdk.types
    listed = types.ListToolsResult(tools=[
        types.Tool(name=name, description=spec.description, input_schema=spec.input, output_schema=spec.output,
                   annotations=types.ToolAnnotations(**hints_of(spec)))
        for name, spec in SPECS.items()])

    async def list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def call_tool(ctx: Any, params: Any) -> Any:
        if params.name not in SPECS:
            raise sdk.MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {', '.join(TOOLS)}")
        answer = await anyio.to_thread.run_sync(tools.dispatch, params.name, params.arguments or {})
        content = [types.TextContent(type="text", text=answer.text)]
        if answer.is_error:
            return types.CallToolResult(content=content, is_error=True)
        return types.CallToolResult(content=content, structured_content=answer.data)

    server = sdk.Server("wb", version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                        on_call_tool=call_tool)
    rest = anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
    out = _Out(anyio.wrap_file(io.TextIOWrapper(wire_out, encoding="utf-8")), handover.expected)

    async def screened(line: str) -> Any:
        refused = screen(line)
        if refused is not None:
            await out.send(refused)
        return refused is None

    async def lines() -> Any:
        for kept in handover.lines:  # what the fast path read, then the rest of the wire
            line = kept.decode("utf-8", "replace")
            if await screened(line):
                yield line
        async for line in rest:
            if await screened(line):
                yield line

    class Lines:  # what the SDK's transport iterates
        def __aiter__(self) -> Any:
            return lines()

    async def main() -> None:
        async with sdk.stdio_server(stdin=Lines(), stdout=out) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


MAX_REQUEST_DEPTH = 64  # levels of objects and arrays in one request; no wb tool takes deeper arguments


def screen(line: str) -> bytes | None:
    """None for a request the SDK can read (and answers itself); else the JSON-RPC error wb answers in its
    place: the SDK answers nothing at all to a line that is not JSON, to arguments nested ~200 deep (its
    validator's recursion limit) or to a string holding a lone surrogate (`\\ud800`), and the client waits for
    ever. Every request gets an answer."""
    if not line.strip():
        return None
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError) as err:
        return _rpc_error(None, -32700, f"parse error: {str(err)[:200]}")
    rid = msg.get("id") if isinstance(msg, dict) else None
    rid = rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method", ""), str):
        if isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg):
            return None  # a client's answer to a server request: not a request, nothing to answer
        return _rpc_error(rid, -32600, "invalid request: a JSON-RPC 2.0 object with a method is expected")
    if "id" in msg and rid is None and msg["id"] is not None:
        return _rpc_error(None, -32600, "invalid request: its id must be a string or a number")
    if "params" in msg and not isinstance(msg["params"], dict):
        return _rpc_error(rid, -32602, "invalid params: an object is expected")
    stack: list[tuple[Any, int]] = [(msg, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_REQUEST_DEPTH:
            return _rpc_error(rid, -32600, f"invalid request: nested more than {MAX_REQUEST_DEPTH} levels deep")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in [*value.keys(), *value.values()])
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    try:
        json.dumps(msg, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return _rpc_error(rid, -32600, "invalid request: a \\u escape that encodes no character (a lone "
                                       "surrogate)")
    return None


def _rpc_error(rid: Any, code: int, message: str) -> bytes:
    answer = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class _Out:
    """The SDK's stdout, less its answers to the requests the fast path answered already and gave it again under
    a private id (`expected`: id → the answer wb gave); and wb's own answers to the requests the SDK cannot read
    (`screen`)."""

    def __init__(self, file: Any, expected: dict[str, Any]) -> None:
        self.file = file
        self.expected = dict(expected)

    async def send(self, line: bytes) -> None:
        """wb's own answer (a notification that the SDK cannot read is still answered: the client may be
        waiting on what it thought was a request)."""
        await self.file.write(line.decode())
        await self.file.flush()

    async def write(self, text: str) -> None:
        if self.expected:
            try:
                msg = json.loads(text)
            except ValueError:
                msg = None
            if isinstance(msg, dict) and "method" not in msg and msg.get("id") in self.expected:
                expected = self.expected.pop(msg["id"])
                if msg.get("result") != expected:  # a bug: say so where the client keeps server logs
                    sys.stderr.write(f"wb mcp: the fast path's answer differs from the SDK's: "
                                     f"{json.dumps(msg)[:300]}\n")
                return
        await self.file.write(text)

    async def flush(self) -> None:
        await self.file.flush()
