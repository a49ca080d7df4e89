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
    # columns as wide as what they show (issue 31): `wb`, `agent (script)` and `human (proven at a terminal)`
    # in one listing keep the type and the summary lined up
    who = [who_shown(e) for e in events]
    who_w = max((len(w) for w in who), default=5)
    type_w = max((len(e["type"]) for e in events), default=16)
    seq_w = max((len(str(e["seq"])) + 1 for e in events), default=5)
    for e, w in zip(events, who, strict=True):
        output.say(output.shown(f"{'#' + str(e['seq']):<{seq_w}} {e['ts']}  {w:<{who_w}}  {e['type']:<{type_w}}  "
                                f"{summarize(e['payload'])}".rstrip()))
    if not events:
        output.say("no events match")
    return 0


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
