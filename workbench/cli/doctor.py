"""`wb doctor [--fix]`: find and repair a torn log tail, snapshots behind the log, uncommitted changes…"""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def doctor_command(
    fix: bool = typer.Option(False, "--fix", help="Repair what can be repaired (never the hash chain)."),
    json_: bool = typer.Option(False, "--json", help="Findings as JSON."),
    full: bool = typer.Option(False, "--full", help="Check every sealed log segment again, not only those not "
                                                    "checked before on this machine."),
) -> int:
    """Check the workbench: torn log tail, snapshots behind the log, hash chain, schemas, uncommitted
    changes, leftover temp files, stale lock; on SQLite, the database's integrity, the chain, the snapshots
    against the fold of the log (--fix folds them again). Exit 0 when healthy — the next write succeeds; what it
    will do by itself (snapshots behind, files not yet committed, writes waiting for a branch) and what never
    stops a write (a crash's leftover temp files) are listed, and --fix does them now — or repaired; 1 otherwise."""
    from workbench.api import Bench

    bench = Bench.open(start_dir())
    with output.Progress("checking the event log") as progress:
        report = bench.doctor(fix=fix, progress=progress, full=full)
    if json_:
        output.emit_json({"healthy": report.healthy, "findings": [f.as_dict() for f in report.findings]})
    else:
        for f in report.findings:
            mark = "fixed" if f.fixed else ("the next write does it; now: wb doctor --fix" if f.waits and f.fixable
                                            else "waits" if f.waits
                                            else "harmless; wb doctor --fix removes it" if f.harmless
                                            else "fixable: wb doctor --fix" if f.fixable else "needs you")
            output.say(output.shown(f"{f.code:<22} {f.message}  [{mark}]"))
        if not report.findings:
            output.say("healthy: nothing to repair")
        elif report.healthy and not all(f.fixed for f in report.findings):
            output.say("healthy: the next wb write succeeds and does what waits above")
    return 0 if report.healthy else 1
