"""Stage `validate` on SQLite: the same checks as on files (store/writecheck.py); a dry run (`wb doctor`) stops
after them, nothing written."""

from __future__ import annotations

from workbench.store import writecheck
from workbench.store.stages import STOP

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> str | None:
    writecheck.check(tx, "events")
    return STOP if tx.dry else None
