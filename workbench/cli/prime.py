"""`wb prime`: the compact context a cold agent starts from — in progress and by whom, the ready queue by
priority, blockers, the last handoff's next action, open risks, stale memory, the commands to go on."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def prime_command(
    json_: bool = typer.Option(False, "--json", help="Machine-readable output (see docs/json.md)."),
) -> int:
    """The context a cold agent needs, in a few hundred tokens whatever the size of the board.

    Claude Code's SessionStart hook (`wb hook claude-code`) adds it to the agent's context, at startup and
    again after a compaction; run it yourself to see what the agent starts from.
    """
    from workbench.ops.prime import prime, render
    from workbench.store.opening import discover

    data = prime(discover(start_dir()))  # whichever backend keeps the workbench
    if json_:
        output.emit_json(data)
    else:
        output.say(render(data).rstrip("\n"))
    return 0
