"""The harness story told by the events a diff appends: sessions and their outcome, steps, tool calls and
approvals, with the goals and step descriptions of sessions that began earlier looked up in the log."""

from __future__ import annotations

import json
from typing import Any

from workbench.review.eventview import PROOFS, cut, who_shown  # noqa: F401 - shown by wb diff and the handoff


def harness_summary(events: list[dict[str, Any]], log: bytes) -> dict[str, Any]:
    """Sessions (goal, outcome), steps (started, ended with status), tool calls and approvals recorded by
    `events`; goals and step descriptions of sessions that began earlier are looked up in `log`."""
    sessions: dict[str, dict[str, Any]] = {}
    steps: dict[tuple[str, int], dict[str, Any]] = {}
    calls: list[dict[str, Any]] = []
    approvals: list[dict[str, Any]] = []
    plans: dict[str, dict[int, dict[str, Any]]] = {}
    for e in events:
        sid, kind, p = e.get("session"), e.get("type"), e.get("payload")
        if not isinstance(sid, str) or not isinstance(p, dict) or not isinstance(kind, str):
            continue
        if kind == "plan.commit":
            _note_plan(plans, sid, p)
        if not (kind.startswith(("session.", "step.", "tool.", "approval.", "plan.", "budget.", "harness."))):
            continue
        s = sessions.setdefault(sid, {"id": sid, "goal": None, "started": False, "outcome": "running",
                                      "reason": None})
        index = p.get("index")
        if kind == "session.start":
            s.update(goal=p.get("goal"), started=True)
        elif kind in ("session.complete", "session.abort"):
            s.update(outcome="completed" if kind == "session.complete" else "aborted", reason=p.get("reason"))
        elif kind == "session.pause":
            s.update(outcome="paused", reason=p.get("reason"))
        elif kind == "session.resume":
            s.update(outcome="running", reason=None)
        elif isinstance(p.get("yield"), dict):
            s.update(outcome="waiting", reason=p["yield"].get("reason"))
        if kind in ("step.start", "step.end") and isinstance(index, int):
            st = steps.setdefault((sid, index), {"session": sid, "index": index, "id": p.get("step"),
                                                 "description": None, "started": False, "status": None})
            if kind == "step.start":
                st["started"] = True
            else:
                st["status"] = p.get("status")
        elif kind == "tool.call":
            calls.append({"session": sid, "index": index, "step": p.get("step"), "tool": p.get("tool"),
                          "key": p.get("key"), "dispatch": p.get("dispatch"), "status": "pending",
                          "result": None, "error": None})
        elif kind in ("tool.result", "tool.error"):
            call = next((c for c in reversed(calls) if c["session"] == sid and (
                c["key"] == p.get("key") if p.get("key") else c["index"] == index)), None)
            if call is None:
                call = {"session": sid, "index": index, "step": None, "tool": None, "key": p.get("key"),
                        "dispatch": None, "status": "pending", "result": None, "error": None}
                calls.append(call)
            if kind == "tool.result":
                call.update(status="done", result=p.get("summary") or _short_json(p.get("result")))
            else:
                call.update(status="error", error=p.get("error"))
        elif kind in ("approval.requested", "approval.granted", "approval.denied"):
            decision = kind.split(".", 1)[1]
            approvals.append({"session": sid, "index": index, "step": p.get("step"), "tool": p.get("tool"),
                              "decision": decision, "mode": p.get("mode"), "reason": p.get("reason")})
    missing_goal = {sid for sid, s in sessions.items() if s["goal"] is None}
    missing_plan = {sid for sid, _ in steps} | {c["session"] for c in calls if c["tool"] is None}
    missing_plan -= set(plans)
    if missing_goal or missing_plan:
        _look_back(log, missing_goal, missing_plan, sessions, plans)
    for (sid, index), st in steps.items():
        item = plans.get(sid, {}).get(index, {})
        st["description"] = item.get("description")
        st["id"] = st["id"] or item.get("id")
    for record in (*calls, *approvals):
        item = plans.get(record["session"], {}).get(record["index"], {}) if isinstance(record["index"], int) else {}
        record["step"] = record["step"] or item.get("id")
        record["tool"] = record["tool"] or item.get("tool")
    return {"sessions": list(sessions.values()), "steps": list(steps.values()), "tool_calls": calls,
            "approvals": approvals, "person_only": person_only(events)}


def _note_plan(plans: dict[str, dict[int, dict[str, Any]]], sid: str, payload: dict[str, Any]) -> None:
    items = payload.get("steps")
    if not isinstance(items, list):
        return
    plan = plans.setdefault(sid, {})
    for i, item in enumerate(items):
        if isinstance(item, dict):
            ordinal = item.get("ordinal")
            plan[ordinal - 1 if isinstance(ordinal, int) else i] = item


def _look_back(log: bytes, goals: set[str], plans_for: set[str], sessions: dict[str, dict[str, Any]],
               plans: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Find the session.start and plan.commit lines of earlier sessions by substring search (fast in C),
    parsing only those lines."""
    from workbench.model.jsonl import loads_record

    for marker, wanted in ((b'"type":"session.start"', goals), (b'"type":"plan.commit"', plans_for)):
        if not wanted:
            continue
        pos = log.find(marker)
        while pos != -1:
            start = log.rfind(b"\n", 0, pos) + 1
            end = log.find(b"\n", pos)
            end = len(log) if end == -1 else end
            e = loads_record(log[start:end])
            if (e is not None and isinstance(e.get("session"), str) and e["session"] in wanted
                    and isinstance(e.get("payload"), dict)):
                sid = e["session"]
                if marker.endswith(b'start"') and sid in sessions:
                    sessions[sid]["goal"] = e["payload"].get("goal")
                elif not marker.endswith(b'start"'):
                    _note_plan(plans, sid, e["payload"])
            pos = log.find(marker, end)


def _short_json(value: Any, width: int = 80) -> str | None:
    if value is None:
        return None
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return cut(text, width)


# -- who acted, as a reader sees it (issue 19): a person-only action says how the person was proven ------------
def person_only(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The person-only actions among `events` (issue 19): a forced done, a started task's acceptance or scope
    moved, an approval or denial a person gave — each with who did it and how they were proven (`proof` is
    None for one recorded before proofs were, or under `approvals: any`)."""
    out: list[dict[str, Any]] = []
    for e in events:
        kind, p = e.get("type"), e.get("payload")
        if not isinstance(p, dict):
            continue
        what = None
        if kind == "task.done" and p.get("forced"):
            what = f"forced {p.get('id')} done"
        elif kind == "task.set" and isinstance(p.get("changes"), dict) and (
                e.get("proof") or p.get("override")) and {"acceptance", "scope"} & set(p["changes"]):
            what = f"changed the {' and '.join(sorted({'acceptance', 'scope'} & set(p['changes'])))} of {p.get('id')}"
        elif kind in ("approval.granted", "approval.denied"):
            what = f"{'approved' if kind == 'approval.granted' else 'denied'} `{p.get('tool')}`"
        elif e.get("proof"):
            what = str(kind)
        if what is not None:
            out.append({"seq": e.get("seq"), "type": kind, "what": what, "actor": e.get("actor"),
                        "via": e.get("via"), "proof": e.get("proof"), "who": who_shown(e)})
    return out
