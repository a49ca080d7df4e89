"""What the harness loop speaks: plan steps, events, budgets, the two outcomes (a yield or a result), its errors,
and the two things it is plugged into (a sink for its events, a tool box). Plain data and protocols; the loop
itself is in loop.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from workbench.errors import WorkbenchError
from workbench.harness.machine import State


@dataclass
class Step:
    id: str
    description: str
    requires_tool: bool = False
    tool_name: str | None = None
    tool_args: dict[str, Any] = field(default_factory=dict)
    mode: str | None = None
    on_error: str | None = None  # pause | fail | continue; None: the tool's, else pause

    # the state of a step the loop hands to hooks and planners (its plan item: status, attempt, result…);
    # not a field, so equality and the lesson's constructor stay the dataclass's own
    def item(self) -> dict[str, Any]:
        return dict(getattr(self, "_item", None) or self.to_item(0))

    def __getitem__(self, key: str) -> Any:
        """`p["step"]["id"]` as well as `p["step"].id`: hooks written against wb's earlier dict payloads."""
        return self.item()[key]

    def to_item(self, ordinal: int) -> dict[str, Any]:
        item = {"id": self.id, "ordinal": ordinal, "description": self.description,
                "tool": self.tool_name if (self.requires_tool or self.tool_name) else None,
                "args": dict(self.tool_args), "mode": self.mode}
        if self.on_error is not None:
            item["on_error"] = self.on_error
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Step:
        step = cls(item["id"], item.get("description", ""), bool(item.get("tool")), item.get("tool"),
                   dict(item.get("args") or {}), item.get("mode"), item.get("on_error"))
        object.__setattr__(step, "_item", dict(item))
        return step


@dataclass(frozen=True)
class Event:
    type: str
    payload: dict[str, Any]
    ts: str
    seq: int | None = None


@dataclass
class Budget:
    max_turns: int | None = None
    max_tool_calls: int | None = None
    max_wall_seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"max_turns": self.max_turns, "max_tool_calls": self.max_tool_calls,
                "max_wall_seconds": self.max_wall_seconds}


@dataclass
class Pending:
    """What a yield returns: the loop waits for a tool result, an approval, or a decision after a pause."""

    reason: str
    state: State
    payload: dict[str, Any]
    yield_id: str
    kind: str  # approval | tool_result | in_doubt | pause
    command: str = ""
    done = False


@dataclass
class Result:
    state: State
    reason: str
    steps: list[dict[str, Any]]
    events: list[Event]
    done = True


PullRequest = Pending  # the seed lesson's names for the pending request and the final result
SessionResult = Result


class StaleYield(ValueError):
    pass


class Interrupted(WorkbenchError):
    """Ctrl-C reached the loop: what the session had done is recorded and committed, and it waits (`pending`)
    for `wb resume`. Exit 130, as for any interrupt, with the command that resumes it."""

    exit_code = 130

    def __init__(self, pending: Pending | None) -> None:
        self.pending = pending
        how = (pending.command or "wb resume") if pending is not None else "wb resume"
        if pending is not None and pending.kind == "approval":
            how = "wb resume --approve | wb resume --deny (at a terminal, `wb resume` asks again)"
        super().__init__(f"interrupted: the session is paused and committed; {how} continues it, wb abort ends it")


class PlannerError(Exception):
    pass


class ToolError(Exception):
    """A tool failed: it exited non-zero, timed out, could not start or could not be filled in. `details`
    (exit_code, stderr_tail, the output's artifacts) go into the `tool.error` event."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = dict(details or {})


Planner = Callable[[str, list[Step]], list[Step]]  # (goal, the steps already executed in this session)
Reflector = Callable[[str, list[Event], dict[str, Any]], Any]


class Sink(Protocol):
    def emit(self, event: dict[str, Any], journal: dict[str, Any] | None) -> dict[str, Any] | None: ...
    def checkpoint(self, summary: str, session_id: str | None) -> None: ...
    def recorded_call(self, key: str) -> dict[str, Any] | None: ...


class MemorySink:
    """Events and the call journal kept in memory: the loop as a plain library."""

    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}

    def emit(self, event: dict[str, Any], journal: dict[str, Any] | None) -> dict[str, Any] | None:
        if journal:
            self.calls[journal["key"]] = journal
        event["seq"] = len(self.log) + 1
        self.log.append(event)
        return None

    def checkpoint(self, summary: str, session_id: str | None) -> None:
        return None

    def recorded_call(self, key: str) -> dict[str, Any] | None:
        return self.calls.get(key)


class Tools(Protocol):
    def spec(self, name: str) -> Any: ...
    def run(self, spec: Any, args: dict[str, Any], key: str) -> dict[str, Any]: ...


def not_declared(payload: dict[str, Any]) -> str:
    """Why wb does not re-run a call in doubt, as it is: the tool is not declared `idempotent: true`. Its mode
    (safe_readonly too) says only whether wb asks before running it, not that running it twice is harmless."""
    mode = payload.get("mode")
    asks = f" (its mode, {mode}, says only whether wb asks first)" if mode else ""
    return f"its tool is not declared `idempotent: true` in config.yaml{asks}"
