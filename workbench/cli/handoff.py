"""`wb handoff`: write the handoff packet (.workbench/handoff.md for people, handoff.json for the next agent)."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def handoff_command(
    json_: bool = typer.Option(False, "--json", help="Print the packet (handoff.json) instead of the summary."),
) -> int:
    """Write .workbench/handoff.md and handoff.json from what the workbench holds: the session, changed
    files, commands run, failed attempts, open risks, the next action and the proof events. Idempotent: the
    same workbench writes the same packet, and an unchanged one is neither written nor committed."""
    from workbench.api import Bench

    bench = Bench.open(start_dir())
    data = bench.handoff()
    if json_:
        output.emit_json(data)
        return 0
    nxt = data["next_action"]
    output.say(("wrote" if bench.last.seqs else "unchanged:") + " .workbench/handoff.md and handoff.json")
    output.say(f"next action: {nxt['text']}" + (f" (`{nxt['command']}`)" if nxt["command"] else ""))
    for risk in data["risks"]:
        output.say(f"risk: {risk['kind']}: {risk['detail']}")
    output.report_write(bench)
    return 0
