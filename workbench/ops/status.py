"""`wb status` as data: the active task, or else the tasks ready to start; the next action, blockers, the
session and the board counts.

The payload is built section by section (`SECTIONS`): each section reads the loaded workbench (`View`) and
returns its keys, in the order `wb status --json` prints them. A feature that adds to the status adds a
section function to the list (and its keys to docs/json.md); nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable

from workbench.store.workbench import Loaded, Workbench

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

STATUSES = ("todo", "in_progress", "blocked", "done", "cancelled")
READY_SHOWN = 3  # the ready tasks `wb status` names: enough to choose from, few enough to stay small
# what `wb init` records (ops/init.py NEXT_ACTION, checked equal by a test): a next action nobody has set
INIT_NEXT_ACTION = "Add the first task: wb task add TITLE"


class View:
    """What every section reads: the workbench, as loaded once for this status. (A plain class: dataclasses
    would import inspect and ast on the start-up path of `wb status`.)"""

    __slots__ = ("wb", "loaded")

    def __init__(self, wb: Workbench, loaded: Loaded) -> None:
        self.wb = wb
        self.loaded = loaded

    @property
    def state(self) -> dict[str, Any]:
        return self.loaded.docs.state

    @property
    def tasks(self) -> list[dict[str, Any]]:
        tasks: list[dict[str, Any]] = self.loaded.docs.board["tasks"]
        return tasks


def clip(text: str, width: int = 80) -> str:
    """A title as a list of choices shows it: one line, at most `width` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def ready_tasks(tasks: list[dict[str, Any]], board: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The tasks one can work on now, the highest priority first (0 first; absent: 2), then in board order — the
    one rule behind `wb task next`, status's ready line and its derived next action, prime and the board's ready
    mark: todo, every task it depends on done (on the board, or done and archived: `board` holds the archive's
    references), no child of it still open (an epic is finished by its children first), and, for a review, the
    task it reviews done (issue 31)."""
    from workbench.model.archive import archived_done

    done = {t.get("id") for t in tasks if t.get("status") == "done"}
    parents = {t.get("parent") for t in tasks if t.get("parent") and t.get("status") not in ("done", "cancelled")}
    ready = [t for t in tasks if t.get("status", "todo") == "todo"
             and all(d in done or archived_done(board, d) for d in t.get("depends_on") or [])
             and t.get("id") not in parents
             and (t.get("kind") != "review" or not t.get("reviews") or t["reviews"] in done
                  or archived_done(board, str(t["reviews"])))]
    return sorted(ready, key=_priority)  # stable: board order among equals


def _priority(task: dict[str, Any]) -> int:
    p = task.get("priority", 2)
    return p if isinstance(p, int) else 2


def waiting_on(task: dict[str, Any], tasks: list[dict[str, Any]], board: dict[str, Any] | None = None, *,
               statuses: dict[Any, str] | None = None) -> list[str]:
    """The dependencies of `task` that are not done yet, as `T-002 (blocked)`: the rule `wb task start|done`
    enforce (model/dependencies.unmet_dependencies). For many tasks, pass `statuses` (`task_statuses(tasks)`)."""
    from workbench.model.dependencies import unmet_dependencies

    return [f"{d} ({s})" for d, s in unmet_dependencies(board, task, tasks, statuses=statuses)]


def next_action_set(state: dict[str, Any], tasks: list[dict[str, Any]] | None = None) -> bool:
    """Whether someone set next_action (`wb set next_action=…`) and it still holds; wb init's placeholder and ""
    are unset, and so is one that names only tasks now closed (`stale_next_action`)."""
    value = state.get("next_action") or ""
    if not value.strip() or value == INIT_NEXT_ACTION:
        return False
    return tasks is None or stale_next_action(state, tasks) is None


def stale_next_action(state: dict[str, Any], tasks: list[dict[str, Any]]) -> str | None:
    """Why the next_action set by hand no longer holds (issue 22), or None while it holds. One that names tasks
    holds until every task it names is done or cancelled (or gone from the board, archived when done). One that
    names none holds while what was going on when it was set goes on (`next_action_set`, recorded by the
    reducer): the same active task, in the same status, and the same yield waiting."""
    import re

    named = re.findall(r"\bT-\d{3,}\b", str(state.get("next_action") or ""))
    status = {t.get("id"): t.get("status") for t in tasks}
    if named:
        closed = [tid for tid in named if status.get(tid, "done") in ("done", "cancelled")]
        if len(closed) < len(named):
            return None
        return ", ".join(f"{tid} is {status.get(tid, 'archived')}" for tid in dict.fromkeys(closed))
    then = state.get("next_action_set")
    if not isinstance(then, dict):
        return None  # set before wb recorded when (state.md version 1), or by wb init: nothing to compare
    was, now = then.get("active_task_id"), state.get("active_task_id")
    if was and status.get(was) != then.get("task_status"):
        return f"{was} was {then.get('task_status') or 'active'} then and is {status.get(was, 'archived')} now"
    if was and was != now:
        return f"the active task was {was} then and is {now or 'none'} now"
    if not was and now:
        return f"{now} became the active task since"
    session = state.get("session")
    pending = session.get("pending") if isinstance(session, dict) else None
    waiting = pending.get("yield_id") if isinstance(pending, dict) else None
    if then.get("yield_id") and then.get("yield_id") != waiting:
        return "the harness yield waiting then has been answered"
    return None


def derived_next_action(active: dict[str, Any] | None, tasks: list[dict[str, Any]],
                        ready: list[dict[str, Any]], session: Any = None) -> str:
    """The next action the board implies, for as long as nobody has set one (issue 22), in this order: the active
    task in progress, a harness yield waiting for an answer, blocked work, then the ready queue."""
    if active is not None and active.get("status") == "in_progress":
        return f"Finish {active['id']} {active.get('title', '')}: `wb task done {active['id']}` runs its acceptance"
    pending = session.get("pending") if isinstance(session, dict) else None
    if isinstance(pending, dict):  # a session waits for an answer: nothing else moves until it has one
        command = pending.get("command") or "wb resume"
        return f"Answer the waiting harness session ({pending.get('reason', '')}): `{command}`"
    blocked = active if active is not None and active.get("status") == "blocked" else None  # the work in hand
    if blocked is not None:
        return (f"{blocked['id']} is blocked ({blocked.get('blocked_reason') or 'no reason given'}): unblock it, "
                + (f"or start {ready[0]['id']}: `wb task start {ready[0]['id']}`" if ready else "or add a task"))
    if ready:
        first = ready[0]  # as `wb task next` picks: priority, then board order
        return f"Start {first['id']} {first.get('title', '')}: `wb task start {first['id']}`"
    if not tasks:
        return INIT_NEXT_ACTION
    todo = [t for t in tasks if t.get("status", "todo") == "todo"]
    if todo:
        return f"No task is ready: {todo[0]['id']} waits on {', '.join(waiting_on(todo[0], tasks))}"
    open_ = [t for t in tasks if t.get("status") in ("in_progress", "blocked")]
    if open_:
        return f"No todo task is left: finish or unblock {', '.join(t['id'] for t in open_[:READY_SHOWN])}"
    return "Every task is closed: add the next one with `wb task add TITLE`"


def next_task(tasks: list[dict[str, Any]], board: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, str]:
    """The ready task of the highest priority (0 first; absent: 2), the first in board order among equals, and
    why there is none when there is none (`wb task next`)."""
    ready = ready_tasks(tasks, board)
    if ready:
        return ready[0], ""
    if not tasks:
        return None, "the board is empty: add a task with `wb task add TITLE`"
    todo = [t for t in tasks if t.get("status", "todo") == "todo"]
    if todo:
        return None, f"no task is ready: {todo[0]['id']} waits on {', '.join(waiting_on(todo[0], tasks, board))}"
    return None, "no todo task is left"


# -- the sections, in the order of `wb status --json` ----------------------------------------------------
def _core(view: View) -> dict[str, Any]:
    state, tasks = view.state, view.tasks
    active = next((t for t in tasks if t.get("id") == state.get("active_task_id")), None) \
        if state.get("active_task_id") else None
    ready = ready_tasks(tasks, view.loaded.docs.board)
    shown = [{"id": t["id"], "title": clip(t.get("title", ""))} for t in ready[:READY_SHOWN]]
    is_set = next_action_set(state, tasks)
    stale = None if is_set or not next_action_set(state) else stale_next_action(state, tasks)
    derived = "" if is_set else derived_next_action(active, tasks, ready, state.get("session"))
    return {
        "workbench": str(view.wb.root),
        "status": state.get("status"),
        "active_task": active,
        # todo with every dependency done, in board order: where to start when no task is active
        "ready": {"tasks": shown, "total": len(ready),
                  "command": f"wb task start {ready[0]['id']}" if ready else None},
        "next_action": state.get("next_action", "") if is_set else derived,
        "next_action_source": "set" if is_set else "derived",
        # issue 22: a next_action set by hand that no longer holds is dropped for the derived one, and said
        "stale_next_action": {"text": state.get("next_action", ""), "why": stale,
                              "set_at": (state.get("next_action_set") or {}).get("at"),
                              "event": (state.get("next_action_set") or {}).get("event")} if stale else None,
        "blockers": state.get("blockers", []),
        "assumptions": state.get("assumptions", []),
        "touched_files": state.get("touched_files", []),
        "counters": state.get("counters", {}),
    }


def _session(view: View) -> dict[str, Any]:
    from workbench.ops.yields import resume_hint  # the harness package is not on a write's path

    session = view.state.get("session")
    return {
        "session": session,
        "pending": session.get("pending") if isinstance(session, dict) else None,
        "resume": resume_hint(session),
    }


def _board(view: View) -> dict[str, Any]:
    counts = {s: 0 for s in STATUSES}
    for task in view.tasks:
        counts[task.get("status", "todo")] = counts.get(task.get("status", "todo"), 0) + 1
    from workbench.model.archive import refs

    archived = sum(r["tasks"] for r in refs(view.loaded.docs.board) if isinstance(r.get("tasks"), int))
    from workbench.model.proof import unproven_tasks

    return {"board": {"total": len(view.tasks), "by_status": counts, "archived": archived,
                      "unproven": unproven_tasks(view.tasks)}}


def _history(view: View) -> dict[str, Any]:
    wb, loaded = view.wb, view.loaded
    last = None
    if loaded.tail.seq:
        from workbench.store.eventlog import EventLog  # SQLite's log reads its last row as cheaply either way

        e = None
        if isinstance(wb.log, EventLog) and loaded.tail.good_size == 0:  # events.jsonl holds none: just sealed
            e = wb.log.last_sealed_event()
        if e is None or e.get("seq") != loaded.tail.seq:  # else read_after, which checks the chain to it
            events = wb.log.read_after(loaded.tail.seq - 1)
            e = events[-1] if events else None
        if e is not None:
            last = {"seq": e["seq"], "type": e.get("type"), "ts": e.get("ts"), "actor": e.get("actor")}
    return {
        "last_event": last,
        "unrecorded_human_edits": [e["file"] for e in loaded.human_edits],
        # acknowledged events not yet in .workbench/ (git is mid-operation) or taken from it by the user's git:
        # held in the git directory, written and committed by the next wb write (workbench.store.pending)
        "not_yet_written": waiting_writes(wb, loaded),
    }


# what ends the operation that defers wb's writes (Workbench.deferred's words): (command, the other way out)
_ENDS = {"a merge": ("git merge --continue", "git merge --abort"),
         "a rebase": ("git rebase --continue", "git rebase --abort"),
         "a cherry-pick": ("git cherry-pick --continue", "git cherry-pick --abort"),
         "a revert": ("git revert --continue", "git revert --abort"), "a bisect": ("git bisect reset", None)}


def waiting_writes(wb: Workbench, loaded: Loaded) -> dict[str, Any] | None:
    """Acknowledged events that are on no branch yet, only in the pending journal under the git directory
    (store/pending.py), with the one command that lands them (issue 29): {events, why, command, text,
    renumbered, refused}; None when there are none. `why`: the operation git is in (None: the next wb write
    lands them, `wb doctor --fix` now)."""
    own = [e for e in loaded.pending if e.get("type") != "task.renumber"]
    refused = [e for e in loaded.refused if not e.get("void")]
    journal = getattr(wb, "pending", None)  # the files backend's (SQLite has none)
    aside = journal.set_aside_count() if journal is not None else 0
    kept = journal.aside if journal is not None else None
    if not own and not refused:
        if not aside:
            return None
        return {"events": 0, "why": None, "command": None, "renumbered": {}, "refused": 0, "set_aside": aside,
                "text": f"{aside} acknowledged event(s) that no longer applied to this branch are kept in "
                        f"{kept} (read them, then remove the file)"}
    why = wb.deferred()
    moved = {e["payload"]["from"]: e["payload"]["to"] for e in loaded.pending if e.get("type") == "task.renumber"}
    moved = dict(sorted(moved.items(), key=lambda kv: (len(kv[0]), kv[0])))  # T-991 before T-1000
    if why is None:
        command = "wb doctor --fix"
        text = (f"{len(own)} acknowledged change(s) wait in the git directory: the next wb write lands them on "
                f"this branch (`{command}` does it now)")
    else:
        command, other = _ending(wb, why)
        text = (f"{len(own)} acknowledged change(s) wait in the git directory ({why}): they land at the next wb "
                f"write after `{command}`" + (f" (or `{other}`)" if other else ""))
    if moved:
        shown = list(moved.items())[:3]
        text += "; " + ", ".join(f"{old} lands as {new}" for old, new in shown) + (
            f" and {len(moved) - len(shown)} more" if len(moved) > len(shown) else "") + (
            " (the branch has its own task under that id)" if len(moved) == 1 else
            " (the branch has its own tasks under those ids)")
    if refused:
        text += f"; {len(refused)} no longer apply to this branch (the next write names them and keeps them aside)"
    if aside:
        text += f"; {aside} that no longer applied earlier are kept in {kept}"
    return {"events": len(own), "why": why, "command": command, "text": text, "renumbered": moved,
            "refused": len(refused), "set_aside": aside}


def _ending(wb: Workbench, why: str) -> tuple[str, str | None]:
    """The command that ends what defers wb's writes: the operation's own, or, on a detached HEAD, the switch
    back to the branch the reflog says HEAD left."""
    for op, ends in _ENDS.items():
        if why.startswith(op):
            return ends
    branch = None
    try:
        lines = (wb.git.git_dir / "logs" / "HEAD").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in reversed(lines):
        message = line.partition("\t")[2]
        if message.startswith("checkout: moving from "):
            source = message.removeprefix("checkout: moving from ").rsplit(" to ", 1)[0]
            if not all(c in "0123456789abcdef" for c in source) or len(source) < 7:
                branch = source
                break
    return f"git switch {branch or 'BRANCH'}", None


def _sync(view: View) -> dict[str, Any]:
    """issue 15: ahead/behind the last fetched remote state, and the claims held (state on its own ref only)."""
    return {"sync": _sync_part(view.wb, view.loaded.docs.board)}


def _sync_part(wb: Workbench, board: dict[str, Any]) -> dict[str, Any] | None:
    """issue 15: ahead/behind the last fetched remote state, and the claims held (state on its own ref only)."""
    if not wb.config["git"].get("ref"):
        return None  # without importing the sync module: the usual `wb status` stays as fast
    from workbench.ops.sync import sync_status

    return sync_status(wb, board)


# -- the handoff packet (issue 16): `wb status` points to the latest one and leads with its next action ----
def _handoff(view: View) -> dict[str, Any]:
    return {"handoff": latest_handoff(view.wb)}


def latest_handoff(wb: Workbench) -> dict[str, Any] | None:
    """{path, next_action, risks, describes} of .workbench/handoff.json, or None when none was written."""
    import json

    try:
        packet = json.loads((wb.paths.wb / "handoff.json").read_bytes())
        return {"path": ".workbench/handoff.md", "next_action": packet["next_action"],
                "risks": len(packet["risks"]), "describes": packet["describes"]["last_event"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- who may approve (issue 19): `approvals: any` is an opt-in for unattended pipelines, so it is said ----------
def _approvals(view: View) -> dict[str, Any]:
    return {"approvals": "any" if view.wb.config.get("approvals") == "any" else "human"}


# -- issue 19: commands that came through git and wait for `wb trust` (read, never run) ----------------------
def _trust(view: View) -> dict[str, Any]:
    from workbench.ops.trust import status_line

    return {"untrusted": status_line(view.wb, view.loaded.docs.board)}


# -- issue 22: remembered notes and assumptions a later commit made stale (ops/memory.py) --------------------
def _memory(view: View) -> dict[str, Any]:
    if not view.state.get("memory"):
        return {"memory": None}  # nothing remembered: no git asked, `wb status` as fast as before
    from workbench.ops.memory import summary

    return {"memory": summary(view.wb.root, view.state)}


SECTIONS: list[Callable[[View], dict[str, Any]]] = [_core, _session, _board, _history, _sync, _handoff,
                                                    _approvals, _trust, _memory]


def status_of(wb: Workbench) -> dict[str, Any]:
    return status_view(wb)[0]


def status_view(wb: Workbench) -> tuple[dict[str, Any], View]:
    """The status, and the loaded workbench it was built from (`wb prime` reads the board from it too)."""
    view = View(wb, wb.load(detect_human=True, need_body=False))
    data: dict[str, Any] = {}
    for section in SECTIONS:
        data.update(section(view))
    from workbench.ops.inbox import items  # issue 32: what waits for a person, read from the sections above

    data["inbox"] = items(data)
    return data, view


