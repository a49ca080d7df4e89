"""Harness events → the live session (state.md's `session`). Pure; shared by the loop and the store.

The loop never changes its own session directly: it emits an event and folds it here, exactly as the store
folds the same event into state.md and as `wb replay` folds the whole log. That is why a session resumed
from the workbench after a crash is the session that was running: same event log, same state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from workbench.model.eventtypes import HARNESS_EVENTS  # noqa: F401 - re-exported

STATUS_OF_STATE = {"IDLE": "paused", "AWAITING_TOOL": "awaiting_tool", "DONE": "completed"}


def seconds_between(start: str, end: str) -> float:
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ"
    try:
        return max(0.0, (datetime.strptime(end, fmt) - datetime.strptime(start, fmt)).total_seconds())
    except ValueError:
        return 0.0


def _stop_clock(session: dict[str, Any], ts: str) -> None:
    started = session.get("clock_started_at")
    if started:
        used = session["budget"]["used"]
        used["seconds"] = round(used["seconds"] + seconds_between(started, ts), 3)
        session["clock_started_at"] = None


def _start_clock(session: dict[str, Any], ts: str) -> None:
    if not session.get("clock_started_at"):
        session["clock_started_at"] = ts


def fold(state: dict[str, Any], ev: dict[str, Any]) -> None:
    """Fold one harness event into the state frontmatter (its `session`, `status` and counters)."""
    kind, p, ts = ev["type"], ev["payload"], ev["ts"]
    if kind == "session.start":
        state["session"] = {
            "id": ev["session"],
            "goal": p["goal"],
            "harness_state": "IDLE",
            "started_at": ts,
            "reason": None,
            "step_index": 0,
            "plan": [],
            "budget": {"limits": dict(p.get("budget", {})), "used": {"turns": 0, "tool_calls": 0, "seconds": 0.0}},
            "pending": None,
            "grants": [],
            "planner": p.get("planner", ""),
            "paused_from": None,
            "clock_started_at": ts,
        }
        state["status"] = "running"
        return
    session = state.get("session")
    if not isinstance(session, dict) or session.get("id") != ev.get("session"):
        return  # an event of a finished or foreign session: the log keeps it, the state does not
    plan = session["plan"]
    if kind == "harness.transition":
        src, dst = p["from"], p["to"]
        session["harness_state"] = dst
        if dst == "IDLE":
            session["paused_from"] = src
            _stop_clock(session, ts)
        elif src == "IDLE":
            session["paused_from"] = None
        state["status"] = STATUS_OF_STATE.get(dst, "running")
        if p.get("reason"):
            session["reason"] = p["reason"]
    elif kind == "plan.commit":
        done = plan[: session["step_index"]]
        session["plan"] = done + [dict(s, status="pending") for s in p["steps"]]
    elif kind == "step.start":
        step = plan[p["index"]]
        step["status"] = "running"
        step["attempt"] = step.get("attempt", 0)
        session["step_index"] = p["index"]
        session["budget"]["used"]["turns"] += 1
        state["counters"]["turns"] += 1
    elif kind == "approval.granted":
        plan[p["index"]]["approved_attempt"] = p["attempt"]
        if p.get("scope") == "session" and p["tool"] not in session["grants"]:
            session["grants"].append(p["tool"])
    elif kind == "tool.call":
        step = plan[p["index"]]
        step["status"] = "awaiting_tool"
        step["attempt"] = p["attempt"]
        step["key"] = p["key"]
        session["budget"]["used"]["tool_calls"] += 1
        state["counters"]["tool_calls"] += 1
    elif kind == "tool.result":
        plan[p["index"]]["result"] = p.get("summary", "")
    elif kind == "tool.error":
        plan[p["index"]]["error"] = p["error"]
        if p.get("policy"):  # what the failure of a tool wb ran does next (pause | fail | continue)
            plan[p["index"]]["on_error"] = p["policy"]
    elif kind == "step.end":
        plan[p["index"]]["status"] = p["status"]
        session["step_index"] = p["index"] + 1
    elif kind == "session.resume":
        session["pending"] = None
        if p.get("action") == "retry":  # the failed step runs again, as a new attempt
            step = plan[p["index"]]
            for key in ("result", "error", "key"):
                step.pop(key, None)
            step["status"] = "pending"
            session["step_index"] = p["index"]
        elif p.get("action") == "skip":
            plan[p["index"]]["status"] = "skipped"
        for limit, extra in (p.get("extend") or {}).items():
            limits = session["budget"]["limits"]
            if limits.get(limit) is not None:
                limits[limit] = limits[limit] + extra
        _start_clock(session, ts)
    elif kind in ("session.complete", "session.abort"):
        state["session"] = None
        state["status"] = "completed" if kind == "session.complete" else "idle"
        return
    elif kind == "session.pause":
        session["reason"] = p["reason"]
    if isinstance(p, dict) and isinstance(p.get("yield"), dict):
        session["pending"] = dict(p["yield"])
        _stop_clock(session, ts)


def active_seconds(session: dict[str, Any], now: str) -> float:
    used = float(session["budget"]["used"]["seconds"])
    started = session.get("clock_started_at")
    return used + (seconds_between(started, now) if started else 0.0)
