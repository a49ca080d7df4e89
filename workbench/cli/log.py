"""`wb log`: the event log, filtered by type or session; the newest events first read, as far back as shown."""

from __future__ import annotations

from typing import Any

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
    mermaid: bool = typer.Option(False, "--mermaid",
                                 help="The harness session's path through the state machine (--session S, else "
                                      "the newest session) as a ```mermaid block for a pull request: the "
                                      "transitions in order with counts, each yield and who answered it "
                                      "(docs/views.md)."),
) -> int:
    """Show the event log: what happened, by whom and how wb knows (`human (proven at a terminal)`,
    `agent (mcp)`), in order: the last 50 matching events, and how many earlier ones match (`--all` shows
    them)."""
    from workbench.api import Bench
    from workbench.errors import UsageError

    if all_ and limit:
        raise UsageError("give --limit N or --all, not both")
    bench = Bench.open(start_dir())
    if mermaid:
        return _mermaid(bench, session, type_ or limit or all_ or json_)
    if json_:  # --json is every matching event unless -n says otherwise
        output.emit_json(bench.log(type=type_, session=session) if all_ or not limit
                         else bench.log_newest(limit, type=type_, session=session)[0])
        return 0
    if all_:  # each event read, shown and let go: a listing of 50,000 holds its lines, not the events (issue 33)
        from workbench.ops import eventlist

        rows, earlier = [_row(e) for e in eventlist.each(bench.wb.log, type=type_, session=session)], 0
    else:
        events, earlier = bench.log_newest(limit or SHOWN, type=type_, session=session)
        rows = [_row(e) for e in events]
    if earlier:
        output.say(f"({earlier} earlier matching event{'s' if earlier != 1 else ''} not shown: "
                   f"{_again(type_, session)} --all shows them, -n N the last N)")
    # columns as wide as what they show (issue 31): `wb`, `agent (script)` and `human (proven at a terminal)`
    # in one listing keep the type and the summary lined up
    seq_w = max((len(r[0]) for r in rows), default=5)
    who_w = max((len(r[2]) for r in rows), default=5)
    type_w = max((len(r[3]) for r in rows), default=16)
    for seq, ts, who, type_name, summary in rows:
        output.say(output.shown(f"{seq:<{seq_w}} {ts}  {who:<{who_w}}  {type_name:<{type_w}}  {summary}".rstrip()))
    if not rows:
        output.say("no events match")
    return 0


def _row(e: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """What a line of the listing shows of an event: #seq, ts, who, type, the payload's summary."""
    return "#" + str(e["seq"]), str(e["ts"]), who_shown(e), str(e["type"]), summarize(e["payload"])


def _again(type_: str | None, session: str | None) -> str:
    import shlex

    return " ".join(["wb log", *(["--type", shlex.quote(type_)] if type_ else []),
                     *(["--session", shlex.quote(session)] if session else [])])


def _mermaid(bench: Any, session: str | None, other: object) -> int:
    import sys

    from workbench.errors import NotFound, UsageError
    from workbench.review.mermaid import session_mermaid

    if other:
        raise UsageError("--mermaid draws one whole session: give it --session S alone (or nothing: the newest)")
    if session is None:
        newest, _earlier = bench.log_newest(1, type="harness.transition")
        if not newest:
            raise NotFound("no harness session in the log to draw (start one with `wb run GOAL --plan FILE`)")
        session = str(newest[0]["session"])
    events = bench.log(session=session)
    if not events:
        raise NotFound(f"no events of session {session!r} (`wb log --type session.start` lists the sessions)")
    sys.stdout.write(session_mermaid(events, session))
    return 0
