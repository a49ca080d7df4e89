"""Stage `commit`: the git commit of `.workbench/` under the one commit policy (store/commit.py) — or left to a
writer queued behind on the lock (group commit), or not made when a snapshot was left as a person saved it
(the next write records their edit and commits both)."""

from __future__ import annotations

from workbench import faults
from workbench.git.repo import CommitOutcome
from workbench.store import commit as commit_policy
from workbench.store.stages import STOP

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> str | None:
    if tx.kept:
        tx.outcome = CommitOutcome(skipped=f"recorded in events.jsonl, not yet committed: {tx.kept} was saved "
                                           "by hand just as wb wrote it and is left as saved; the next wb "
                                           "write records that edit and commits both")
        return STOP
    tx.left = leave_commit(tx)
    tx.outcome = CommitOutcome() if tx.left or not tx.git_commit else git_commit(tx)
    if tx.revived:
        tx.outcome.warnings.append(f"wrote again {tx.revived} acknowledged event(s) that the user's git "
                                   "moved the branch back over just after wb committed them")
    return None


def leave_commit(tx: StageContext) -> bool:
    """Leave this write's git commit to a writer queued behind on the lock (group commit), when there is one
    and the commit policy agrees; the write is acknowledged all the same: its events are in the fsynced log,
    and the pending journal that keeps them from the user's git is made durable too (no commit will settle
    it before the next writer's). Not for a write that carries events the user's git had taken back."""
    if not tx.git_commit or tx.revived or tx.adopted or tx.alone or not commit_policy.commits(tx.wb.config["git"]):
        return False
    if not commit_policy.leave_to_next(tx.wb, tx.lock):
        return False
    tx.wb.pending.sync()
    last = tx.events[-1]
    commit_policy.owe(tx.wb, tx.summary or tx.default_summary(), tx.events[0]["seq"], last["seq"],
                      last.get("session"))
    return True


def git_commit(tx: StageContext) -> CommitOutcome:
    last = tx.events[-1]
    outcome = commit_policy.commit(tx.wb, tx.summary or tx.default_summary(), seq=last["seq"],
                                   session=last.get("session"), events_since=tx.events[0]["seq"] - 1,
                                   secrets=tx.secrets)
    if outcome.sha:
        faults.point("after_git_commit")
    return outcome
