"""Merging two branches' workbenches: the event log by event id, the board by task id field by field, state.md
key by key. Used by the git merge drivers that `wb init` registers (`wb merge-driver KIND %O %A %B %P`).

Inside `git merge` the drivers see all three commits (ours = HEAD, theirs = the GITHEAD_<sha> git exports,
base = their merge base), so each one merges the whole workbench the same way — the logs' union replayed —
and writes its own file: board, state and log agree at once and `wb validate` passes without a manual step.
Elsewhere (a rebase, `git merge-file`) each driver merges its own file with the same rules.

Two branches that each added a task with the same id keep both: the later one (by created_at) is renumbered
to the next free id, deterministically, and every reference to it on its branch follows.

The board's archive (model/archive.py): segment files are named by their digest, so git merges both sides' new
segments as plain added files. In the merged log every `board.archive` event of either side comes after both
sides' other new events; each then seals only when its tasks are still exactly as it sealed them, else it is
void and its tasks stay on the board (the next write archives them again). Either way every task is on the
board or in exactly one referenced segment; a segment a void event wrote stays in the tree, referenced by no
board, and readers ignore it. Without the log (`merge_boards` alone) the references are united by file.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from workbench.model import reducer
from workbench.model.archive import highest_archived, holding, refs
from workbench.model.ids import task_number
from workbench.store.landing import added_id, pick, rename_event, rename_task

# the pick rule moved to store/landing.py (issue 29: the pending journal lands by it too); the names this
# module has always used for it
_append_theirs, _added_id, _rename_task = pick, added_id, rename_task

if TYPE_CHECKING:
    from workbench.store.eventlog import Tail

SIDES = ("ours", "theirs")
DERIVED_STATE = {"schema_version", "updated_at", "last_event", "counters", "session", "status",
                 "next_action_set"}  # issue 22: bookkeeping of when next_action was set
LIST_STATE = {"touched_files", "assumptions", "blockers"}


class MergeConflict(Exception):
    def __init__(self, conflicts: list[str]) -> None:
        super().__init__("; ".join(conflicts))
        self.conflicts = conflicts


def task_renames(base: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]],
                 theirs: dict[str, dict[str, Any]], floor: int = 0) -> dict[str, dict[str, str]]:
    """{side: {old id: new id}} for ids both sides added to different tasks (told apart by created_at); new ids
    are past `floor` too (the highest archived id)."""
    renames: dict[str, dict[str, str]] = {"ours": {}, "theirs": {}}
    collisions = sorted((tid for tid in set(ours) & set(theirs)
                         if tid not in base and ours[tid].get("created_at") != theirs[tid].get("created_at")),
                        key=task_number)
    taken = max([task_number(t) for t in (*base, *ours, *theirs)] + [floor])
    for tid in collisions:
        o, t = ours[tid], theirs[tid]
        key_o = (o.get("created_at", ""), json.dumps(o, sort_keys=True))
        key_t = (t.get("created_at", ""), json.dumps(t, sort_keys=True))
        taken += 1
        renames["theirs" if key_t > key_o else "ours"][tid] = f"T-{taken:03d}"
    return renames


def rename_board(board: dict[str, Any], m: dict[str, str]) -> dict[str, Any]:
    """The board with task ids renumbered by `m` (and the references to them)."""
    if not m:
        return board
    return {**board, "tasks": [_rename_task(t, m) for t in board.get("tasks", [])]}


def _adds(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["payload"]["task"]["id"]: e["payload"]["task"] for e in events
            if e["type"] == "task.add" and isinstance(e["payload"].get("task"), dict)}


def merge_events(base: list[dict[str, Any]], ours: list[dict[str, Any]], theirs: list[dict[str, Any]],
                 *, pick: bool = False, start: Tail | None = None, conflicts: list[str] | None = None
                 ) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """The union by event id — base first, then both sides' new events merged by cause, never by clock
    (`interleave`: each side's own order kept, a `done` after the other side's concurrent status changes of its
    task; what no order can keep is added to `conflicts`) — with colliding task ids renumbered, seq and prev
    rebuilt. `pick`: a rebase or cherry-pick
    applying one commit onto ours (see _append_theirs), also taken when base is not a prefix of ours.
    `start`: where the three lists begin — the end of the sealed segments the sides share, whose events are
    not passed (their seq and chain stay as sealed); the start of the log by default."""
    from workbench.store.eventlog import Tail, chain

    start = start or Tail(0, None, 0, 0)
    if picks(base, ours, pick=pick):
        return _append_theirs(ours, theirs, start, base=base)
    base_ids = {e["id"] for e in base}
    ours_new = [e for e in ours if e["id"] not in base_ids]
    seen = base_ids | {e["id"] for e in ours_new}
    theirs_new = [e for e in theirs if e["id"] not in seen]
    renames = task_renames(_adds(base), _adds(ours_new), _adds(theirs_new))
    ours_new = [rename_event(e, renames["ours"]) for e in ours_new]
    theirs_new = [rename_event(e, renames["theirs"]) for e in theirs_new]
    merged = interleave(ours_new, theirs_new, conflicts)
    # the board's archive (issue 20): each side sealed its segments from its own board; after every change of
    # both sides, each seals only if its tasks are still as it sealed them (else it is void: model/archive.py),
    # so no change of the other side ever lands on a task already sealed
    merged = [e for e in merged if e["type"] != "board.archive"] + [e for e in merged if e["type"] == "board.archive"]
    out = [dict(e) for e in base] + [dict(e) for e in merged]
    for e in out:
        e.pop("more", None)  # batches may interleave after a merge; every one of them is complete
        e.pop("seq", None)
        e.pop("prev", None)
    return chain(out, start), renames


def status_changes(event: dict[str, Any]) -> list[tuple[str, str]]:
    """(task id, status) for each task whose status `event` sets."""
    kind, p = event.get("type"), event.get("payload")
    if not isinstance(p, dict):
        return []
    fixed = {"task.start": "in_progress", "task.done": "done", "task.block": "blocked"}
    if kind in fixed and isinstance(p.get("id"), str):
        return [(p["id"], fixed[kind])]
    changes = p.get("changes")
    if kind == "task.set" and isinstance(p.get("id"), str) and isinstance(changes, dict) and "status" in changes:
        return [(p["id"], str(changes["status"]))]
    if kind == "human.edit" and p.get("file") == "board.json":
        return [(t["id"], str(t["status"])) for t in p.get("upsert") or []
                if isinstance(t, dict) and isinstance(t.get("id"), str) and "status" in t]
    return []


def interleave(ours: list[dict[str, Any]], theirs: list[dict[str, Any]],
               conflicts: list[str] | None = None) -> list[dict[str, Any]]:
    """Both sides' new events in one order, by cause and never by clock (a wrong clock cannot lose a change):

    - each side's own order is kept (it is the order its writes happened in);
    - between the sides, ours (the branch checked out) first, then theirs — independent of every timestamp, and
      ours' committed lines keep their seqs: git merges board.json trivially when only ours changed it, and the
      board must then still agree with the merged log (a `merge --squash` of a branch that only added notes);
    - except that an event setting a task `done` waits until the other side's status changes of that task are
      placed, so a concurrent start, block or reopen on the other branch never undoes a `done` (one on the
      same branch after its `done` still does: that is its own later change).
    When both sides' next events are such dones (each branch changed the task the other finished, after its own
    done), no order keeps both: the first side's goes first, and `conflicts` names the task for a person."""
    first, second = ours, theirs  # ours' committed lines keep their places: a file git merges trivially (the
    #                               board when theirs never changed it) stays true to the merged log
    later = [_nondone_last(first), _nondone_last(second)]  # task id -> index of its last non-done change
    sides, at, out = (first, second), [0, 0], []
    while at[0] < len(first) or at[1] < len(second):
        ready = [at[k] < len(sides[k]) and not _waits(sides[k][at[k]], later[1 - k], at[1 - k]) for k in (0, 1)]
        k = 1 if ready[1] and not ready[0] else 0  # neither: both wait (one side exhausted never waits)
        if not ready[k] and conflicts is not None:
            for tid, status in status_changes(sides[k][at[k]]):
                message = (f"{tid}: done on one branch, its status changed on the other, and each branch changed "
                           f"after its own done a task the other finished: set {tid}'s status in board.json")
                if status == "done" and later[1 - k].get(tid, -1) >= at[1 - k] and message not in conflicts:
                    conflicts.append(message)
        out.append(sides[k][at[k]])
        at[k] += 1
    return out


def _nondone_last(events: list[dict[str, Any]]) -> dict[str, int]:
    last: dict[str, int] = {}
    for n, event in enumerate(events):
        for tid, status in status_changes(event):
            if status != "done":
                last[tid] = n
    return last


def _waits(event: dict[str, Any], other_later: dict[str, int], other_at: int) -> bool:
    """Is `event` a `done` of a task the other side still changes the status of (at or after `other_at`)?"""
    return any(status == "done" and other_later.get(tid, -1) >= other_at for tid, status in status_changes(event))


def picks(base: list[dict[str, Any]], ours: list[dict[str, Any]], *, pick: bool = False) -> bool:
    """Whether `merge_events` appends theirs after ours as a pick does: a rebase or cherry-pick (`pick`), or a
    merge whose base is not a prefix of ours — ours renumbered what the base has (an earlier merge renamed a task
    of the other side's, which the other side, and so this base, still numbers its own way). The base's tasks
    then carry theirs' ids, and `renames["theirs"]` maps them to the merged ones."""
    return pick or not _is_prefix(base, ours)


def _is_prefix(base: list[dict[str, Any]], ours: list[dict[str, Any]]) -> bool:
    return len(base) <= len(ours) and all(b["id"] == o["id"] for b, o in zip(base, ours, strict=False))


def replay(events: list[dict[str, Any]]) -> reducer.Docs:
    docs = reducer.fold(events, empty_ts="1970-01-01T00:00:00.000Z")
    assert docs is not None
    return docs


# -- board --------------------------------------------------------------------------------------------
def merge_boards(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any],
                 renames: dict[str, dict[str, str]] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Three-way merge by task id, field by field. Returns (merged board, conflicts naming task and field)."""
    b = {t["id"]: t for t in base.get("tasks", [])}
    sides = {"ours": {t["id"]: t for t in ours.get("tasks", [])},
             "theirs": {t["id"]: t for t in theirs.get("tasks", [])}}
    if renames is None:
        renames = task_renames(b, {k: v for k, v in sides["ours"].items() if k not in b},
                               {k: v for k, v in sides["theirs"].items() if k not in b},
                               max(highest_archived(side) for side in (base, ours, theirs)))
    for side in SIDES:
        sides[side] = {renames[side].get(k, k): _rename_task(v, renames[side]) for k, v in sides[side].items()}
    o, t = sides["ours"], sides["theirs"]
    conflicts: list[str] = []
    merged: dict[str, dict[str, Any]] = {}
    for tid in [*b, *[k for k in o if k not in b], *[k for k in t if k not in b and k not in o]]:
        bt, ot, tt = b.get(tid), o.get(tid), t.get(tid)
        if bt is not None and (ot is None or tt is None):
            survivor = ot if ot is not None else tt
            sealed = holding(ours if ot is None else theirs, tid) is not None  # archived there, not removed
            if survivor is not None and survivor != bt and not sealed:
                conflicts.append(f"{tid}: removed on one branch and changed on the other")
                merged[tid] = survivor
            continue
        if ot is None or tt is None:
            merged[tid] = ot if ot is not None else tt  # type: ignore[assignment]
            continue
        task: dict[str, Any] = {}
        for key in [*ot, *[k for k in tt if k not in ot]]:
            bv, ov, tv = (bt or {}).get(key, _MISSING), ot.get(key, _MISSING), tt.get(key, _MISSING)
            if key == "updated_at":
                value = max(str(ov if ov is not _MISSING else ""), str(tv if tv is not _MISSING else ""))
            elif ov == tv or tv == bv:
                value = ov
            elif ov == bv:
                value = tv
            elif key == "status" and "done" in (ov, tv):  # a done is never undone by a concurrent change
                value = "done"
            else:
                conflicts.append(f"{tid}.{key}: changed on both branches ({_show(ov)} here, {_show(tv)} there)")
                value = ov
            if value is not _MISSING:
                task[key] = value
        merged[tid] = task
    added = [k for k in merged if k not in b]
    order = [k for k in b if k in merged] + sorted(
        added, key=lambda k: (merged[k].get("created_at", ""), task_number(k)))
    board: dict[str, Any] = {"schema_version": ours.get("schema_version", 1),
                             "last_event": max(int(ours.get("last_event", 0)), int(theirs.get("last_event", 0)))}
    segments = merge_archives(ours, theirs)
    if segments:
        board["archive"] = segments
    board["tasks"] = [merged[k] for k in order]
    return board, conflicts


def merge_archives(ours: dict[str, Any], theirs: dict[str, Any]) -> list[dict[str, Any]]:
    """The union of both boards' archive references by file, ours first (segment files are named by their
    digest, so the same name is the same bytes): a merge keeps every segment either side sealed."""
    mine = refs(ours)
    have = {r.get("file") for r in mine}
    return [*mine, *(r for r in refs(theirs) if r.get("file") not in have)]


_MISSING: Any = object()


def _show(value: Any) -> str:
    return "absent" if value is _MISSING else json.dumps(value, ensure_ascii=False)[:40]


# -- state.md --------------------------------------------------------------------------------------------
def split_entries(body: str) -> tuple[str, list[str]]:
    """(preamble, decision-log entries), an entry being a `### ` heading and the text under it."""
    parts = re.split(r"(?m)^(?=### )", body)
    return parts[0], [p for p in parts[1:]]


def merge_bodies(base: str, ours: str, theirs: str) -> str:
    pre, base_entries = split_entries(base)
    pre_o, ours_entries = split_entries(ours)
    _pre_t, theirs_entries = split_entries(theirs)
    known = set(base_entries)
    new = [e for e in ours_entries if e not in known]
    new += [e for e in theirs_entries if e not in known and e not in new]
    new.sort(key=lambda e: e.splitlines()[0])  # headings start with the entry's timestamp
    kept = [e for e in ours_entries if e in known]
    entries = kept + new
    return pre_o + "".join(e if e.endswith("\n") else e + "\n" for e in entries)


def _merge_memory(base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any]:
    """state.md `memory` (issue 22) by item id: an item either side added is kept, one either side dropped (an
    assumption taken out) goes, and one changed on one side only (a `wb verify`) takes that side's change."""
    def ids(items: list[Any]) -> dict[str, Any]:
        return {str(i.get("id")): i for i in items if isinstance(i, dict)}

    b, o, t = ids(base), ids(ours), ids(theirs)
    out = []
    for key in [*o, *[k for k in t if k not in o]]:
        if (key in b) and (key not in o or key not in t):
            continue  # dropped on one side
        ov, tv = o.get(key), t.get(key)
        out.append(tv if ov is None or (ov == b.get(key) and tv is not None) else ov)
    return out


def merge_state(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any],
                renames: dict[str, dict[str, str]]) -> tuple[dict[str, Any], list[str]]:
    """Key by key. Returns (merged frontmatter without the derived keys' final values, conflicts)."""
    conflicts: list[str] = []
    o = dict(ours)
    t = dict(theirs)
    for side, data in (("ours", o), ("theirs", t)):
        if data.get("active_task_id") in renames[side]:
            data["active_task_id"] = renames[side][data["active_task_id"]]
    merged: dict[str, Any] = {}
    for key in [*o, *[k for k in t if k not in o]]:
        bv, ov, tv = base.get(key, _MISSING), o.get(key, _MISSING), t.get(key, _MISSING)
        if key in LIST_STATE and isinstance(ov, list) and isinstance(tv, list):
            bl = bv if isinstance(bv, list) else []
            value: Any = [x for x in ov if x in tv or x not in bl] + [x for x in tv if x not in bl and x not in ov]
        elif key == "memory" and isinstance(ov, list) and isinstance(tv, list):
            value = _merge_memory(bv if isinstance(bv, list) else [], ov, tv)
        elif ov == tv or tv == bv:
            value = ov
        elif ov == bv:
            value = tv
        elif key in DERIVED_STATE:
            value = ov
        else:
            conflicts.append(f"state.md: {key}: changed on both branches ({_show(ov)} here, {_show(tv)} there)")
            value = ov
        if value is not _MISSING:
            merged[key] = value
    return merged, conflicts
