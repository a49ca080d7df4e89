"""Stage `commit owed`: this write commits nothing of its own (no events, or its caller failed), but a writer
before it may have left its commit to it (group commit, store/commit.py): made now, so that a write's commit
never waits for a later write."""

from __future__ import annotations

from workbench.store import commit as commit_policy

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if (tx.failed is None and tx.events) or not tx.git_commit or tx.deferred:
        return
    try:
        commit_policy.commit_owed(tx.wb, tx.lock)
    except Exception:  # noqa: BLE001 - the caller's own outcome is the one to report; the next write commits it
        pass
