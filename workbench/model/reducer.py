"""Events → documents. The only place that knows what an event does to state.md and board.json.

Every mutation is first expressed as events, then folded in here; `wb replay` folds the whole log from
empty with the same functions, which is why replay reproduces the snapshots exactly. Functions mutate the
documents in place (replay speed) and never read the clock or the disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from workbench.errors import Refused
from workbench.model.docs import BOARD_VERSION, STATE_VERSION, Docs
from workbench.model.eventtypes import HAND_EDIT_EVENTS, HARNESS_EVENTS, SYNC_EVENTS

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

EMPTY_BODY = "\n# Decision log\n"
COUNTERS = ("tasks_completed", "tasks_failed", "turns", "tool_calls", "tokens_consumed")
# Keys a human edit cannot set: wb derives them from the log.
DERIVED_STATE_KEYS = ("schema_version", "updated_at", "last_event")


def empty_docs(ts: str) -> Docs:
    state = {
        "schema_version": STATE_VERSION,
        "status": "idle",
        "updated_at": ts,
        "active_task_id": None,
        "next_action": "",
        "touched_files": [],
        "assumptions": [],
        "blockers": [],
        "counters": {name: 0 for name in COUNTERS},
        "last_event": 0,
        "session": None,
    }
    return Docs(state, EMPTY_BODY, {"schema_version": BOARD_VERSION, "last_event": 0, "tasks": []})


def find_task(board: dict[str, Any], task_id: str) -> dict[str, Any] | None:
    for task in board["tasks"]:
        if task.get("id") == task_id:
            return task
    return None


def _task(docs: Docs, task_id: str) -> dict[str, Any]:
    task = find_task(docs.board, task_id)
    if task is None:  # the event log names a task the board lacks: the log and snapshot disagree
        raise KeyError(f"event names unknown task {task_id}")
    docs.touched.add(task_id)
    return task


def _clear_blocker(docs: Docs, task_id: str) -> None:
    docs.state["blockers"] = [b for b in docs.state["blockers"] if not b.startswith(task_id + ": ")]


def _init(docs: Docs, ev: dict[str, Any]) -> bool:
    docs.state["next_action"] = ev["payload"].get("next_action", "")
    return True


def _task_add(docs: Docs, ev: dict[str, Any]) -> bool:
    task = dict(ev["payload"]["task"])
    docs.board["tasks"].append(task)
    docs.touched.add(str(task.get("id")))
    return True


def _status(docs: Docs, ev: dict[str, Any], status: str) -> dict[str, Any]:
    task = _task(docs, ev["payload"]["id"])
    task["status"] = status
    task["updated_at"] = ev["ts"]
    if status != "blocked":
        task.pop("blocked_reason", None)
        _clear_blocker(docs, task["id"])
    return task


def _task_start(docs: Docs, ev: dict[str, Any]) -> bool:
    task = _status(docs, ev, "in_progress")
    docs.state["active_task_id"] = task["id"]
    # -- scope contract & proof of done (issue 16): the HEAD the task started at, what `done` compares with
    if ev["payload"].get("head") and not task.get("start_head"):  # a restart keeps the first start's HEAD
        task["start_head"] = ev["payload"]["head"]
    return True


def _task_done(docs: Docs, ev: dict[str, Any]) -> bool:
    task = _status(docs, ev, "done")
    if ev["payload"].get("forced"):
        task["forced_done"] = True
    # -- scope contract & proof of done (issue 16): a compact proof on the task, the whole in the event
    if "head" in ev["payload"]:
        task["proof"] = proof_of(ev)
    docs.state["counters"]["tasks_completed"] += 1
    if docs.state["active_task_id"] == task["id"]:
        docs.state["active_task_id"] = None
    return True


def proof_of(ev: dict[str, Any]) -> dict[str, Any]:
    """What a task keeps of its task.done event: where the whole proof is (`event`), the HEAD it was done at,
    whether it was forced, each acceptance command's exit and digest, and the scope findings."""
    p = ev["payload"]
    proof: dict[str, Any] = {
        "event": ev["seq"],
        "head": p.get("head"),
        "forced": bool(p.get("forced")),
        "checks": [{"cmd": r.get("cmd", ""), "exit": r.get("exit", 0), "seconds": r.get("seconds", 0),
                    **({"sha256": r["sha256"]} if r.get("sha256") else {})} for r in p.get("acceptance") or []],
    }
    verdict = p.get("scope")
    if isinstance(verdict, dict):
        proof["scope_findings"] = [*verdict.get("forbidden", []), *verdict.get("findings", [])]
    if p.get("override"):
        proof["override"] = p["override"]
    return proof


def _task_block(docs: Docs, ev: dict[str, Any]) -> bool:
    task = _status(docs, ev, "blocked")
    reason = ev["payload"]["reason"]
    task["blocked_reason"] = reason
    _clear_blocker(docs, task["id"])
    docs.state["blockers"].append(f"{task['id']}: {reason}")
    return True


def _task_set(docs: Docs, ev: dict[str, Any]) -> bool:
    task = _task(docs, ev["payload"]["id"])
    for key, value in ev["payload"]["changes"].items():
        if value is None and key in ("description", "blocked_reason", "scope",  # scope: issue 16
                                     "priority", "labels", "parent", "assignee"):  # issue 22
            task.pop(key, None)
        else:
            task[key] = value
    task["updated_at"] = ev["ts"]
    return True


def _task_comment(docs: Docs, ev: dict[str, Any]) -> bool:
    """Issue 22: a comment on a task, kept on it with the event that made it."""
    task = _task(docs, ev["payload"]["id"])
    comment = {"event": ev["seq"], "ts": ev["ts"], "actor": ev["actor"], "text": ev["payload"]["text"]}
    task["comments"] = [*task.get("comments", []), comment]
    return True


def _note_add(docs: Docs, ev: dict[str, Any]) -> bool:
    p = ev["payload"]
    docs.append_body(note_entry(ev["ts"], ev["actor"], p["text"], p.get("about")))
    if p.get("about"):  # issue 22: a note about paths is remembered with the commit it was written at
        _remember(docs, ev, "note", p["text"], p["about"])
    return False


def _remember(docs: Docs, ev: dict[str, Any], kind: str, text: str, about: dict[str, Any]) -> None:
    """A memory item (issue 22): `text` is about `about["paths"]`, as of the code commit `about["commit"]`."""
    item = {"id": f"M-{ev['seq']}", "kind": kind, "text": text[:4000], "about": list(about["paths"]),
            "commit": about.get("commit"), "at": ev["ts"]}
    docs.state["memory"] = [*docs.state.get("memory", []), item]


def _memory_verify(docs: Docs, ev: dict[str, Any]) -> bool:
    """`wb verify M-…` (issue 22): the item holds again as of `commit`; who said so and when is kept on it."""
    p = ev["payload"]
    memory = [dict(m) for m in docs.state.get("memory", [])]
    for item in memory:
        if item["id"] == p["id"]:
            item["commit"] = p.get("commit")
            item["verified"] = {"at": ev["ts"], "actor": ev["actor"], "event": ev["seq"]}
            break
    else:
        raise KeyError(f"memory.verify names unknown item {p['id']}")
    docs.state["memory"] = memory
    return False


def forget_dropped(docs: Docs) -> None:
    """An assumption taken out of `assumptions` takes its memory item with it."""
    memory = docs.state.get("memory")
    if memory:
        held = set(docs.state.get("assumptions") or [])
        docs.state["memory"] = [m for m in memory if m["kind"] != "assumption" or m["text"] in held]


def note_entry(ts: str, actor: str, text: str, about: dict[str, Any] | None = None) -> str:
    if about:  # the paths it is about, and the commit, for the person reading the decision log
        where = ", ".join(str(p) for p in about.get("paths") or [])
        at = f" at {str(about['commit'])[:12]}" if about.get("commit") else ""
        return f"\n### {ts} · {actor}\n\n{text.strip()}\n\n_About: {where}{at}_\n"
    return f"\n### {ts} · {actor}\n\n{text.strip()}\n"


def _state_set(docs: Docs, ev: dict[str, Any]) -> bool:
    p = ev["payload"]
    changes = p["changes"]
    docs.state.update(changes)
    if "next_action" in changes:
        _next_action_set(docs, ev)
    about = p.get("about")
    if about:  # issue 22: the assumptions this write added are about these paths
        for text in about.get("items") or []:
            _remember(docs, ev, "assumption", text, about)
    if "assumptions" in changes:
        forget_dropped(docs)
    return False


def _next_action_set(docs: Docs, ev: dict[str, Any]) -> None:
    """Issue 22: when next_action was set by hand, and what was going on then (the active task and its status,
    a waiting yield): `wb status` shows it stale once that has changed."""
    state = docs.state
    active = state.get("active_task_id")
    task = find_task(docs.board, active) if active else None
    session = state.get("session")
    pending = session.get("pending") if isinstance(session, dict) else None
    state["next_action_set"] = {"at": ev["ts"], "event": ev["seq"], "active_task_id": active,
                                "task_status": task.get("status") if task else None,
                                "yield_id": pending.get("yield_id") if isinstance(pending, dict) else None}


def _human_edit(docs: Docs, ev: dict[str, Any]) -> bool:
    p = ev["payload"]
    if p["file"] == "state.md":
        for key in p.get("removed", []):
            docs.state.pop(key, None)
        docs.state.update(p.get("changes", {}))
        if "next_action" in p.get("changes", {}) and "next_action_set" not in p.get("changes", {}):
            _next_action_set(docs, ev)  # issue 22: set by hand in an editor is set by hand
        if "body" in p:
            docs.body = p["body"]
        return False
    removed = set(p.get("remove", []))
    upserts = {t["id"]: t for t in p.get("upsert", [])}
    tasks = []
    for task in docs.board["tasks"]:
        if task["id"] in removed:
            continue
        tasks.append(dict(upserts.pop(task["id"])) if task["id"] in upserts else task)
    tasks.extend(dict(t) for t in upserts.values())
    docs.touched.update(t.get("id") for t in p.get("upsert", []))
    if "order" in p:
        position = {tid: i for i, tid in enumerate(p["order"])}
        tasks.sort(key=lambda t: position.get(t["id"], len(position)))
    docs.board["tasks"] = tasks
    return True


def _migration_apply(docs: Docs, ev: dict[str, Any]) -> bool:
    """`wb migrate` rewrote snapshots in a new format. The event carries each rewritten document as migrated
    (less the keys apply() derives), so a replay reproduces it whatever the older events folded into."""
    import copy

    p = ev["payload"]
    if "state" in p:
        docs.state = copy.deepcopy(p["state"])
    if "body" in p:
        docs.body = p["body"]
    if "board" in p:
        docs.board = copy.deepcopy(p["board"])
        docs.touched.add(None)  # type: ignore[arg-type]  # the whole board is new: checked and encoded whole
        return True
    return False


# -- sync and claims (issue 15; model/claims.py) ----------------------------------------------------------
def _task_claim(docs: Docs, ev: dict[str, Any]) -> bool:
    from workbench.model.claims import fold_claim

    return fold_claim(_task(docs, ev["payload"]["id"]), ev)


# -- the board's archive (issue 20; model/archive.py) ---------------------------------------------------------
def _board_archive(docs: Docs, ev: dict[str, Any]) -> bool:
    from workbench.model.archive import fold_archive

    sealed = fold_archive(docs.board, ev["payload"])
    if sealed is None:
        return False  # void: its tasks stay on the board (see model/archive.py)
    docs.sealed[sealed[0]] = sealed[1]
    return True


def _task_renumber(docs: Docs, ev: dict[str, Any]) -> bool:
    return False  # a record for `wb task show OLD`: the events already name the task by its new id


_SYNC_REDUCERS: dict[str, Callable[[Docs, dict[str, Any]], bool]] = {
    "task.claim": _task_claim, "task.renumber": _task_renumber}
_RENEWING = ("task.start", "task.done", "task.block", "task.set")
assert set(_SYNC_REDUCERS) == SYNC_EVENTS


def _renew_claim(docs: Docs, ev: dict[str, Any]) -> None:
    task = find_task(docs.board, ev["payload"].get("id", ""))
    if task is not None and "claim" in task:
        from workbench.model.claims import renew

        renew(task, ev)


_HARNESS_TYPES = HARNESS_EVENTS

REDUCERS: dict[str, Callable[[Docs, dict[str, Any]], bool]] = {
    "workbench.init": _init,
    "task.add": _task_add,
    "task.start": _task_start,
    "task.done": _task_done,
    "task.block": _task_block,
    "task.set": _task_set,
    "task.comment": _task_comment,
    "note.add": _note_add,
    "state.set": _state_set,
    "memory.verify": _memory_verify,
    "human.edit": _human_edit,
    "migration.apply": _migration_apply,
    # agent hooks (issue 13 §3): a change to .workbench/ found during a coding agent's turn, folded as a hand
    # edit is (its payload already holds the agent's rules applied: store/spool.py emit_agent_edit)
    "agent.edit": _human_edit,
    **_SYNC_REDUCERS,
    "board.archive": _board_archive,
}


# -- the handoff packet (issue 16): `handoff.write` records that wb wrote .workbench/handoff.md and
# handoff.json (their digest); it changes neither state.md nor board.json.
def _handoff_write(docs: Docs, ev: dict[str, Any]) -> bool:
    return False


REDUCERS["handoff.write"] = _handoff_write


# -- issue 19: `config.edit` records a change of config.yaml (no snapshot holds config); `agent.edit_refused`
# records an agent's edit of board.json that was refused (board.json went back to what the log folds to).
# Both change nothing here; being reducers, no agent hook can spool one (store/spool.py folds no reducer's type).
def _record_only(docs: Docs, ev: dict[str, Any]) -> bool:
    return False


for _type in HAND_EDIT_EVENTS:
    REDUCERS[_type] = _record_only


def _harness(docs: Docs, ev: dict[str, Any]) -> bool:
    from workbench.model.session import fold

    fold(docs.state, ev)
    return False


def stamp_only(type_: str) -> bool:
    """Whether folding an event of this type changes nothing but state.md's updated_at and last_event (no reducer
    reads it: an agent's tool call, say). A fold may then take the event's stamp for the whole event."""
    return type_ not in REDUCERS and type_ not in _HARNESS_TYPES


def apply(docs: Docs, ev: dict[str, Any], *, board_from: int = 0) -> bool:
    """Fold one event into `docs`. Events at or before `board_from` were already folded into the board (it
    is written only when it changes, so its `last_event` may lag state.md's). Returns whether the board
    changed."""
    reducer = REDUCERS.get(ev["type"]) or (_harness if ev["type"] in _HARNESS_TYPES else None)
    if reducer is not None and reducer is not _task_add and names_sealed(docs, ev):
        # the task was archived — sealed — before this event, as a rebase puts it when the branch it rebases
        # onto archived a task the rebased commits still change (wb refuses such a change; a rebase cannot ask):
        # void, as a board.archive of tasks changed since is void (model/archive.py); the event stays in the log
        reducer = _record_only
    if ev["seq"] <= board_from and reducer is not None:
        # A crash between the board write and the state write: only the state.md side is still to fold.
        # Fold into a throwaway copy of the board (this path runs once, on recovery).
        board_copy, sealed = docs.board, docs.sealed
        docs.board = {**board_copy, "tasks": [dict(t) for t in board_copy["tasks"]]}
        docs.sealed = {}  # a segment the board already references is on disk already
        try:
            reducer(docs, ev)
        finally:
            docs.board, docs.sealed = board_copy, sealed
        changed = False
    else:
        changed = reducer(docs, ev) if reducer is not None else False
        if changed and ev["type"] in _RENEWING:
            _renew_claim(docs, ev)
    docs.state["updated_at"] = ev["ts"]
    docs.state["last_event"] = ev["seq"]
    if changed:
        docs.board["last_event"] = ev["seq"]
    return changed


def names_sealed(docs: Docs, ev: dict[str, Any]) -> bool:
    """Whether `ev` is a task event naming a task the board's archive holds (and the board does not)."""
    payload = ev.get("payload")
    task_id = payload.get("id") if isinstance(payload, dict) and ev["type"].startswith("task.") else None
    if not isinstance(task_id, str) or find_task(docs.board, task_id) is not None:
        return False
    from workbench.model.archive import holding

    return holding(docs.board, task_id) is not None


def fold(events: Iterable[dict[str, Any]], empty_ts: str | None = None) -> Docs | None:
    """The documents the events rebuild from empty (stamped with the first event's time), as `wb replay`,
    `wb init` and a merge rebuild them; for no events, None (or the empty documents stamped `empty_ts`). An
    event that cannot be applied is Refused, naming its seq."""
    return fold_more(empty_docs(empty_ts) if empty_ts is not None else None, events)


def fold_more(docs: Docs | None, events: Iterable[dict[str, Any]]) -> Docs | None:
    """Go on folding `events` into `docs` (a fold of the events before them; None: none yet — the first event
    then stamps the empty documents). Refused, naming its seq, for an event that cannot be applied."""
    for event in events:
        if docs is None:
            docs = empty_docs(event["ts"])
        try:
            apply(docs, event)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as err:
            raise Refused(f"events.jsonl: seq {event.get('seq')} cannot be replayed ({err})") from None
    return docs
