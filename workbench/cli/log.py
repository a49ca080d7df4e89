"""`wb log`: the event log, filtered by type or session; the newest events first read, as far back as shown."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir
from workbench.review.eventview import summarize, who_shown

SHOWN = 50  # events `wb log` prints without --limit or --all


def log_command(
    type_: str = typer.Option(None, "--type", metavar="T",
                              help="Only events of this type (task.done) or family (task)."),
    session: str = typer.Option(None, "--session", metavar="S", help="Only events of this harness session."),
    limit: int = typer.Option(None, "--limit", "-n", min=1,
                              help=f"Only the last N matching events (default {SHOWN}; --json: all)."),
    all_: bool = typer.Option(False, "--all", help="Every matching event, however many."),
    json_: bool = typer.Option(False, "--json", help="One JSON array of events (see docs/json.md)."),
) -> int:
    """Show the event log: what happened, by whom and how wb knows (`human (proven at a terminal)`,
    `agent (mcp)`), in order: the last 50 matching events, and how many earlier ones match (`--all` shows
    them)."""
    from workbench.api import Bench
    from workbench.errors import UsageError

    if all_ and limit:
        raise UsageError("give --limit N or --all, not both")
    bench = Bench.open(start_dir())
    if all_ or (json_ and not limit):  # --json is every matching event unless -n says otherwise
        events, earlier = bench.log(type=type_, session=session), 0
    else:
        events, earlier = bench.log_newest(limit or SHOWN, type=type_, session=session)
    if json_:
        output.emit_json(events)
        return 0
    if earlier:
        output.say(f"({earlier} earlier matching event{'s' if earlier != 1 else ''} not shown: "
                   f"{_again(type_, session)} --all shows them, -n N the last N)")
    for e in events:
        output.say(output.shown(f"#{e['seq']:<5} {e['ts']}  {who_shown(e):<5}  {e['type']:<16} "
                                f"{summarize(e['payload'])}"))
    if not events:
        output.say("no events match")
    return 0


def _again(type_: str | None, session: str | None) -> str:
    import shlex

    return " ".join(["wb log", *(["--type", shlex.quote(type_)] if type_ else []),
                     *(["--session", shlex.quote(session)] if session else [])])
