"""What `wb serve`'s JSON routes answer, built only from the library's own read paths: the board and a task's
history (`Bench.board`, ops/board.py, as `wb board`), the event log (`Bench.log`, ops/eventlist.py, as
`wb log`), a diff (`Bench.diff`, review/diff.py, as `wb diff --format json`), the decision log
(review/parse.log_entries over the loaded state.md body), the handoff (`Bench.read_handoff`) and each harness
session (its events folded by model/session.fold, the fold the store and the loop use).

Every string in every answer passes model/display.escape (`shown`): an ANSI escape, a carriage return or a
bidi override in a title reaches the page as its visible escape, as on the terminal; the page then puts it in
the DOM as text (textContent), so HTML in a value is shown, never parsed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.model.display import escape
from workbench.model.eventtypes import HARNESS_EVENTS
from workbench.model.session import fold as fold_session

PAGE = 50  # events a page of the event log holds
PAGE_MAX = 500
DEEP = 4000  # events read from the end before a page further back reads the whole log once


LAYOUT = frozenset({"text", "description"})  # fields of several lines (a decision, a description): \n kept


def shown(value: Any, layout: bool = False) -> Any:
    """`value` with every string in it (keys too) escaped for display; numbers, booleans and None kept. The
    strings under a LAYOUT key keep their line breaks (the page renders them as Markdown, as text nodes);
    every other control character in them is escaped all the same."""
    if isinstance(value, str):
        return escape(value, layout=layout)
    if isinstance(value, dict):
        return {escape(k) if isinstance(k, str) else k: shown(v, isinstance(k, str) and k in LAYOUT)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown(v) for v in value]
    return value


def board(bench: Any, *, label: str | None = None, owner: str | None = None,
          status: str | None = None) -> dict[str, Any]:
    """`wb board --json`'s columns, each card with the markers `wb board` shows on it (`marks`) and when its
    task last changed (`updated_at`: the page's table sorts by it)."""
    from workbench.ops.board import marks

    data: dict[str, Any] = bench.board(label=label, owner=owner, status=status)
    every = data if label is None and owner is None and status is None else bench.board()
    tasks = bench.wb.load(detect_human=False, need_body=False).docs.board["tasks"]
    updated = {t.get("id"): t.get("updated_at") for t in tasks}
    children: dict[str, list[int]] = {}  # an epic's children: [done, all] (an epic is a task with children)
    for col in every["columns"]:
        for card in col["tasks"]:
            if card.get("parent"):
                counts = children.setdefault(str(card["parent"]), [0, 0])
                counts[0] += card["status"] == "done"
                counts[1] += card["status"] != "cancelled"
    for col in data["columns"]:
        for card in col["tasks"]:
            # the page shows ready, waits, priority and labels as their own badges, the rest as marks
            hidden = {"ready", *own_mark(card)}
            card["marks"] = [m for m in marks(card) if m not in hidden and not m.startswith("waits ")]
            card["updated_at"] = updated.get(card["id"])
            if card["id"] in children:
                done, total = children[card["id"]]
                card["children"] = {"done": done, "total": total}
    return data


def own_mark(card: dict[str, Any]) -> tuple[str | None, str | None]:
    """The priority and labels marks of ops/board.marks, which the page shows as a badge and chips instead."""
    p = card.get("priority")
    prio = None if p in (None, "") else (f"p{p}" if isinstance(p, int) else str(p))
    labels = " ".join("#" + str(x) for x in card["labels"]) if card.get("labels") else None
    return prio, labels


def task(bench: Any, task_id: str) -> dict[str, Any]:
    """One task as `wb task show` has it (on the board or in its archive) and its history, as `wb board`'s
    history key shows it: every event that names it, oldest first; the status of each task it names
    (`statuses`: its dependencies and parent; `archived` when off the board) and its children."""
    from workbench.review.eventview import summarize, who_shown

    found = bench.show_task(task_id)
    tasks = bench.wb.load(detect_human=False, need_body=False).docs.board["tasks"]
    status = {t.get("id"): t.get("status") for t in tasks}
    named = [*(found or {}).get("depends_on", []), (found or {}).get("parent")]
    statuses = {d: status.get(d, "archived") for d in named if isinstance(d, str)}
    children = [{"id": t.get("id"), "title": t.get("title", ""), "status": t.get("status")}
                for t in tasks if t.get("parent") == task_id]
    history = [{"seq": e.get("seq"), "ts": e.get("ts"), "type": e.get("type"), "who": who_shown(e),
                "summary": summarize(e.get("payload") or {})} for e in bench.task_history(task_id)]
    return {"task": found, "history": history, "statuses": statuses, "children": children}


def graph(bench: Any) -> dict[str, Any]:
    """The board's dependency graph laid out in layers (`layout`); a dependency done and archived off the
    board is drawn as archived, not missing."""
    from workbench.model.archive import archived_done

    board = bench.wb.load(detect_human=False, need_body=False).docs.board
    return layout([c for col in bench.board()["columns"] for c in col["tasks"]],
                  archived=lambda task_id: bool(archived_done(board, task_id)))


def layout(cards: list[dict[str, Any]], archived: Callable[[str], bool] = lambda _id: False) -> dict[str, Any]:
    """Cards laid out in layers: a task's layer is one past its deepest dependency on the board, found in
    topological order without recursion (a chain of thousands is fine); a task in a cycle gets one past the
    dependencies placed before it, and a dependency not on the board is drawn as archived (done and archived:
    `archived`) or missing. {"nodes": [{id,
    title, status, ready, layer, row}] in board order, "edges": [{from, to, missing}] (from the dependency to
    the task that waits on it)}."""
    by_id = {c["id"]: c for c in cards}
    deps = {c["id"]: [d for d in c["depends_on"] if d in by_id and d != c["id"]] for c in cards}
    waiting: dict[str, list[str]] = {}
    for task_id, ds in deps.items():
        for d in ds:
            waiting.setdefault(d, []).append(task_id)
    left = {task_id: len(ds) for task_id, ds in deps.items()}
    queue = [task_id for task_id, n in left.items() if n == 0]
    layer: dict[str, int] = {}
    while queue:
        task_id = queue.pop()
        layer[task_id] = 1 + max((layer[d] for d in deps[task_id]), default=-1)
        for w in waiting.get(task_id, ()):
            left[w] -= 1
            if left[w] == 0:
                queue.append(w)
    for c in cards:  # what a cycle kept from the queue, in board order
        if c["id"] not in layer:
            layer[c["id"]] = 1 + max((layer[d] for d in deps[c["id"]] if d in layer), default=-1)
    rows: dict[int, int] = {}
    nodes = []
    for c in cards:
        n = layer[c["id"]]
        nodes.append({"id": c["id"], "title": c["title"], "status": c["status"], "ready": c["ready"],
                      "layer": n, "row": rows.setdefault(n, 0)})
        rows[n] += 1
    edges = [{"from": d, "to": c["id"], "missing": d not in by_id and not archived(d),
              "archived": d not in by_id and archived(d)} for c in cards for d in c["depends_on"]]
    return {"nodes": nodes, "edges": edges}


def events(bench: Any, *, type: str | None = None, session: str | None = None, before: int | None = None,
           limit: int = PAGE) -> dict[str, Any]:
    """A page of the event log, newest first: the `limit` newest matching events older than seq `before`
    (all when None), and `older` (how many matching events come before the page: the next page's link).
    Read from the end of the log (`Bench.log_newest`, as `wb log`): a page further back reads more of it,
    four times more at each try, and past DEEP events the whole log once (`Bench.log`)."""
    limit = max(1, min(limit, PAGE_MAX))
    want = limit
    while True:
        if want > DEEP:  # deep in a long log: one pass over all of it costs less than more tries
            got, older = bench.log(type=type, session=session), 0
        else:
            got, older = bench.log_newest(want, type=type, session=session)
        page = [e for e in got if before is None or e.get("seq", 0) < before]
        if len(page) >= limit or older == 0:
            break
        want *= 4
    older += max(0, len(page) - limit)
    page = page[-limit:]
    from workbench.review.eventview import summarize, who_shown

    rows = [{"seq": e.get("seq"), "ts": e.get("ts"), "type": e.get("type"), "who": who_shown(e),
             "session": e.get("session"), "summary": summarize(e.get("payload") or {})} for e in page]
    return {"events": rows[::-1], "older": older, "filters": {"type": type, "session": session}}


def decisions(bench: Any) -> dict[str, Any]:
    """The decision log of state.md, newest first: [{ts, actor, text}]."""
    from workbench.review.parse import log_entries

    body = bench.wb.load(detect_human=False, need_body=True).docs.body
    return {"entries": log_entries(body)[::-1]}


def inbox(bench: Any) -> dict[str, Any]:
    """What waits for a person, as `wb status` lists it (ops/inbox.py): {"items": [{kind, what, command}]}."""
    from workbench.ops.inbox import items
    from workbench.ops.status import status_of

    return {"items": items(status_of(bench.wb))}


def handoff(bench: Any) -> dict[str, Any]:
    """The latest handoff packet written (handoff.json), or None."""
    return {"handoff": bench.read_handoff()}


def diff(bench: Any, a: str | None, b: str | None) -> dict[str, Any]:
    """`wb diff A B --format json` (A alone: A against the work tree; neither: HEAD against the work tree)."""
    data: dict[str, Any] = bench.diff(a or None, b or None)
    return data


SESSIONS = 200  # the newest sessions listed
EVERY = 10**9  # "all of them", to Bench.log_newest


def sessions(bench: Any) -> dict[str, Any]:
    """The newest harness sessions, newest first: [{id, goal, started_at, ended, state}] from the `session.*`
    events alone (picked out of the log by their bytes: cheap at 50,000 events); `state` is the live
    session's harness state, or how the session ended (completed, aborted), or its last session event."""
    evs, _older = bench.log_newest(EVERY, type="session")
    live = bench.wb.load(detect_human=False, need_body=False).docs.state.get("session")
    by_id: dict[str, dict[str, Any]] = {}
    for e in evs:
        sid = e.get("session")
        if not sid:
            continue
        p = e.get("payload") if isinstance(e.get("payload"), dict) else {}
        row = by_id.setdefault(sid, {"id": sid, "goal": "", "started_at": None, "ended": None, "state": None})
        kind = str(e.get("type", "")).split(".", 1)[-1]
        if kind == "start":
            row.update(goal=p.get("goal", ""), started_at=e.get("ts"))
        elif kind in ("complete", "abort"):
            row["ended"] = {"complete": "completed", "abort": "aborted"}[kind]
        row["state"] = row["ended"] or {"pause": "paused", "resume": "running"}.get(kind, "running")
        if isinstance(live, dict) and live.get("id") == sid and not row["ended"]:
            row["state"] = live.get("harness_state")
    rows = list(by_id.values())[::-1][:SESSIONS]
    return {"sessions": rows}


def summary(session_id: str, evs: list[dict[str, Any]]) -> dict[str, Any]:
    folded = replay(evs)
    return {"id": session_id, "goal": folded["goal"], "started_at": evs[0].get("ts"),
            "state": folded["harness_state"], "ended": folded["ended"], "reason": folded["reason"],
            "steps": len(folded["plan"]), "budget": folded["budget"], "events": len(evs)}


def replay(evs: list[dict[str, Any]]) -> dict[str, Any]:
    """The session as model/session.fold leaves it after `evs` — kept as it was just before it ended."""
    state: dict[str, Any] = {"counters": {"turns": 0, "tool_calls": 0}, "session": None}
    last: dict[str, Any] = {}
    ended = None
    for e in evs:
        if e.get("type") in ("session.complete", "session.abort"):
            ended = e["type"].split(".")[1]
        try:
            fold_session(state, e)
        except (KeyError, IndexError, TypeError):  # a damaged or foreign event: the timeline still shows it
            continue
        if isinstance(state.get("session"), dict):
            last = state["session"]
    return {"goal": last.get("goal", ""), "harness_state": last.get("harness_state"), "ended": ended,
            "reason": last.get("reason"), "plan": last.get("plan", []),
            "budget": last.get("budget", {"limits": {}, "used": {}})}


def timeline(bench: Any, session_id: str) -> dict[str, Any]:
    """One session as a timeline: each event an entry (`kind`: state, step, tool, yield, answer, other) with
    what it says, who recorded it and, for a yield, who answered it; plus the steps and the budget used."""
    got, _older = bench.log_newest(EVERY, session=session_id) if session_id else ([], 0)
    evs = [e for e in got if e.get("type") in HARNESS_EVENTS]
    if not evs:
        return {"id": session_id, "found": False, "entries": []}
    from workbench.review.eventview import summarize, who_shown

    entries = []
    for e in evs:
        p = e.get("payload") if isinstance(e.get("payload"), dict) else {}
        kind, text = entry_of(e["type"], p)
        item: dict[str, Any] = {"seq": e.get("seq"), "ts": e.get("ts"), "type": e["type"], "kind": kind,
                                "text": text or summarize(p), "who": who_shown(e)}
        if isinstance(p.get("yield"), dict):
            item["kind"] = "yield"
            item["yield"] = {"id": p["yield"].get("id"), "kind": p["yield"].get("kind"),
                             "reason": p["yield"].get("reason")}
        entries.append(item)
    answer_yields(entries)
    folded = replay(evs)
    for item, e in zip(entries, evs, strict=True):  # a step's or a tool's entry names the step's description
        index = (e.get("payload") or {}).get("index") if isinstance(e.get("payload"), dict) else None
        if item["kind"] in ("step", "tool", "yield") and isinstance(index, int) and 0 <= index < len(folded["plan"]):
            item["step"] = folded["plan"][index].get("description", "")
    return {"id": session_id, "found": True, **summary(session_id, evs),
            "plan": [{"description": s.get("description", ""), "tool": s.get("tool"), "status": s.get("status"),
                      "error": s.get("error")} for s in folded["plan"]],
            "entries": entries}


def entry_of(type: str, p: dict[str, Any]) -> tuple[str, str]:
    if type == "harness.transition":
        why = f" ({p['reason']})" if p.get("reason") else ""
        return "state", f"{p.get('from')} → {p.get('to')}{why}"
    if type in ("step.start", "step.end"):
        status = f" [{p.get('status')}]" if type == "step.end" else ""
        return "step", f"step {p.get('index')}{status} {p.get('description') or ''}".rstrip()
    if type.startswith("tool."):
        return "tool", f"{type.split('.')[1]} {p.get('tool') or ''} (step {p.get('index')})"
    if type == "session.resume":
        return "answer", f"resumed: {p.get('action') or p.get('kind') or 'continue'}"
    if type.startswith("approval."):
        return "answer" if type != "approval.requested" else "yield", f"{type.split('.')[1]} {p.get('tool') or ''}"
    return "other", ""


def answer_yields(entries: list[dict[str, Any]]) -> None:
    """Each yield gets `answered_by`: who recorded the first answer (a resume or approval) after it."""
    open_yield: dict[str, Any] | None = None
    for item in entries:
        if item["kind"] == "yield":
            open_yield = item
            item["answered_by"] = None
        elif item["kind"] == "answer" and open_yield is not None:
            open_yield["answered_by"] = item["who"]
            open_yield["answered_at"] = item["seq"]
            open_yield = None
