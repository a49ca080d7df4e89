"""`wb log`: the event log, filtered by type or session."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir
from workbench.review.eventview import summarize
from workbench.review.story import who_shown


def log_command(
    type_: str = typer.Option(None, "--type", metavar="T",
                              help="Only events of this type (task.done) or family (task)."),
    session: str = typer.Option(None, "--session", metavar="S", help="Only events of this harness session."),
    limit: int = typer.Option(None, "--limit", "-n", min=1, help="Only the last N matching events."),
    json_: bool = typer.Option(False, "--json", help="One JSON array of events (see docs/json.md)."),
) -> int:
    """Show the event log: what happened, by whom and how wb knows (`human (proven at a terminal)`,
    `agent (mcp)`), in order."""
    from workbench.api import Bench

    events = Bench.open(start_dir()).log(type=type_, session=session, limit=limit)
    if json_:
        output.emit_json(events)
        return 0
    for e in events:
        output.say(output.shown(f"#{e['seq']:<5} {e['ts']}  {who_shown(e):<5}  {e['type']:<16} "
                                f"{summarize(e['payload'])}"))
    if not events:
        output.say("no events match")
    return 0
