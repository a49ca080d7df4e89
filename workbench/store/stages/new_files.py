"""Stage `new files`: the files of `.workbench/` besides the snapshots and logs a `create` names (`wb init`'s
config.yaml, .gitignore…), written when still absent."""

from __future__ import annotations

from workbench.store.atomic import write_workbench_file

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    for rel, data in tx.new_files.items():
        if not (tx.wb.paths.wb / rel).exists():
            write_workbench_file(tx.wb.paths.wb, rel, data)
