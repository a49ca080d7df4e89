"""Coding agents' own events in the workbench: `record_event` and the Claude Code hook mapping.

An agent's hook events are recorded under their own types (`agent.tool_call`, `agent.tool_result`,
`agent.session_start`, `agent.stop`), never as `tool.call`/`tool.result`/`session.start`: the reducer folds
those into the live *harness* session in state.md, and an agent's tool calls are not steps of it.

    from workbench.integrations.agenthooks import record_event
    record_event(bench, "agent.note", {"text": "..."})      # one transaction, validated, committed
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from workbench.errors import Refused, UsageError

EVENT_TYPE = re.compile(r"^[a-z]+(\.[a-z_]+)+$")  # as schemas/event.schema.json
CLIP_TEXT = 2048  # characters of one string kept in an event; the rest is summarized by its size and sha256
CLIP_PAYLOAD = 16384  # bytes of a whole payload; past it, each large top-level value is clipped as JSON text

CLAUDE_CODE_EVENTS = {
    "PreToolUse": "agent.tool_call",
    "PostToolUse": "agent.tool_result",
    "SessionStart": "agent.session_start",
    "Stop": "agent.stop",
}


def record_event(target: Any, type_: str, payload: dict[str, Any], actor: str = "agent", *,
                 commit: bool = True, summary: str | None = None) -> dict[str, Any]:
    """Record one event of a type wb does not fold (e.g. `agent.tool_call`) as one transaction: lock, clip
    the payload to size, validate, append, and commit (`commit=False` leaves the commit to the next one).
    `target` is a `Bench` (its `.last` is updated) or a `Workbench`. Returns the logged event."""
    from workbench.model.eventtypes import HARNESS_EVENTS
    from workbench.model.reducer import REDUCERS

    wb = getattr(target, "wb", target)
    if not EVENT_TYPE.match(type_):
        raise UsageError(f"event type {type_!r}: expected dotted lower-case words, e.g. agent.tool_call")
    if type_ in REDUCERS or type_ in HARNESS_EVENTS:
        raise Refused(f"event type {type_}: wb folds it into state.md or the harness session; record it through "
                      "its own command, or choose a type of your own (e.g. agent.{type_.split('.')[-1]})")
    if actor not in ("agent", "human", "wb"):
        raise UsageError(f"actor {actor!r}: agent, human or wb")
    if not isinstance(payload, dict):
        raise UsageError("an event payload is a JSON object")
    clipped = clip_payload(_redact(payload, wb))
    with wb.transaction(actor=actor, commit=commit) as tx:
        tx.summary = summary or f"wb: {type_}"
        event = tx.emit(type_, clipped)
    if target is not wb:
        target._done(tx)
    return event


# -- size caps ------------------------------------------------------------------------------------
def clip(value: Any, limit: int = CLIP_TEXT) -> Any:
    """`value` with every string longer than `limit` characters replaced by its head, size and sha256."""
    if isinstance(value, str):
        return _clip_text(value, limit)
    if isinstance(value, dict):
        return {str(k): clip(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clip(v, limit) for v in value]
    return value


def clip_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Strings clipped; then, while the payload is still over CLIP_PAYLOAD bytes, its largest top-level
    values are replaced by the head of their JSON text (a long list of short strings, a wide object)."""
    out = clip(payload)
    sizes = {k: len(_json(v)) for k, v in out.items()}
    total = sum(sizes.values())
    for key in sorted(sizes, key=sizes.__getitem__, reverse=True):
        if total <= CLIP_PAYLOAD or sizes[key] <= CLIP_TEXT:
            break
        out[key] = _clip_text(_json(out[key]), CLIP_TEXT, as_json=True)
        total += len(_json(out[key])) - sizes[key]
    return out


def _clip_text(text: str, limit: int, *, as_json: bool = False) -> Any:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from JSON input: keep what can be written
        text = text.encode("utf-8", "replace").decode("utf-8")
        data = text.encode("utf-8")
    if len(text) <= limit and not as_json:
        return text
    return {"truncated": True, "json" if as_json else "text": text[:limit], "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest()}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _redact(payload: dict[str, Any], wb: Any) -> dict[str, Any]:
    """Values of the environment variables named in config.yaml `redact` never reach the log: redacted before
    clipping, so neither a clipped head nor its sha256 is taken of a secret."""
    from workbench.model.redaction import redact, secret_values

    try:
        secrets = secret_values(wb.config)
    except (AttributeError, KeyError):
        secrets = []
    return dict(redact(payload, secrets))


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


def record_claude_code(target: Any, hook: dict[str, Any]) -> dict[str, Any] | None:
    """Record one Claude Code hook payload. Tool events are appended without a commit (two commits per tool
    call would bury the branch's history); SessionStart and Stop commit, so each agent turn is one commit."""
    mapped = claude_code_event(hook)
    if mapped is None:
        return None
    type_, payload = mapped
    if type_ in ("agent.tool_call", "agent.tool_result"):
        return record_event(target, type_, payload, commit=False)
    what = "session start" if type_ == "agent.session_start" else "turn ends"
    return record_event(target, type_, payload, summary=f"wb: claude-code {what}")
