"""`wb replay`: rebuild the state from the event log; with --verify, compare it with the snapshots."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def replay_command(
    verify: bool = typer.Option(False, "--verify", help="Exit 5 unless the rebuilt state equals the snapshots."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable report."),
) -> int:
    """Fold the whole event log from empty and compare the result with state.md and board.json."""
    from workbench.api import Bench

    with output.Progress("replaying the event log") as progress:
        report = Bench.open(start_dir()).replay(progress)
    rate = report.events / report.seconds if report.seconds > 0 else float(report.events)
    if json_:
        data = {"events": report.events, "seconds": round(report.seconds, 6), "events_per_second": round(rate),
                "matches": not report.mismatches, "mismatches": report.mismatches, "unrecorded": report.unrecorded}
        if not verify and report.docs is not None:
            data["state"] = report.docs.state
            data["board"] = report.docs.board
        output.emit_json(data)
    else:
        output.say(f"replayed {report.events} events in {report.seconds:.3f}s ({rate:,.0f} events/s)")
        for m in report.mismatches:
            output.error(m)
        for note in report.unrecorded:
            output.say(note)
        if not report.mismatches:
            output.say("snapshots match the event log")
    return 5 if (verify and report.mismatches) else 0
