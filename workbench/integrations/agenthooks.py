"""Coding agents' own events in the workbench: the Claude Code hook mapping, recorded by `Bench.record_event`.

An agent's hook events are recorded under their own types (`agent.tool_call`, `agent.tool_result`,
`agent.session_start`, `agent.stop`), never as `tool.call`/`tool.result`/`session.start`: the reducer folds
those into the live *harness* session in state.md, and an agent's tool calls are not steps of it.

    bench.record_event("agent.note", {"text": "..."})      # one transaction, validated, committed
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from workbench.errors import UsageError

if TYPE_CHECKING:
    from workbench.api import Bench
    from workbench.store.workbench import Workbench

CLAUDE_CODE_EVENTS = {
    "PreToolUse": "agent.tool_call",
    "PostToolUse": "agent.tool_result",
    "SessionStart": "agent.session_start",
    "Stop": "agent.stop",
}


def record_event(target: Bench | Workbench, type_: str, payload: dict[str, Any], actor: str = "agent", *,
                 commit: bool = True, summary: str | None = None) -> dict[str, Any]:
    """`Bench.record_event` for a `Bench` (its `.last` is updated) or a `Workbench`: one event of a type wb
    does not fold, clipped, validated, appended and committed. Returns the logged event."""
    from workbench.api import Bench

    bench = target if isinstance(target, Bench) else Bench(target)
    return bench.record_event(type_, payload, actor, commit=commit, summary=summary)


# -- Claude Code ----------------------------------------------------------------------------------
def parse_hook_payload(raw: bytes) -> dict[str, Any]:
    """A hook payload from stdin: a JSON object with a `hook_event_name`, or UsageError saying what is wrong."""
    try:
        data = json.loads(raw.decode("utf-8", "replace") or "null")
    except ValueError as err:
        raise UsageError(f"hook payload on stdin is not JSON ({getattr(err, 'msg', err)}); nothing recorded") \
            from None
    if not isinstance(data, dict) or not isinstance(data.get("hook_event_name"), str):
        raise UsageError("hook payload on stdin has no hook_event_name; nothing recorded")
    return data


def claude_code_event(hook: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The (type, payload) wb records for a Claude Code hook payload, or None for an event it does not record.
    Paths of the user's machine (cwd, transcript_path) are left out: the log is committed and shared."""
    name = hook["hook_event_name"]
    type_ = CLAUDE_CODE_EVENTS.get(name)
    if type_ is None:
        return None
    payload: dict[str, Any] = {"agent": "claude-code", "agent_session": str(hook.get("session_id") or "")}
    if name in ("PreToolUse", "PostToolUse"):
        payload["tool"] = str(hook.get("tool_name") or "")
        if hook.get("tool_use_id"):
            payload["tool_use_id"] = str(hook["tool_use_id"])
        if name == "PreToolUse":
            payload["args"] = hook.get("tool_input") or {}
        else:
            payload["result"] = hook.get("tool_response")
    elif name == "SessionStart":
        payload["source"] = str(hook.get("source") or "startup")
    else:
        payload["stop_hook_active"] = bool(hook.get("stop_hook_active"))
    return type_, payload


def record_claude_code(bench: Bench, hook: dict[str, Any]) -> dict[str, Any] | None:
    """Record one Claude Code hook payload. Tool events are appended without a commit (two commits per tool
    call would bury the branch's history); SessionStart and Stop commit, so each agent turn is one commit."""
    mapped = claude_code_event(hook)
    if mapped is None:
        return None
    type_, payload = mapped
    if type_ in ("agent.tool_call", "agent.tool_result"):
        return bench.record_event(type_, payload, commit=False)
    what = "session start" if type_ == "agent.session_start" else "turn ends"
    return bench.record_event(type_, payload, summary=f"wb: claude-code {what}")
