"""The harness loop: a deterministic state machine driving plan → steps → tools, with hooks, budgets,
approvals, idempotent tool calls and two yield points. `from workbench.harness import HarnessLoop`."""

from workbench.harness.hooks import HOOK_TOPICS, SKIP, HookAbort, HookRegistry, Pause
from workbench.harness.loop import HarnessLoop
from workbench.harness.machine import TRANSITIONS, IllegalTransition, State
from workbench.harness.types import (
    Budget,
    Event,
    Pending,
    PlannerError,
    PullRequest,
    Result,
    SessionResult,
    StaleYield,
    Step,
    ToolError,
)

__all__ = [
    "HOOK_TOPICS", "SKIP", "TRANSITIONS", "Budget", "Event", "HarnessLoop", "HookAbort", "HookRegistry",
    "IllegalTransition", "Pause", "Pending", "PlannerError", "PullRequest", "Result", "SessionResult",
    "StaleYield", "State", "Step", "ToolError",
]
