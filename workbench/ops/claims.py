"""`wb task claim`: give a task to one agent across every clone.

A claim is a `task.claim` event committed on the state ref, and it is won only when the commit that holds it is
published: pushed to the remote (whose ref update is the compare-and-swap), or — without a remote — moved onto
the shared local ref by `git update-ref REF NEW OLD` (the worktrees of one clone). A lost race fetches, merges
with the remote's state first (ops/sync.py), where the fold finds the other agent's claim ahead of ours
(model/claims.py: a claim on a task held unexpired is void) and refuses, exit 6, naming who holds it and until
when. The lease (default 1 h) is renewed by writes on the task; once it expires another agent may take the task
over, and the claim records whom it took it from.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from workbench.errors import Busy, GitError, NotFound, Refused
from workbench.model import ids, reducer
from workbench.model.claims import DEFAULT_LEASE_S, holder, seconds_between
from workbench.ops import sync as syncop

if TYPE_CHECKING:
    from workbench.store.workbench import Workbench

ATTEMPTS = 12


def claim(wb: Workbench, task_id: str, *, agent: str | None = None, lease_s: int = DEFAULT_LEASE_S,
          remote: str | None = None) -> dict[str, Any]:
    """Claim `task_id` for `agent` (see the module docstring). Returns the claim with `commit`, `published`
    (pushed, or on the shared local ref) and `attempts`."""
    agent = syncop.agent_name(agent)
    found = syncop.state_ref(wb)
    if found is None:  # state on the user's branch: nothing to race with but this worktree
        result = _record(wb, task_id, agent, lease_s)
        storage = getattr(wb, "storage", None)
        if storage is not None:  # store/sqlitedb.py: no branch, no wb sync to share it
            result["warnings"] = [f"kept in SQLite: this claim holds for the wb processes that use "
                                  f"{storage.path} only (claims are not shared with clones)"]
        else:
            result["warnings"] = ["state is recorded on your branch: this claim holds in this worktree only "
                                  "(`wb init --ref wb-state` shares claims across worktrees and clones)"]
        return result
    ref, branch = found
    # "none": this clone's worktrees decide, by the shared ref's compare-and-swap (the CLI's --remote none)
    remote = None if remote == "none" else remote or syncop.default_remote(wb, branch)
    emitted = False
    for attempt in range(1, ATTEMPTS + 1):
        if remote is not None:
            report = syncop.sync(wb, remote)
            published = report.local is not None and report.local == report.remote_commit
        else:
            syncop.commit_worktree(wb)
            with wb.lock():
                syncop.integrate(wb, ref, None)
            published = True
        task = _board_task(wb, task_id)
        held = task.get("claim") if isinstance(task.get("claim"), dict) else None
        if emitted and published and held is not None and held.get("agent") == agent:
            return {**held, "id": task_id, "commit": wb.git.ref_sha(ref), "published": True, "attempts": attempt}
        result = _record(wb, task_id, agent, lease_s)
        emitted = True
        if result["commit"] is None:
            continue  # another worktree moved the state ref first: merge it, and look again
        if remote is None:
            return {**result, "published": True, "attempts": attempt}
        fetched = wb.git.ref_sha(syncop.tracking_ref(remote, branch))
        if wb.git.push_branch(remote, result["commit"], branch) is None:
            wb.git.update_ref(syncop.tracking_ref(remote, branch), result["commit"], fetched)
            return {**result, "published": True, "attempts": attempt}
        time.sleep(0.01 * attempt)  # someone pushed first: the sync above merges theirs ahead of ours
    raise Busy(f"could not publish the claim of {task_id} ({ATTEMPTS} attempts: the remote kept moving); "
               "run `wb task claim` again")


def _board_task(wb: Workbench, task_id: str) -> dict[str, Any]:
    task = reducer.find_task(wb.load(detect_human=False, need_body=False).docs.board, task_id)
    if task is None:
        raise NotFound(f"no task {task_id} on the board (see `wb task list`)")
    return task


def seen_leases(wb: Workbench, board: dict[str, Any], now: str | None = None) -> dict[str, str]:
    """{task id: when this clone first saw its lease} (store/leases.py), recording the leases new to it."""
    from workbench.store.leases import first_seen

    return first_seen(wb.git.git_dir, board, now or ids.utc_now())


def _record(wb: Workbench, task_id: str, agent: str, lease_s: int) -> dict[str, Any]:
    """The claim event, committed locally; Busy when another agent holds the task unexpired — as this clone
    saw the lease, on its own clock (model/claims.py `observed_until`), not as the holder's clock stamped it.
    Refused, recording nothing, where wb holds its writes instead of committing them (HEAD detached, git
    mid-operation): a claim is won by its commit, and a held one would land later as a claim its agent was told
    it did not win."""
    held_back = wb.deferred()
    if held_back is not None:
        raise Refused(f"{task_id} not claimed: {held_back}, and a claim is won by its commit; claim it again once "
                      "HEAD is on a branch and git's operation is over")
    with wb.transaction(actor="agent") as tx:
        task = reducer.find_task(tx.docs.board, task_id)
        if task is None:
            raise NotFound(f"no task {task_id} on the board (see `wb task list`)")
        if task.get("status") in ("done", "cancelled"):
            raise Refused(f"{task_id} is {task['status']}; there is nothing to claim")
        now = ids.utc_now()
        seen = seen_leases(wb, tx.docs.board, now)
        refuse_if_held(task, agent, now, seen.get(task_id))
        tx.summary = f"wb: claim {task_id} for {agent}"
        payload: dict[str, Any] = {"id": task_id, "agent": agent, "lease_s": lease_s}
        old = task.get("claim") if isinstance(task.get("claim"), dict) else None
        if old is not None and old.get("agent") != agent and task_id in seen:
            # the evidence of a takeover: this clone watched that lease run out on its own clock, whatever the
            # holder's stamp says (a clock ahead would otherwise keep the task for as long as it is ahead)
            payload["after"] = {"agent": old.get("agent"), "until": old.get("until"),
                                "seen_s": max(0, int(seconds_between(seen[task_id], now)))}
        tx.emit("task.claim", payload)
        won = task.get("claim") if isinstance(task.get("claim"), dict) else None
        if won is None or won.get("agent") != agent:  # the event's own time found it held: void
            refuse_if_held(task, agent, at="")
        if won is not None and won.get("took_over_from"):
            tx.summary += f" (took it over from {won['took_over_from']}: the lease had expired)"
    seen_leases(wb, tx.docs.board)  # the holder sees its own lease from the moment it made it
    outcome = tx.outcome
    sha = outcome.sha if outcome is not None else None
    if sha is None and outcome is not None and outcome.skipped and "moved past" not in outcome.skipped:
        raise GitError(f"the claim of {task_id} is recorded but not committed, so not won: {outcome.skipped}")
    return {**dict(task["claim"]), "id": task_id, "commit": sha}


def refuse_if_held(task: dict[str, Any], agent: str, at: str | None = None, first_seen: str | None = None) -> None:
    held = holder(task, ids.utc_now() if at is None else at, first_seen)
    if held is not None and held.get("agent") != agent:
        stamped = (f"; its claimer's clock stamped it until {held['stamped_until']}, judged here from when this "
                   "clone first saw it" if held.get("stamped_until") else "")
        raise Busy(f"{task['id']} is claimed by {held['agent']} until {held['until']} "
                   f"(it can be taken over once that lease expires{stamped})")


def ready_tasks(board: dict[str, Any], agent: str, at: str,
                seen: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Todo tasks whose dependencies are done and that no other agent holds: what `wb task next --claim` tries,
    by priority (0 first; absent: 2), then in board order (issue 22). `seen`: when this clone first saw each
    lease (`seen_leases`)."""
    from workbench.ops import status

    # the one rule of what can be worked on (ops/status.ready_tasks: no epic with open children, no review
    # before its task is done), then the claims: no task another agent holds
    return [t for t in status.ready_tasks(board["tasks"], board)
            if (held := holder(t, at, (seen or {}).get(str(t.get("id"))))) is None or held.get("agent") == agent]


def claim_next(wb: Workbench, *, agent: str | None = None, lease_s: int = DEFAULT_LEASE_S,
               remote: str | None = None) -> dict[str, Any] | None:
    """Claim the first ready task (by priority, then board order); a task lost to another agent's race is
    skipped for the next. None when no task is ready."""
    agent = syncop.agent_name(agent)
    tried: set[str] = set()
    while True:
        board = wb.load(detect_human=False, need_body=False).docs.board
        now = ids.utc_now()
        ready = [t for t in ready_tasks(board, agent, now, seen_leases(wb, board, now)) if t["id"] not in tried]
        if not ready:
            return None
        tid = ready[0]["id"]
        tried.add(tid)
        try:
            return claim(wb, tid, agent=agent, lease_s=lease_s, remote=remote)
        except Busy as err:
            if "is claimed by" not in str(err):
                raise


def claims_held(board: dict[str, Any], at: str, seen: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """[{id, agent, until, since, took_over_from?, stamped_until?}] for every open task held at `at` (as this
    clone saw each lease: `seen`, see `seen_leases`)."""
    out = []
    for task in board["tasks"]:
        held = holder(task, at, (seen or {}).get(task.get("id")))
        if held is not None:
            out.append({"id": task["id"], **held})
    return out
