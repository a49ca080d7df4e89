"""Coding agents' own events in the workbench: the Claude Code and Codex CLI hook mappings.

An agent's hook events are recorded under their own types (`agent.tool_call`, `agent.tool_result`,
`agent.session_start`, `agent.stop`…), never as `tool.call`/`tool.result`/`session.start`: the reducer folds
those into the live *harness* session in state.md, and an agent's tool calls are not steps of it.

`wb hook claude-code` / `wb hook codex` (integrations/hookfast.py) spool each event (store/spool.py) and fold
the spool into the log at SessionStart, Stop, PreCompact and SessionEnd, or at the next wb write — on either
backend (a SQLite transaction folds the same spool). From Python:

    bench.record_event("agent.note", {"text": "..."})      # one transaction, validated, committed
    record_claude_code(bench, payload)                       # one hook payload, recorded at once

This module imports only the errors and model/cjson at its top (no json package, no typing, no pathlib): it
is on every hook's path.
"""

from __future__ import annotations

from workbench.errors import UsageError
from workbench.model import cjson

TYPE_CHECKING = False  # not typing's: importing typing costs a hook a tenth of its time
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from workbench.api import Bench
    from workbench.store.workbench import Workbench

CLIENTS = ("claude-code", "codex")  # the source label each client's events carry (payload `agent`)

# Claude Code's hook events (its hooks reference), and Codex CLI's, which use the same names and fields
CLAUDE_CODE_EVENTS = {
    "SessionStart": "agent.session_start",
    "UserPromptSubmit": "agent.prompt",
    "PreToolUse": "agent.tool_call",
    "PostToolUse": "agent.tool_result",
    "PostToolUseFailure": "agent.tool_result",
    "Notification": "agent.notification",
    "Stop": "agent.stop",
    "SubagentStop": "agent.subagent_stop",
    "PreCompact": "agent.pre_compact",
    "SessionEnd": "agent.session_end",
}
GENERIC_EVENT = "agent.hook"  # an event name wb does not know: recorded with its fields, never an error

FOLD_EVENTS = {"SessionStart": "session start", "Stop": "turn ends", "PreCompact": "before compaction",
               "SessionEnd": "session ends"}  # these fold the spool into the log and commit it
TURN_BEGINS = frozenset({"UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "SubagentStop"})
TURN_ENDS = frozenset({"Stop", "SessionEnd"})

# fields every event carries, and paths of the user's machine: not copied into a generic event's `fields`
_COMMON = frozenset({"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name", "agent_id",
                     "agent_type", "agent_transcript_path", "model", "turn_id"})


def record_event(target: Bench | Workbench, type_: str, payload: dict[str, Any], actor: str = "agent", *,
                 commit: bool = True, summary: str | None = None) -> dict[str, Any]:
    """`Bench.record_event` for a `Bench` (its `.last` is updated) or a `Workbench`: one event of a type wb
    does not fold, clipped, validated, appended and committed. Returns the logged event."""
    from workbench.api import Bench

    bench = target if isinstance(target, Bench) else Bench(target)
    return bench.record_event(type_, payload, actor, commit=commit, summary=summary)


def parse_hook_payload(raw: bytes, *, shape: bool = True) -> dict[str, Any]:
    """A hook payload from stdin: a JSON object with a `hook_event_name`, or UsageError saying what is wrong.
    `shape`: the fields wb reads have the types the clients document, too (`check_shape`)."""
    try:
        text = raw.decode("utf-8", "replace") or "null"
        try:
            data = cjson.loads(text)
        except RecursionError:  # nested deeper than Python's parser goes: read with the deep part clipped
            from workbench.model.clip import loads_any_depth

            data = loads_any_depth(text)
    except (ValueError, SystemError) as err:  # SystemError: the C scanner, on some malformed text
        why = getattr(err, "msg", None) or ("malformed" if isinstance(err, SystemError) else str(err))
        raise UsageError(f"hook payload on stdin is not JSON ({why}); nothing recorded") from None
    if not isinstance(data, dict) or not isinstance(data.get("hook_event_name"), str):
        raise UsageError("hook payload on stdin has no hook_event_name; nothing recorded")
    if shape:
        check_shape(data)
    return data


def check_shape(data: dict[str, Any]) -> None:
    """UsageError naming the first field wb reads whose type is not the one the clients document."""
    for key, kind in _SHAPE:
        value = data.get(key)
        if value is not None and not isinstance(value, kind):
            raise UsageError(f"hook payload on stdin: {key} is {_kind(value)}, not {_kind(kind())}; nothing recorded")


# the fields wb reads, and their types as the clients document them (a hook's payload of another shape is refused)
_SHAPE = (("hook_event_name", str), ("session_id", str), ("cwd", str), ("tool_name", str), ("tool_input", dict),
          ("tool_use_id", str), ("agent_id", str), ("agent_type", str), ("turn_id", str), ("prompt", str),
          ("source", str), ("reason", str), ("trigger", str), ("message", str))


def _kind(value: object) -> str:
    names = {str: "a string", dict: "an object", list: "a list", bool: "a boolean", int: "a number",
             float: "a number"}
    return names.get(type(value), type(value).__name__)


def hook_event(hook: dict[str, Any], client: str = "claude-code") -> tuple[str, dict[str, Any]]:
    """The (type, payload) wb records for one hook payload of `client` (claude-code or codex). Paths of the
    user's machine (cwd, transcript_path) are left out: the log is committed and shared. An event fired
    inside a subagent carries its `agent_id` as `subagent`, so its calls are told apart."""
    name = hook["hook_event_name"]
    type_ = CLAUDE_CODE_EVENTS.get(name, GENERIC_EVENT)
    payload: dict[str, Any] = {"agent": client, "agent_session": str(hook.get("session_id") or "")}
    if hook.get("agent_id"):
        payload["subagent"] = str(hook["agent_id"])
        if hook.get("agent_type"):
            payload["subagent_type"] = str(hook["agent_type"])
    if hook.get("turn_id"):  # Codex: the turn an event belongs to
        payload["turn"] = str(hook["turn_id"])
    if name in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        payload["tool"] = str(hook.get("tool_name") or "")
        if hook.get("tool_use_id"):
            payload["tool_use_id"] = str(hook["tool_use_id"])
        if name == "PreToolUse":
            payload["args"] = hook.get("tool_input") or {}
        elif name == "PostToolUse":
            payload["result"] = hook.get("tool_response")
        else:
            payload["failed"] = True
            payload["error"] = str(hook.get("error") or "")
            if hook.get("is_interrupt"):
                payload["interrupted"] = True
    elif name == "SessionStart":
        payload["source"] = str(hook.get("source") or "startup")
        if hook.get("model"):
            payload["model"] = str(hook["model"])
    elif name == "UserPromptSubmit":
        payload["prompt"] = str(hook.get("prompt") or "")
    elif name == "Notification":
        payload["message"] = str(hook.get("message") or "")
        for key in ("title", "notification_type"):
            if hook.get(key):
                payload[key] = str(hook[key])
    elif name in ("Stop", "SubagentStop"):
        payload["stop_hook_active"] = bool(hook.get("stop_hook_active"))
    elif name == "PreCompact":
        payload["trigger"] = str(hook.get("trigger") or "")
        if hook.get("custom_instructions"):
            payload["custom_instructions"] = str(hook["custom_instructions"])
    elif name == "SessionEnd":
        payload["reason"] = str(hook.get("reason") or "")
    else:
        payload["event"] = name
        payload["fields"] = {k: v for k, v in hook.items() if k not in _COMMON}
    return type_, payload


def claude_code_event(hook: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """`hook_event` for Claude Code."""
    return hook_event(hook, "claude-code")


def record_claude_code(bench: Bench, hook: dict[str, Any], client: str = "claude-code") -> dict[str, Any]:
    """Record one hook payload at once, through `Bench.record_event` (the hooks themselves spool it: see
    hookfast). Events that end a turn or a session commit; the others wait for the next commit."""
    type_, payload = hook_event(hook, client)
    name = hook["hook_event_name"]
    if name not in FOLD_EVENTS:
        return bench.record_event(type_, payload, commit=False)
    return bench.record_event(type_, payload, summary=f"wb: {client} {FOLD_EVENTS[name]}")


def fold_spool(root: str | Path, summary: str, *, handoff: bool = False) -> list[str]:
    """Fold the hooks' spool into the workbench at `root` in one transaction and commit it (SessionStart,
    Stop, PreCompact, SessionEnd). `handoff` (SessionEnd): the session's handoff packet is written in the
    same commit (issue 16; not at each Stop: the packet reads the whole log, and a turn ends many times a
    session). Returns the warnings (a commit skipped, and why)."""
    from pathlib import Path

    from workbench.store.opening import discover

    wb = discover(Path(root))  # either backend: the SQLite transaction folds the same spool
    if handoff:
        from workbench.api import Bench

        bench = Bench(wb)
        bench.handoff(actor="agent")
        return list(bench.last.warnings)
    with wb.transaction(actor="agent") as tx:
        tx.summary = summary
    out = tx.outcome
    if out is None:
        return []
    return ([out.skipped] if out.skipped else []) + list(out.warnings)


def sync_at_session_start(root: str | Path) -> list[str]:
    """With `sync.on_session_start: true` in config.yaml (and state on its own ref), `wb sync` before the
    session's context is read, so the agent starts from the board every clone shares. A sync that fails
    (offline, refused) is a warning: the session starts from the local state."""
    from pathlib import Path

    from workbench.errors import WorkbenchError
    from workbench.store.opening import discover

    wb = discover(Path(root))
    if not (wb.config.get("sync") or {}).get("on_session_start"):
        return []
    from workbench.store.backend import kind_of

    if kind_of(wb.config) == "sqlite":  # kept in SQLite: no state ref to sync (docs/storage.md)
        return ["sync.on_session_start is not served on the SQLite backend: starting from the local state"]
    try:
        from workbench.api import Bench

        report = Bench(wb).sync()
    except WorkbenchError as err:
        return [f"sync at session start failed, starting from the local state: {err}"]
    return [w for w in report["warnings"] if "not trusted" in w]  # issue 19: commands that came with it


def session_context(root: str | Path) -> str:
    """What SessionStart adds to the agent's context (at startup, and again after a compaction: SessionStart
    `source: compact`): `wb prime`, read-only. Every value read from the repository's files is quoted data
    (ops/prime.quoted): whoever can push to the repository writes them."""
    from pathlib import Path

    from workbench.ops.prime import prime, render
    from workbench.store.opening import discover

    return render(prime(discover(Path(root)))).rstrip("\n")


def stop_answer(root: str | Path, hook: dict[str, Any]) -> dict[str, Any] | None:
    """The optional Stop hook (config.yaml `prime.stop_hook: true`, off by default): Claude Code's decision
    control, `{"decision": "block", "reason": …}`, while ready work remains in the agent's epic (ops/prime.py
    `stop_reason`); None lets the agent stop."""
    from pathlib import Path

    from workbench.ops.prime import stop_reason
    from workbench.store.opening import discover

    reason = stop_reason(discover(Path(root)), hook)
    return {"decision": "block", "reason": reason} if reason else None
