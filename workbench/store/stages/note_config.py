"""Stage `note config`: config.yaml as this write saw it is remembered (store/configedit.py), now that the
`config.edit` recording any change of it is durable."""

from __future__ import annotations

from workbench.store import configedit

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.failed is None and tx.config_seen:
        configedit.remember(tx.wb)
