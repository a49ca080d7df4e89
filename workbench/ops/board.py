"""`wb board` as data: the board's tasks in columns by status, each a card saying what a reviewer looks for —
ready (todo, every dependency done), what it waits on, who holds its claim, its scope, a forced or overridden
done — filtered by label, owner or status; a task's history (the events that name it); and a cheap stamp of
the workbench's files, so a live view re-reads only when something changed.

Read-only: every read goes through the workbench's own load and event log (no second reader of a file).
Keys other helpers add to a task (`labels`, `priority`, `assignee`, `parent`) are read with .get(): a board
without them is shown the same.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from workbench.model.claims import holder
from workbench.model.dependencies import task_statuses
from workbench.model.ids import utc_now
from workbench.model.proof import unproven
from workbench.ops.status import STATUSES, ready_tasks, waiting_on
from workbench.store import caches
from workbench.store.workbench import Workbench

# each column's heading, for the terminal views (cli/board.py's print, cli/board_app.py's live board)
HEADINGS = {"todo": "TODO", "in_progress": "IN PROGRESS", "blocked": "BLOCKED", "done": "DONE",
            "cancelled": "CANCELLED"}
EXTRA_KEYS = ("labels", "priority", "assignee", "parent")  # optional task keys, shown when a task has them


def labels_of(task: dict[str, Any]) -> list[str]:
    labels = task.get("labels")
    return [str(x) for x in labels] if isinstance(labels, list) else []


def card(task: dict[str, Any], tasks: list[dict[str, Any]], board: dict[str, Any], ready: set[Any],
         now: str, seen: dict[str, str] | None = None, statuses: dict[Any, str] | None = None) -> dict[str, Any]:
    """What the board shows of one task (its claim as this clone saw the lease: `seen`, ops/claims.py); a
    caller making many cards passes `statuses` (`task_statuses(tasks)`), built once."""
    raw_proof, raw_scope = task.get("proof"), task.get("scope")
    proof: dict[str, Any] = raw_proof if isinstance(raw_proof, dict) else {}
    scope: dict[str, Any] = raw_scope if isinstance(raw_scope, dict) else {}
    claim = holder(task, now, (seen or {}).get(str(task.get("id"))))
    out: dict[str, Any] = {
        "id": task.get("id"), "title": task.get("title", ""), "status": task.get("status", "todo"),
        "kind": task.get("kind"), "owner": task.get("owner"),
        "ready": task.get("id") in ready,
        "depends_on": list(task.get("depends_on") or []),
        "waiting_on": waiting_on(task, tasks, board, statuses=statuses)
        if task.get("status", "todo") in ("todo", "blocked") else [],
        "claim": {"agent": claim.get("agent"), "until": claim.get("until")} if claim else None,
        "scope": {k: scope[k] for k in ("allowed", "forbidden", "approvals_required", "outside") if k in scope}
        or None,
        "forced": bool(task.get("forced_done") or proof.get("forced")),
        "unproven": unproven(task),  # issue 30: forced, or done with no proof at all (a hand edit, a merge)
        "override": proof.get("override"),
        "blocked_reason": task.get("blocked_reason"),
    }
    for key in EXTRA_KEYS:
        if task.get(key) not in (None, "", []):
            out[key] = task[key]
    return out


def marks(card: dict[str, Any]) -> list[str]:
    """The short markers a card carries, in the order the board shows them (each value escaped by the caller):
    `wb board`'s cards, static and live, and `wb serve`'s."""
    out = []
    if card["ready"]:
        out.append("ready")
    if card["waiting_on"]:
        out.append("waits " + ",".join(card["waiting_on"]))
    if card["status"] == "blocked" and card["blocked_reason"]:
        out.append(f"blocked: {card['blocked_reason']}")
    if card["claim"]:
        out.append(f"claimed by {card['claim']['agent']}")
    if card.get("unproven"):
        out.append(str(card["unproven"]))
    if card["override"]:
        out.append("overridden")
    if card["scope"]:
        out.append("scoped")
    if card.get("priority") not in (None, ""):
        out.append(f"p{card['priority']}" if isinstance(card["priority"], int) else str(card["priority"]))
    if card.get("labels"):
        out.append(" ".join("#" + str(x) for x in card["labels"]))
    return out


def matches(task: dict[str, Any], *, label: str | None = None, owner: str | None = None,
            status: str | None = None) -> bool:
    """`owner` matches the task's owner or its assignee (when tasks have one)."""
    return ((label is None or label in labels_of(task))
            and (owner is None or owner in (task.get("owner"), task.get("assignee")))
            and (status is None or task.get("status", "todo") == status))


def columns(tasks: list[dict[str, Any]], board: dict[str, Any], *, label: str | None = None,
            owner: str | None = None, status: str | None = None, now: str | None = None,
            seen: dict[str, str] | None = None) -> dict[str, Any]:
    """{"columns": [{"status", "tasks": [card…]}…] in STATUSES order (only `status`'s when given), "filters",
    "total": the tasks shown}."""
    now = now or utc_now()
    ready = {t.get("id") for t in ready_tasks(tasks, board)}
    shown = [t for t in tasks if matches(t, label=label, owner=owner, status=status)]
    statuses = task_statuses(tasks)  # once, not per card (issue 33)
    cols = [{"status": s, "tasks": [card(t, tasks, board, ready, now, seen, statuses) for t in shown
                                    if t.get("status", "todo") == s]}
            for s in STATUSES if status is None or s == status]
    return {"columns": cols, "filters": {"label": label, "owner": owner, "status": status}, "total": len(shown)}


def named_tasks(event: dict[str, Any]) -> set[str]:
    """The ids of the tasks an event is about: a task event's id, an added task, a renumber's from and to, a
    hand edit's upserts and removals."""
    raw = event.get("payload")
    p: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out: set[Any] = {p.get("id")}
    added = p.get("task")
    if isinstance(added, dict):
        out.add(added.get("id"))
    if str(event.get("type", "")).startswith("task."):
        out |= {p.get("from"), p.get("to")}
    removed, upserts = p.get("remove"), p.get("upsert")
    if isinstance(removed, list):
        out |= set(x for x in removed if isinstance(x, str))
    if isinstance(upserts, list):
        out |= {t.get("id") for t in upserts if isinstance(t, dict)}
    return {x for x in out if isinstance(x, str)}


def names_task(event: dict[str, Any], task_id: str) -> bool:
    """Whether an event is about `task_id` (named_tasks)."""
    return task_id in named_tasks(event)


def history(wb: Workbench, task_id: str) -> list[dict[str, Any]]:
    """The events that name `task_id`, oldest first, as `wb log --all` would find them, without reading the
    whole log on every look: each sealed segment's task ids are indexed once per machine, kept by the
    segment's digest (store/caches: a sealed segment never changes), so only the segments that name the task
    are read (checked against their header, as every read of a segment is), then the unsealed tail (at most
    one segment's worth: log.segment_events) with its seq and hash chain checked."""
    paths = wb.paths
    index = caches.read_task_index(paths)
    changed = False
    out: list[dict[str, Any]] = []
    chain = wb.log.sealed_chain()
    for header in chain:
        ids = index.get(header.sha256)
        if ids is not None and task_id not in ids:
            continue  # indexed: not a word about the task in this segment
        events = [e for _line, e in wb.log.sealed_events(header)]
        if ids is None:
            index[header.sha256] = sorted(set().union(*(named_tasks(e) for e in events)))
            changed = True
        out += [e for e in events if names_task(e, task_id)]
    if changed:  # kept: the segments of this log (a segment a sync replaced is forgotten)
        digests = {h.sha256 for h in chain}
        caches.write_task_index(paths, {k: v for k, v in index.items() if k in digests})
    out += [e for _line, e in wb.log.iter_unsealed() if names_task(e, task_id)]
    return out


def stamp(paths: Iterable[os.PathLike[str] | str]) -> tuple[tuple[int, int, int], ...]:
    """(inode, size, mtime) of each file — (0, 0, 0) when missing: a change to any says "read again"."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((0, 0, 0))
    return tuple(out)


def watched(wb: Workbench) -> list[Any]:
    """The files whose change changes the board: the snapshots and the log's tail; on SQLite the database and
    its write-ahead log, which every COMMIT appends to (and a checkpoint moves into the database)."""
    storage = getattr(wb, "storage", None)
    if getattr(storage, "kind", None) == "sqlite":
        path = storage.path  # type: ignore[union-attr]
        return [path, path.with_name(path.name + "-wal")]
    return [wb.paths.board, wb.paths.state, wb.paths.events]
