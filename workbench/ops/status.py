"""`wb status` as data: the active task, the next action, blockers, the session and the board counts."""

from __future__ import annotations

from typing import Any

from workbench.store.workbench import Workbench


def status_of(wb: Workbench) -> dict[str, Any]:
    from workbench.ops.yields import resume_hint  # the harness package is not on a write's path

    loaded = wb.load(detect_human=True, need_body=False)
    docs = loaded.docs
    state, board = docs.state, docs.board
    counts = {s: 0 for s in ("todo", "in_progress", "blocked", "done", "cancelled")}
    active = None
    for task in board["tasks"]:
        counts[task.get("status", "todo")] = counts.get(task.get("status", "todo"), 0) + 1
        if task.get("id") == state.get("active_task_id"):
            active = task
    session = state.get("session")
    last = None
    if loaded.tail.seq:
        events = wb.log.read_after(loaded.tail.seq - 1)
        if events:
            e = events[-1]
            last = {"seq": e["seq"], "type": e.get("type"), "ts": e.get("ts"), "actor": e.get("actor")}
    return {
        "workbench": str(wb.root),
        "status": state.get("status"),
        "active_task": active,
        "next_action": state.get("next_action", ""),
        "blockers": state.get("blockers", []),
        "assumptions": state.get("assumptions", []),
        "touched_files": state.get("touched_files", []),
        "counters": state.get("counters", {}),
        "session": session,
        "pending": session.get("pending") if isinstance(session, dict) else None,
        "resume": resume_hint(session),
        "board": {"total": len(board["tasks"]), "by_status": counts},
        "last_event": last,
        "unrecorded_human_edits": [e["file"] for e in loaded.human_edits],
        # acknowledged events not yet in .workbench/ (git is mid-operation) or taken from it by the user's git:
        # held in the git directory, written and committed by the next wb write (workbench.store.pending)
        "not_yet_written": {"events": len(loaded.pending), "why": wb.deferred()} if loaded.pending else None,
        "handoff": latest_handoff(wb),  # issue 16
    }


# -- the handoff packet (issue 16): `wb status` points to the latest one and leads with its next action ----
def latest_handoff(wb: Workbench) -> dict[str, Any] | None:
    """{path, next_action, risks, describes} of .workbench/handoff.json, or None when none was written."""
    import json

    try:
        packet = json.loads((wb.paths.wb / "handoff.json").read_bytes())
        return {"path": ".workbench/handoff.md", "next_action": packet["next_action"],
                "risks": len(packet["risks"]), "describes": packet["describes"]["last_event"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
