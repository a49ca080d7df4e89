"""What a pending yield says to a person: one headline, and the exact commands that answer it. Used by the CLI,
`wb status` and the MCP server alike, so every surface names the same commands."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

def headline(p: Any) -> str:
    payload = p.payload or {}
    step = payload.get("step", "")
    if p.kind == "approval":
        return (f"waiting for approval: step {step} wants to run `{payload.get('tool')}` "
                f"({payload.get('mode')}) with {json.dumps(payload.get('args', {}))}")
    if p.kind == "tool_result":
        return (f"waiting for a tool result: step {step} needs `{payload.get('tool')}` "
                f"{json.dumps(payload.get('args', {}))}, which wb does not run itself")
    if p.kind == "in_doubt":
        from workbench.harness.types import not_declared  # the harness package is not on `wb status`'s path

        when = f"was started {payload['started']}" if payload.get("started") else "was started before a crash"
        return (f"in doubt: `{payload.get('tool')}` of step {step} {when} and its result was never recorded; "
                f"{not_declared(payload)}, so wb will not run it again on its own")
    if str(p.reason).startswith("step_failed:"):
        return f"paused: step {payload.get('step', '')} failed: {payload.get('error', '')} ({p.reason})"
    return f"paused: {p.reason}"


def commands(p: Any) -> list[str]:
    if p.kind == "approval":
        return ["wb resume --approve", "wb resume --deny"]
    if p.kind == "tool_result":
        return ["wb resume --result '{\"ok\": true}'", "wb resume --result-file RESULT.json",
                "wb resume --error 'what went wrong'"]
    if p.kind == "in_doubt":
        return ["wb resume --result '{...}'   (it did run: here is what it returned)",
                "wb resume --error MSG        (it failed)", "wb resume --approve         (run it again)"]
    if p.command:
        return [c.strip() for c in p.command.split(" | ")] + ["wb abort"]
    return ["wb resume", "wb abort"]


def resume_hint(session: Any) -> dict[str, str] | None:
    """What a live session needs, yield or not: after a kill -9 it may wait on nothing recorded, and `wb resume`
    still continues it (from the log; a tool call cut short is then in doubt)."""
    if not isinstance(session, dict):
        return None
    pending = session.get("pending")
    if isinstance(pending, dict):
        return {"reason": str(pending.get("reason", "")), "command": str(pending.get("command") or "wb resume")}
    return {"reason": f"{str(session.get('harness_state', '')).lower()}: running, or stopped short (a crash, kill -9)",
            "command": "wb resume"}
