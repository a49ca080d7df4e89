"""`wb mcp`: the workbench as a Model Context Protocol server over stdio, on the official `mcp` SDK.

Each tool calls the Python API (`workbench.api.Bench`, the command line's verbs), so a call is the same
transaction as on the command line: lock, validation, event log, atomic snapshots, one git commit. A refused
call comes back as an MCP tool error whose text is the one-line message the CLI prints (without its `wb: `).

Importing the SDK costs about 0.6 s, so only `wb mcp` imports this module, inside the command. The tool list
is kept lean on purpose (every byte of `tools/list` is spent from the agent's context on each session):
short descriptions, no schema titles, no output schemas; results are compact JSON text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from workbench import __version__
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.api import Bench

INSTRUCTIONS = (
    "wb keeps this repository's agent state in .workbench/ (task board, decision log, event log), "
    "committed to git on every change. Call status first each session; record work with task_add, "
    "task_update, note and set_state (next_action, blockers)."
)

ReadOnly = ToolAnnotations(read_only_hint=True)


class Tools:
    """The tool bodies, one call at a time: the SDK runs sync tools in worker threads, and an agent's calls
    should land in the order they run (a harness run is never interleaved with its own task updates)."""

    def __init__(self, start: Path | None) -> None:
        self.start = start
        self._mutex = threading.Lock()

    def bench(self) -> Bench:
        # Opened afresh for each call, as each CLI process does: a server lives as long as the agent's session,
        # and config.yaml (tools, hooks, budgets) may change meanwhile. Opening is cheap (a walk up to .git).
        # A server started before `wb init` answers each call with the one-line error instead of failing.
        from workbench.api import Bench

        return Bench.open(self.start)

    def call(self, fn: Callable[[], Any]) -> Any:
        with self._mutex:
            try:
                return _text(fn())
            except WorkbenchError as err:
                return _error(str(err))
            except Exception as err:  # a bug: one line, as the CLI says it, never a silent generic message
                return _error(f"internal error: {type(err).__name__}: {err}")

    # -- reading --------------------------------------------------------------------------------
    def status(self) -> Any:
        """Where to start: active task, next action, blockers, live session and what it waits for, board counts."""
        return self.call(lambda: self.bench().status())

    def task_list(self, status: str | None = None) -> Any:
        """Tasks on the board, optionally only those with one status (todo, in_progress, blocked, done, cancelled)."""
        return self.call(lambda: self.bench().list_tasks(status))

    def log(self, limit: int = 20, type: Annotated[str | None, Field(description="event type or family, "
                                                                     "e.g. task or task.done")] = None) -> Any:
        """The last events of the event log, oldest first."""
        return self.call(lambda: self.bench().log(type=type, limit=max(1, limit)))

    # -- writing --------------------------------------------------------------------------------
    def task_add(self, title: str, acceptance: Annotated[list[str] | None, Field(
                     description="shell commands that must exit 0 before the task can be done")] = None,
                 kind: Literal["build", "review"] = "build",
                 reviews: Annotated[str | None, Field(description="for kind=review: the task id reviewed")] = None,
                 owner: Literal["builder", "reviewer", "human"] | None = None,
                 depends_on: list[str] | None = None, description: str | None = None) -> Any:
        """Add a task to the board; returns it with its new id."""
        def add() -> Any:
            bench = self.bench()
            task = bench.add_task(title, kind=kind, owner=owner, acceptance=acceptance or [],
                                  depends_on=depends_on or [], description=description, reviews=reviews)
            return _written(bench, task=task)

        return self.call(add)

    def task_update(self, id: str, action: Literal["start", "done", "block", "set"],
                    reason: Annotated[str | None, Field(description="for block")] = None,
                    changes: Annotated[dict[str, Any] | None, Field(
                        description="for set: e.g. {\"status\": \"todo\", \"owner\": \"human\"}")] = None,
                    force: Annotated[bool, Field(description="for done: override failing acceptance "
                                                             "(recorded)")] = False) -> Any:
        """Start a task, mark it done (runs its acceptance commands), block it with a reason, or set fields."""
        def update() -> Any:
            bench = self.bench()
            if action == "start":
                task = bench.start_task(id)
            elif action == "done":
                task = bench.done_task(id, force=force)
            elif action == "block":
                task = bench.block_task(id, reason or "")
            else:
                if not changes:
                    raise _usage("task_update set needs changes, e.g. {\"owner\": \"human\"}")
                task = bench.set_task(id, changes)
            return _written(bench, task=task)

        return self.call(update)

    def note(self, text: str) -> Any:
        """Append a decision or finding to the decision log in state.md."""
        def add() -> Any:
            bench = self.bench()
            bench.note(text)
            return _written(bench)

        return self.call(add)

    def set_state(self, changes: Annotated[dict[str, Any], Field(description=(
            "any of next_action, status, active_task_id, blockers, assumptions, touched_files (lists of "
            "strings), e.g. {\"next_action\": \"Write the parser\", \"blockers\": []}"))]) -> Any:
        """Set state fields: what to do next, what blocks the work, the task being worked on."""
        def set_() -> Any:
            if not changes:
                raise _usage("set_state needs changes, e.g. {\"next_action\": \"Write the parser\"}")
            bench = self.bench()
            state = bench.set_state(changes)
            return _written(bench, state={k: state.get(k) for k in changes})

        return self.call(set_)

    # -- the harness ----------------------------------------------------------------------------
    def run(self, goal: str,
            plan: Annotated[str | None, Field(description="plan file (YAML/JSON), relative to the repo root")] = None,
            steps: Annotated[list[dict[str, Any]] | None, Field(
                description="inline plan: [{description, tool?, args?, mode?}]")] = None,
            max_turns: int | None = None, max_tool_calls: int | None = None,
            max_seconds: float | None = None) -> Any:
        """Start a harness session on GOAL; runs until done or a yield (tool result, approval, pause)."""
        def start() -> Any:
            bench = self.bench()
            if (plan is None) == (steps is None):
                raise _usage("run needs one of plan (a plan file) or steps (an inline plan)")
            return _outcome(bench.run(goal, plan=bench.root / plan if plan is not None else None, steps=steps,
                                      max_turns=max_turns, max_tool_calls=max_tool_calls, max_seconds=max_seconds))

        return self.call(start)

    def resume(self, decision: Annotated[Literal["approve", "deny"] | None, Field(
                   description="for a pending approval")] = None,
               result: Annotated[Any, Field(description="the awaited tool's result (JSON)")] = None,
               error: Annotated[str | None, Field(description="the awaited tool failed: why")] = None,
               extend: Annotated[dict[str, float] | None, Field(
                   description="raise a budget: {turns|tool_calls|seconds: N}")] = None,
               yield_id: Annotated[str | None, Field(description="refuse unless this is the pending yield")] = None,
               plan: Annotated[str | None, Field(description="plan file, if the session must replan")] = None) -> Any:
        """Continue the live harness session after a yield or a pause."""
        def go_on() -> Any:
            bench = self.bench()
            return _outcome(bench.resume(result=result, error=error, approve=decision == "approve",
                                         deny=decision == "deny", extend=extend, yield_id=yield_id,
                                         plan=bench.root / plan if plan else None))

        return self.call(go_on)


TOOLS = ("status", "task_list", "task_add", "task_update", "note", "set_state", "log", "run", "resume")
READ_ONLY = {"status", "task_list", "log"}


def build_server(start: Path | None = None) -> MCPServer:
    tools = Tools(start)
    made = []
    for name in TOOLS:
        tool = Tool.from_function(getattr(tools, name), name=name, structured_output=False,
                                  annotations=ReadOnly if name in READ_ONLY else None)
        tool.parameters = _lean(tool.parameters)
        made.append(tool)
    # WARNING: the SDK logs each refused call at INFO on stderr, which clients keep in their server logs
    return MCPServer("wb", version=__version__, instructions=INSTRUCTIONS, tools=made, log_level="WARNING")


def serve(start: Path | None = None) -> None:
    build_server(start).run("stdio")


def _lean(schema: Any) -> Any:
    """What the agent pays for on every session, minus pydantic's noise: no generated titles, and an optional
    `X | None = None` argument advertised as plain X (leaving it out is how a client says None; the SDK's own
    validation still accepts an explicit null). Validation uses the function's signature, not this text."""
    if isinstance(schema, list):
        return [_lean(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _lean(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    variants = out.get("anyOf")
    if "default" in out and out["default"] is None and isinstance(variants, list) and len(variants) == 2 \
            and {"type": "null"} in variants:
        rest = {k: v for k, v in out.items() if k not in ("anyOf", "default")}
        out = {**next(v for v in variants if v != {"type": "null"}), **rest}
    elif out.get("default", 0) is None:
        del out["default"]  # `Any = None`: absent means None already
    return out


def _text(data: Any) -> str:
    from workbench.model.redaction import redact_known  # an answer may carry a tool's output or a hand edit

    return json.dumps(redact_known(data), ensure_ascii=False, separators=(",", ":"), default=str)


def _error(message: str) -> CallToolResult:
    from workbench.model.redaction import redact_known

    return CallToolResult(content=[TextContent(type="text", text=redact_known(message))], is_error=True)


def _usage(message: str) -> WorkbenchError:
    from workbench.errors import UsageError

    return UsageError(message)


def _written(bench: Bench, **data: Any) -> dict[str, Any]:
    last = bench.last
    return {**data, "summary": last.summary, "commit": last.commit, "warnings": last.warnings}


def _outcome(outcome: Any) -> dict[str, Any]:
    from workbench.ops.yields import commands

    if outcome.done:
        return {"done": True, "state": outcome.state.value, "reason": outcome.reason, "steps": outcome.steps}
    return {"done": False, "state": outcome.state.value, "reason": outcome.reason, "kind": outcome.kind,
            "yield_id": outcome.yield_id, "payload": outcome.payload, "commands": commands(outcome)}
