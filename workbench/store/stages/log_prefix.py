"""Stage `check log`: a log the user's git took committed lines out of is never committed (store/logprefix.py:
what this write lands back is counted), and a read-only workbench refuses before the log, not half-way
through."""

from __future__ import annotations

from workbench.model.layout import check_writable
from workbench.store import commit as commit_policy
from workbench.store import logprefix

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if not tx.events and not tx.dry:
        return
    # a write held back (HEAD detached, git mid-operation) is checked too: it acknowledges events for the log
    # that stands (validate and doctor judge the same; mid-operation, the files are git's and nothing is checked)
    if tx.events and commit_policy.commits(tx.wb.config["git"]):
        logprefix.check(tx.wb, tx.events)
    check_writable(tx.wb.paths)
