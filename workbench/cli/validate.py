"""`wb validate`: every workbench file against its schema (for CI and pre-commit)."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def validate_command(
    json_: bool = typer.Option(False, "--json", help="{ok, problems} as JSON."),
    full: bool = typer.Option(False, "--full", help="Check every sealed log segment again, not only those not "
                                                    "checked before on this machine."),
) -> int:
    """Check every workbench file against its schema and the event log's hash chain. A sealed log segment
    checked once on this machine is trusted by its digest afterwards (a changed one is checked again).
    Exit 5 on a problem."""
    from workbench.api import Bench

    with output.Progress("validating the event log") as progress:
        bench = Bench.open(start_dir())
        problems = bench.validate(progress, full=full)
    if json_:
        output.emit_json({"ok": not problems, "problems": problems})
    else:
        for problem in problems:
            output.error(problem)
        if not problems:
            also = ", handoff.json" if (bench.wb.paths.wb / "handoff.json").exists() else ""  # issue 16
            sealed = len(bench.wb.log.headers())
            log = f"the event log ({sealed} sealed segment{'s' * (sealed != 1)} and events.jsonl)" if sealed \
                else "events.jsonl"
            storage = getattr(bench.wb, "storage", None)
            if storage is not None:  # store/sqlitedb.py: one database holds what the files backend keeps as files
                output.say(f"ok: config.yaml{also} and {storage.path} (the events, both snapshots and the call "
                           "records) are valid")
            else:
                output.say(f"ok: config.yaml, state.md, board.json{also}, {log} and calls.jsonl are valid")
                if bench.wb.pending:  # valid with them folded in; said, so nothing waits unnamed (issue 29)
                    from workbench.ops.status import waiting_writes

                    waiting = waiting_writes(bench.wb, bench.wb.load(detect_human=False, need_body=False))
                    if waiting:
                        output.say(f"not committed: {waiting['text']}")
    return 5 if problems else 0
