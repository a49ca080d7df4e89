"""Stage `settle spool`: the write is durable (log or pending journal), so the agent hooks' spool drops the
lines it folded (store/spool.py)."""

from __future__ import annotations

from workbench.store import spool

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.failed is None:
        spool.settle(tx)
