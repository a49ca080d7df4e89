"""Stage `journal`: the write's events and call records into the pending journal in the git directory
(store/pending.py), where no checkout can take them: acknowledged from here. When the user's git is
mid-operation (deferred) the journal is the only copy until it ends, and the write stops here. A dry run
(`wb doctor`) stops before it: every check has run, nothing is written."""

from __future__ import annotations

from workbench import faults
from workbench.git.repo import CommitOutcome
from workbench.store import commit as commit_policy
from workbench.store.stages import STOP

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> str | None:
    if tx.dry:
        return STOP
    if not tx.events:
        return None
    mark = tx.wb.pending.size()

    def take_back() -> None:  # a full disk before the batch was in the log: refused, so the journal takes it back
        if not tx.log_ends_with_ours():
            tx.wb.pending.take_back(mark)

    tx.on_os_error.append(take_back)
    if commit_policy.commits(tx.wb.config["git"]):
        tx.wb.pending.append(tx.events[tx.adopted:], tx.calls, durable=bool(tx.deferred),
                             files=tx.put_files if tx.deferred else None)
        faults.point("after_pending_append")  # in the pending journal alone: the next load folds it in
        if not tx.deferred and not tx.wb.config["git"].get("ref"):
            # wait out a git command of the user's, then look again: a merge, checkout or stash may have
            # begun since the load, and the work tree is then git's until it ends
            tx.wb.git.wait_for_users_git()
            tx.deferred = tx.wb.deferred()
            if tx.deferred:  # the journal is the only copy until that operation ends
                tx.wb.pending.append([], [], files=tx.put_files, durable=False)
                tx.wb.pending.sync()
    if tx.deferred:
        tx.outcome = CommitOutcome(skipped=f"recorded, not yet committed: {tx.deferred}; wb writes it to "
                                           ".workbench/ and commits it at the first wb command after that")
        return STOP
    return None
