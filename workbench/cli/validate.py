"""`wb validate`: every workbench file against its schema (for CI and pre-commit)."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def validate_command(json_: bool = typer.Option(False, "--json", help="{ok, problems} as JSON.")) -> int:
    """Check every workbench file against its schema and the event log's hash chain. Exit 5 on a problem."""
    from workbench.api import Bench

    with output.Progress("validating the event log") as progress:
        problems = Bench.open(start_dir()).validate(progress)
    if json_:
        output.emit_json({"ok": not problems, "problems": problems})
    else:
        for problem in problems:
            output.error(problem)
        if not problems:
            output.say("ok: config.yaml, state.md, board.json, events.jsonl and calls.jsonl are valid")
    return 5 if problems else 0
