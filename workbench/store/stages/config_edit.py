"""Stage `commit config edit`: a hand edit of config.yaml the load found is committed before this write, on its
own and named (`wb: config.yaml edited by hand: tools +check`), never inside the write's own commit with only a
trailer (issue 31): a reviewer of `git log` sees who changed what wb may run — a harness step's write too, whose
own events wait for the step's commit. Then the load is made again, and the caller's events follow. Not when
nothing would be committed now (commit off, git mid-operation, a dry run, wb init)."""

from __future__ import annotations

from workbench.store import commit as commit_policy
from workbench.store import configedit, spool

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    edit = tx.config_edit
    if edit is None or tx.create or tx.dry or tx.deferred or not commit_policy.commits(tx.wb.config["git"]):
        return
    words = configedit.describe(edit["payload"])
    named = ["config.yaml edited by hand" + (f": {'; '.join(words)}" if words else "")]
    named += [f"{e['payload'].get('file')} edited by hand" for e in tx.events  # found by the same load
              if e["type"] == "human.edit" and isinstance(e.get("payload"), dict)]
    tx.summary = "wb: " + "; ".join(named)
    git_commit, tx.git_commit, tx.alone = tx.git_commit, True, True
    try:
        tx.commit()
    finally:
        tx.git_commit, tx.alone = git_commit, False
    spool.settle(tx)
    configedit.remember(tx.wb)
    tx.recorded_first = list(tx.events)
    if tx.outcome is not None:
        tx.edit_warnings = ([tx.outcome.skipped] if tx.outcome.skipped else []) + tx.outcome.warnings
    tx.summary, tx.outcome, tx.calls, tx.put_files, tx.new_files = None, None, [], {}, {}
    tx.begin()
