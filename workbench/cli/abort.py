"""`wb abort`: end the live session; it stays in the event log."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def abort_command(reason: str = typer.Option(None, "--reason",
                                             help="Recorded on the event (default: who aborted, a person at "
                                                  "a terminal or an agent).")) -> int:
    """End the live harness session (paused or waiting). Its events stay in the log."""
    from workbench.api import Bench

    result = Bench.open(start_dir()).abort(reason)
    done = sum(1 for s in result.steps if s["status"] == "done")
    output.say(f"aborted: {result.reason} ({done} of {len(result.steps)} steps were done)")
    return 0
