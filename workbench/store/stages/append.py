"""Stage `append`: the call records to calls.jsonl (those of the pending journal the user's git took from it
first), then the events to events.jsonl (store/eventlog.py), fsynced by the `snapshot` stage together with the
snapshots' temp files, before either is renamed in: the change is recorded then. A log the
user's git moved since the load is left alone: the pending journal holds the batch for the next write."""

from __future__ import annotations

import json

from workbench import faults
from workbench.errors import Refused
from workbench.git.repo import CommitOutcome
from workbench.store import commit as commit_policy
from workbench.store.atomic import append_lines
from workbench.store.eventlog import LogMoved
from workbench.store.stages import STOP

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> str | None:
    if not tx.events:
        return None
    adopt_calls(tx)
    if tx.calls:
        append_lines(tx.wb.paths.calls, [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in tx.calls])
    try:
        # made durable by the `snapshot` stage next, with the snapshots' temp files (one journal commit for all)
        tx.appended = tx.wb.log.append_unsynced(tx.events, tx.loaded.tail)
    except LogMoved as err:
        if not commit_policy.commits(tx.wb.config["git"]):
            raise Refused(f"{err}; nothing was written: run the command again") from None
        # the batch is in the pending journal: the next load folds it in and the next write writes it
        tx.wb.pending.append([], [], files=tx.put_files)
        tx.outcome = CommitOutcome(skipped=f"recorded, not yet written: {err}; the next wb write writes "
                                           "and commits it")
        return STOP
    faults.point("after_event_append")
    return None


def adopt_calls(tx: StageContext) -> None:
    """Tool-call records of the pending journal that calls.jsonl lost to the user's git: written again."""
    if not tx.adopted:
        return
    _events, calls = tx.wb.pending.read()
    try:
        have = tx.wb.paths.calls.read_bytes()
    except FileNotFoundError:
        have = b""
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in calls]
    lost = [line for line in lines if line.encode() not in have]
    if lost:
        append_lines(tx.wb.paths.calls, lost)
