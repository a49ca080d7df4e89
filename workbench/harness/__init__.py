"""The harness loop: a deterministic state machine driving plan → steps → tools, with hooks, budgets,
approvals, idempotent tool calls and two yield points. `from workbench.harness import HarnessLoop`.

The names below load on first use (PEP 562), so importing one light module of the package — `wb status`
reads the session it holds — does not import the whole loop."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "HOOK_TOPICS": "hooks", "SKIP": "hooks", "HookAbort": "hooks", "HookRegistry": "hooks", "Pause": "hooks",
    "HarnessLoop": "loop",
    "TRANSITIONS": "machine", "IllegalTransition": "machine", "State": "machine",
    "Budget": "types", "Event": "types", "Pending": "types", "PlannerError": "types", "PullRequest": "types",
    "Result": "types", "SessionResult": "types", "StaleYield": "types", "Step": "types", "ToolError": "types",
}

__all__ = [
    "HOOK_TOPICS", "SKIP", "TRANSITIONS", "Budget", "Event", "HarnessLoop", "HookAbort", "HookRegistry",
    "IllegalTransition", "Pause", "Pending", "PlannerError", "PullRequest", "Result", "SessionResult",
    "StaleYield", "State", "Step", "ToolError",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench.harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"workbench.harness.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


if TYPE_CHECKING:
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
