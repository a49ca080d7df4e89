"""`wb status`: where to start — active task, next action, blockers, session, pending yield, board counts."""

from __future__ import annotations

import typer

from workbench.cli import status_view
from workbench.cli.app import start_dir


def status_command(
    json_: bool = typer.Option(False, "--json", help="Machine-readable output (see docs/json.md)."),
) -> int:
    """Where to start: the active task or else the tasks ready to start, next action, blockers, session, pending
    yield, board counts."""
    return status_view.run(start_dir(), json_)
