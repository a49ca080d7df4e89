"""`wb sync`: share the workbench through a git remote, with state on its own ref (config `git.ref`).

The state ref (`refs/heads/wb-state`) holds commits whose trees hold only `.workbench/`; each worktree's
`.workbench/` is a checkout of it, made from the commit git/repo.py records as the worktree's *state base*.
A sync, under the workbench lock:

1. fetches the remote's state branch into `refs/remotes/REMOTE/BRANCH` (network outside the lock);
2. takes up what is newer: the remote's commit, the local ref's (another worktree's writes) and the work
   tree's own events, **published first**: the remote's log is kept exactly as it is, the local ref's events
   it lacks are appended after it, then the work tree's (review/merge.py `merge_events(pick=True)`, the rule
   a rebase uses). A published event is never rewritten, so every clone holds the same bytes for it, and the
   log's order is the order of publication: the fold (model/claims.py) decides claims by it;
3. an unpublished task whose id the remote took is renumbered (the rebase rule) and a `task.renumber` event
   records it, so the old id stays findable (`wb task show`);
4. board.json and state.md are replayed from the merged log, the merge committed on the state ref (local
   compare-and-swap), written to the work tree, and pushed fast-forward only: the remote's ref update is the
   compare-and-swap. A push rejected because someone pushed first starts again at 1.

Crash-safety: nothing is written to the work tree before the local ref moved; a worktree whose base is not the
ref's tip commits nothing (git/repo.py) until a sync merges, and a sync always merges the work tree's own log
into the tip, so a kill -9 anywhere leaves a state the next sync converges from. Offline, or refused by the
remote: one line, local state untouched.

The parts: ops/syncrefs.py (the state ref, the report), ops/syncmerge.py (the merge and its write into the work
tree), ops/syncjoin.py (joining the state branch, moving to it, sync on the user's branch); this module runs the
sync and answers `wb status` and a renumbered id, and keeps every name the rest of wb imports from here.
"""

from __future__ import annotations

import random
import time

from workbench.errors import Busy, NotFound
from workbench.ops.syncjoin import branch_sync, join, move_to_ref
from workbench.ops.syncmerge import integrate
from workbench.ops.syncrefs import (
    ATTEMPTS,
    SNAPSHOTS,
    SyncReport,
    default_remote,
    interrupted,
    state_ref,
    tracking_ref,
)
from workbench.store.landing import agent_name  # moved to the store with the landing rule (issue 29)

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.workbench import Workbench

__all__ = ["ATTEMPTS", "SNAPSHOTS", "SyncReport", "agent_name", "commit_worktree", "default_remote", "integrate",
           "interrupted", "join", "move_to_ref", "resolve_renumbered", "state_ref", "sync", "sync_status",
           "tracking_ref"]


# -- the sync -------------------------------------------------------------------------------------------
def sync(wb: Workbench, remote: str | None = None, *, push_branch: bool = False) -> SyncReport:
    """Fetch, merge by wb's rules, commit, push; retried while the remote moves first. Idempotent. Runs none
    of the commands it brings: a line among the warnings says how many wait for `wb trust` (issue 19)."""
    from workbench.ops import trust

    before = trust.digests(wb)
    report = _sync(wb, remote, push_branch=push_branch)
    _observe_leases(wb)
    notice = trust.sync_notice(wb, before)
    if notice:
        report.warnings.append(notice)
    return report


def _observe_leases(wb: Workbench) -> None:
    """The leases this sync brought are seen now (store/leases.py): each is judged from this moment, on this
    clone's clock, whatever its claimer's clock stamped."""
    from workbench.errors import WorkbenchError
    from workbench.model import ids
    from workbench.store.leases import first_seen

    try:
        first_seen(wb.git.git_dir, wb.load(detect_human=False, need_body=False).docs.board, ids.utc_now())
    except (WorkbenchError, OSError):
        pass  # the next look at the claims sees them instead


def _sync(wb: Workbench, remote: str | None = None, *, push_branch: bool = False) -> SyncReport:
    found = state_ref(wb)
    if found is None:
        return branch_sync(wb, remote, push_branch)
    ref, branch = found
    named = remote
    remote = remote or default_remote(wb, branch)
    if named is not None and named not in wb.git.remotes():
        raise NotFound(f"no git remote {named!r} (see `git remote -v`)")
    report = SyncReport(remote, ref)
    commit_worktree(wb)
    if remote is None:  # no remote: the worktrees of this clone, through the shared ref
        report.warnings.append("no git remote: merged this clone's worktrees only (`git remote add origin URL` "
                               "to share with other clones)")
        with wb.lock():
            report.local = integrate(wb, ref, None, report)
        return report
    for attempt in range(1, ATTEMPTS + 1):
        report.attempts = attempt
        fetched = wb.git.fetch_branch(remote, branch, tracking_ref(remote, branch))
        with wb.lock():
            local = integrate(wb, ref, fetched, report, write=False)
        report.local = local
        report.remote_commit = fetched
        if local is None or local == fetched or (fetched is not None and wb.git.is_ancestor(local, fetched)):
            return _settle(wb, ref, report)  # nothing of ours the remote lacks
        if wb.git.push_branch(remote, local, branch) is None:
            wb.git.update_ref(tracking_ref(remote, branch), local, fetched)
            report.pushed, report.remote_commit = True, local
            return _settle(wb, ref, report)
        # someone pushed first: fetch and merge again, after a pause that grows (the busier the remote, the
        # more the racers spread out)
        time.sleep(random.uniform(0, 0.05 * 2 ** min(attempt, 5)))
    raise Busy(f"{remote} kept moving while wb sync merged ({ATTEMPTS} attempts); run `wb sync` again")


def _settle(wb: Workbench, ref: str, report: SyncReport) -> SyncReport:
    """Write the state ref's commit into the work tree, once the push is done (or was not needed)."""
    taken = report.taken
    with wb.lock():
        report.local = integrate(wb, ref, None, report)
    report.taken = max(taken, report.taken)
    return report


def commit_worktree(wb: Workbench) -> None:
    """Events the pending journal holds, and files not yet committed, committed as any write commits them (a
    commit refused because the ref moved is merged by `integrate`)."""
    found = state_ref(wb)
    if found is not None:
        with wb.lock():
            if interrupted(wb):
                return
    with wb.transaction(actor="wb"):
        pass  # adopts the pending journal's events the work tree lacks
    wb.checkpoint("wb: commit pending workbench changes")


# -- wb status ------------------------------------------------------------------------------------------------
def sync_status(wb: Workbench, board: dict[str, Any]) -> dict[str, Any] | None:
    """For `wb status` with state on its own ref: how far the local state ref is ahead of / behind the last
    fetched remote state (no network: the tracking ref as the last sync or fetch left it), and the claims
    held now. None with state on the user's branch."""
    from workbench.model import ids
    from workbench.model.claims import holder

    found = state_ref(wb)
    if found is None:
        return None
    ref, branch = found
    from workbench.store.leases import first_seen

    now = ids.utc_now()
    seen = first_seen(wb.git.git_dir, board, now)  # leases judged from when this clone first saw them
    claims = [{"id": t["id"], **held} for t in board["tasks"] for held in [holder(t, now, seen.get(t["id"]))]
              if held]
    out: dict[str, Any] = {"ref": ref, "remote": None, "ahead": None, "behind": None, "claims": claims,
                           "interrupted": interrupted(wb)}
    remotes_dir = wb.git.common_dir / "refs" / "remotes"
    packed = wb.git.common_dir / "packed-refs"
    candidates = sorted(d.name for d in remotes_dir.iterdir() if (d / branch).exists()) if remotes_dir.is_dir() else []
    if not candidates and packed.exists():
        text = packed.read_text(errors="replace")
        candidates = sorted({line.split()[1].split("/")[2] for line in text.splitlines()
                             if line.endswith(f"/{branch}") and " refs/remotes/" in line})
    if not candidates:
        return out
    remote = "origin" if "origin" in candidates else candidates[0]
    local, tracking = wb.git.ref_sha(ref), wb.git.read_ref(tracking_ref(remote, branch))
    out["remote"] = remote
    if local and tracking:
        out["ahead"], out["behind"] = wb.git.count_apart(local, tracking)
    return out


# -- ids a sync renumbered ---------------------------------------------------------------------------------
def resolve_renumbered(wb: Workbench, board: dict[str, Any], task_id: str, task: dict[str, Any] | None
                       ) -> tuple[dict[str, Any] | None, str | None]:
    """`wb task show OLD` after a sync renumbered OLD: the task it became when OLD is not on the board or was
    this worktree's (the task.renumber event names the worktree whose unpublished task moved), with
    `renumbered_from`; else the board's OLD with a `renumbered` line naming where the other agent's OLD went.
    (task, new id or None)."""
    on_branch = state_ref(wb) is None  # a pending event landed on the user's branch (store/landing.py): the
    # branch's own OLD kept its id, so OLD is the board's task when it has one
    if on_branch and (getattr(wb, "storage", None) is not None or not _records_renumbers(wb)):
        return task, None
    records = [e["payload"] for _line, e in wb.log.iter_all()
               if e.get("type") == "task.renumber" and e["payload"].get("from") == task_id]
    if not records:
        return task, None
    from workbench.model import reducer

    last = records[-1]
    moved = reducer.find_task(board, str(last.get("to")))
    if moved is not None and (task is None or (not on_branch and last.get("worktree") == wb.git.worktree_id())):
        return {**moved, "renumbered_from": task_id}, str(last["to"])
    if task is not None:
        return {**task, "renumbered": f"{task_id} of {last.get('agent')} is now {last.get('to')}"}, None
    return task, None


def _records_renumbers(wb: Workbench) -> bool:
    """Whether the log holds a task.renumber at all: a search of its bytes, so `wb task show` on a long log
    parses it only when one does."""
    needle = b'"type":"task.renumber"'
    paths = [wb.paths.events, *(sorted(wb.log.log_dir.iterdir()) if wb.log.log_dir.is_dir() else [])]
    for path in paths:
        try:
            if needle in path.read_bytes():
                return True
        except OSError:
            continue
    return False
