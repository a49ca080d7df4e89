"""Stage `check sealed`: a sealed log segment or archive chunk changed by hand is never committed
(store/sealedfiles.py): refused before anything is written."""

from __future__ import annotations

from workbench.store import commit as commit_policy
from workbench.store import sealedfiles

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.events and commit_policy.commits(tx.wb.config["git"]):
        sealedfiles.check(tx.wb)
