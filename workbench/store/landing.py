"""The one way acknowledged events land after a branch's log (issue 29): `wb sync`, the pending journal's events
(a write while HEAD was detached, mid-rebase or mid-bisect, or one the user's git took from the work tree) and
git's merge driver during a rebase all use one pick rule (`pick`, here since issue 29; review/merge.py's
`merge_events(pick=True)` calls it):

- ours, the log as it is, is kept byte for byte (its lines are committed, perhaps published);
- theirs, the acknowledged events ours lacks (by id), are appended after it, seq and hash chain given again;
- a task a landing event adds under an id ours already uses is renumbered to the next free one, and every later
  landing event that names it follows; a `task.renumber` event records each such move, so `wb task show OLD`
  says where the task went (ops/sync.py `resolve_renumbered`).

`land` is what `wb sync` merges with (ops/sync.py `_combine`); `land_pending` is what every load of a workbench
whose pending journal holds events the log lacks folds in (store/workbench.py), and what the next write writes.
A landing event that no longer applies to the branch (a start of a task the branch took off its board) is left
out and returned, never silently dropped: the write that lands the rest names it and keeps it aside
(store/pending.py `set_aside`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from workbench.model.ids import task_number

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.model.reducer import Docs
    from workbench.store.eventlog import Tail


# -- the pick rule (moved from review/merge.py) ------------------------------------------------------------
def rename_task(task: dict[str, Any], m: dict[str, str]) -> dict[str, Any]:
    task = dict(task)
    if task.get("id") in m:
        task["id"] = m[task["id"]]
    if isinstance(task.get("depends_on"), list):
        task["depends_on"] = [m.get(d, d) for d in task["depends_on"]]
    if task.get("reviews") in m:
        task["reviews"] = m[task["reviews"]]
    return task


def rename_event(event: dict[str, Any], m: dict[str, str]) -> dict[str, Any]:
    if not m:
        return event
    import copy  # here: only a renumbering copies (a plain write imports neither copy nor weakref)

    event = copy.deepcopy(event)
    p = event["payload"]
    if event["type"].startswith("task.") and p.get("id") in m:
        p["id"] = m[p["id"]]
    if isinstance(p.get("task"), dict):
        p["task"] = rename_task(p["task"], m)
    changes = p.get("changes")
    if isinstance(changes, dict):
        if isinstance(changes.get("depends_on"), list):
            changes["depends_on"] = [m.get(d, d) for d in changes["depends_on"]]
        for key in ("reviews", "active_task_id"):
            if changes.get(key) in m:
                changes[key] = m[changes[key]]
    if event["type"] == "human.edit" and p.get("file") == "board.json":
        p["upsert"] = [rename_task(t, m) for t in p.get("upsert", [])]
        p["remove"] = [m.get(t, t) for t in p.get("remove", [])]
        if "order" in p:
            p["order"] = [m.get(t, t) for t in p["order"]]
    return event


def pick(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], start: Tail | None = None,
         *, base: list[dict[str, Any]] | None = None, also: Iterable[str] = ()
         ) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """A rebase or cherry-pick applies one commit of another line onto ours: `base` is that commit's parent, not
    an ancestor of ours, so ours is kept exactly (its events are already recorded, and perhaps published) and
    the picked commit's own events — theirs' that neither ours nor base has — are appended after it: the events
    of the commits before it on its line were not picked, and a cherry-pick never brings them. Task ids follow
    what earlier picks chose: a task an earlier pick renumbered keeps its new id in the later events that name
    it, and a task this pick adds under an id ours already uses is renumbered to the next free one. `also`: ids
    ours' board uses that no task.add of ours names (a task a person added to board.json by hand)."""
    from workbench.store.eventlog import Tail, chain

    ours_by_id = {e["id"]: e for e in ours}
    renames: dict[str, str] = {}
    for event in theirs:  # the same task.add event, renumbered on ours by an earlier pick
        mine = ours_by_id.get(event["id"])
        if mine is not None and event["type"] == "task.add":
            old, new = added_id(event), added_id(mine)
            if old and new and old != new:
                renames[old] = new
    base_ids = {e["id"] for e in base or []}
    theirs_new = [e for e in theirs if e["id"] not in ours_by_id and e["id"] not in base_ids]
    taken = {tid for e in ours for tid in [added_id(e)] if tid} | set(also)
    highest = max([task_number(tid) for tid in taken]
                  + [task_number(tid) for e in theirs for tid in [added_id(e)] if tid] + [0])
    for event in theirs_new:
        tid = added_id(event)
        if tid and renames.get(tid, tid) in taken and tid not in renames:
            highest += 1
            renames[tid] = f"T-{highest:03d}"
        if tid:
            taken.add(renames.get(tid, tid))
    from workbench.model.jsonl import encode, line_hash

    # ours byte for byte (its lines are committed: the log is append-only), theirs chained after it
    added = []
    for e in theirs_new:
        fresh = dict(rename_event(e, renames))
        for key in ("more", "seq", "prev"):
            fresh.pop(key, None)
        added.append(fresh)
    tail = Tail(ours[-1]["seq"], line_hash(encode(ours[-1])), 0, 0) if ours else (start or Tail(0, None, 0, 0))
    chain(added, tail, batch=False)  # each one complete: no batch to recognise after a merge
    return [dict(e) for e in ours] + added, {"ours": {}, "theirs": renames}


def added_id(event: dict[str, Any]) -> str | None:
    if event.get("type") == "task.add" and isinstance(event.get("payload", {}).get("task"), dict):
        tid = event["payload"]["task"].get("id")
        return tid if isinstance(tid, str) else None
    return None


def agent_name(given: str | None = None) -> str:
    """Who claims: --agent, then WB_AGENT, then user@host."""
    if given:
        return given
    if os.environ.get("WB_AGENT"):
        return os.environ["WB_AGENT"]
    import getpass
    import socket

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "agent"
    return f"{user}@{socket.gethostname()}"


# -- landing ----------------------------------------------------------------------------------------------
def land(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], also: Iterable[str] = ()
         ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """`ours` kept exactly, the events of `theirs` it lacks appended, each whole (no `more`) and chained after
    ours; a task id ours took renumbered ({old: new}, the references that follow renumbered too)."""
    if not theirs or {e["id"] for e in theirs} <= {e["id"] for e in ours}:
        return ours, {}
    events, renames = pick(ours, theirs, base=[], also=also)
    return rechain(events, len(ours)), renames["theirs"]


def rechain(events: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """The events after the first `keep` numbered and hash-chained again, each one whole (no `more`): merge.py's
    pick chains them as one batch and then drops `more`, which leaves each `prev` hashing a line that is not
    written (reported to the lead; chained here so the log written verifies)."""
    from workbench.model.jsonl import encode, line_hash

    prev = line_hash(encode(events[keep - 1])) if keep else None
    seq = events[keep - 1]["seq"] if keep else 0
    for event in events[keep:]:
        event.pop("more", None)
        seq += 1
        event["seq"], event["prev"] = seq, prev
        prev = line_hash(encode(event))
    return events


def renumber_events(events: list[dict[str, Any]], renames: dict[str, str], agent: str, worktree: str
                    ) -> list[dict[str, Any]]:
    """The `task.renumber` events that record `renames` ({old: new}), those `events` do not record already."""
    from workbench.model import ids

    recorded = {(e["payload"].get("from"), e["payload"].get("to")) for e in events if e["type"] == "task.renumber"}
    return [{"schema_version": 1, "id": ids.new_id(), "ts": ids.utc_now(), "type": "task.renumber", "actor": "wb",
             "session": None, "payload": {"from": old, "to": to, "agent": agent, "worktree": worktree}}
            for old, to in sorted(renames.items()) if (old, to) not in recorded]


def with_renumbers(events: list[dict[str, Any]], renames: dict[str, str], agent: str, worktree: str
                   ) -> list[dict[str, Any]]:
    """`events` with the `task.renumber` events of `renames` appended and chained after them."""
    new = renumber_events(events, renames, agent, worktree)
    if not new:
        return events
    return rechain([*events, *new], len(events))


def land_pending(log: list[dict[str, Any]], pending: list[dict[str, Any]], tail: Tail, docs: Docs,
                 agent: str, worktree: str, *, folded: int = 0
                 ) -> tuple[list[dict[str, Any]], dict[str, str], list[dict[str, Any]]]:
    """(events to write after `tail`, renames, refused): the pending journal's events `log` (the branch's whole
    log) lacks, landed by `land`, with the `task.renumber` events of the ids it moved; `docs`, a copy of the
    documents the log folds to (the pending events are folded into it as they are tried), say which of them
    still apply — one that does not is refused (returned, left out), and
    the rest land; one that names a task the branch archived is void there, as a rebase keeps it: landed
    all the same, and returned too, marked `void`; those at or below seq `folded` are in `docs` already
    (snapshots written before a `git stash` took the log's lines) and are kept as they are. Nothing is
    written here."""
    from workbench.model import reducer
    from workbench.store.eventlog import chain

    # the board's ids too: a task a person added to board.json by hand is on it under an id no task.add names
    # (but not a pending task itself, on a board written before a `git stash` took the log's line of its add)
    own = {tid: e["payload"]["task"].get("created_at") for e in pending for tid in [added_id(e)] if tid}
    also = [t["id"] for t in docs.board["tasks"] if isinstance(t.get("id"), str)
            and not (t["id"] in own and t.get("created_at") == own[t["id"]])]
    landed, renames = land(log, pending, also=also)
    added = [dict(e) for e in landed[len(log):]]
    kept: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for event in added:  # `docs` is the caller's copy: the pending events are tried on it one by one
        event["seq"] = tail.seq + len(kept) + 1
        if event["seq"] <= folded:
            kept.append(event)
            continue
        try:
            if reducer.names_sealed(docs, event):  # void on the branch, as a rebase keeps it: named, kept
                refused.append({**event, "void": True})
            reducer.apply(docs, event)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError):
            refused.append(event)  # the reducers look the task up before they change anything
            continue
        kept.append(event)
    kept += renumber_events(log, {old: new for old, new in renames.items()
                                  if any(_adds(e, new) for e in kept)}, agent, worktree)
    for event in kept:
        for key in ("more", "seq", "prev"):
            event.pop(key, None)
    return chain(kept, tail, batch=False), renames, refused


def _adds(event: dict[str, Any], task_id: str) -> bool:
    task = event.get("payload", {}).get("task") if event.get("type") == "task.add" else None
    return isinstance(task, dict) and task.get("id") == task_id


def describe(event: dict[str, Any]) -> str:
    """An event named in one line: `task.start T-002`."""
    payload = event.get("payload") if isinstance(event.get("payload"), dict) else {}
    task = payload.get("id") or (payload.get("task") or {}).get("id") if isinstance(payload, dict) else None
    return f"{event.get('type')}{f' {task}' if task else ''}"
