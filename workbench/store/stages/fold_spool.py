"""Stage `fold spool`: the agent hooks' events, kept out of the work tree until now (store/spool.py), folded
into this write; the spool drops them once the write is durable (stage `settle spool`)."""

from __future__ import annotations

from workbench.store import spool

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if not tx.create:
        spool.fold(tx)
