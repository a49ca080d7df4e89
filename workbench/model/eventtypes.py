"""Event types named in one place, without imports (the reducer needs them on every command's start-up path)."""

HARNESS_EVENTS = frozenset({
    "session.start", "session.pause", "session.resume", "session.complete", "session.abort",
    "harness.transition", "plan.draft", "plan.commit", "step.start", "step.end",
    "tool.call", "tool.result", "tool.error", "tool.progress", "approval.requested", "approval.granted",
    "approval.denied", "budget.warn", "hook.block", "hook.error", "planner.error",
})
