"""Stage `seal log`: events.jsonl past its threshold moves to a sealed segment under log/ (store/sealing.py),
in this write's commit."""

from __future__ import annotations

from workbench.store.sealing import seal_log

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    seal_log(tx.wb.log, tx.wb.config)
