"""Stage `put files`: the files the events name (an acceptance command's output in artifacts/, the handoff
packet), written whole after the snapshots and before the commit that records them."""

from __future__ import annotations

from workbench.store.atomic import write_workbench_file

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    for rel, data in tx.put_files.items():
        write_workbench_file(tx.wb.paths.wb, rel, data)
