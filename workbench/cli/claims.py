"""`wb task claim ID`: win a task across clones (docs/sync.md). Registered on the `wb task` group by cli/app.py
(GROUP_EXTENSIONS), so cli/task.py stays as it is."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir
from workbench.cli.task import app


@app.command("claim")
def claim(
    task_id: str = typer.Argument(..., metavar="ID"),
    agent: str = typer.Option(None, "--agent", metavar="NAME", help="Who claims (default: $WB_AGENT, else "
                                                                    "user@host)."),
    lease: str = typer.Option(None, "--lease", metavar="DURATION",
                              help="How long the claim holds without a write on the task (default 1h; e.g. 30m, "
                                   "2h, 90s)."),
    remote: str = typer.Option(None, "--remote", help="The remote that decides (default: the state branch's "
                                                      "upstream, else origin; none: this clone's worktrees)."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable output (see docs/sync.md)."),
) -> int:
    """Claim a task for one agent: won only when the commit that records it is published (the push, or the
    shared ref's compare-and-swap); a task another agent holds is refused (exit 6) naming who and until when."""
    from workbench.api import Bench

    result = Bench.open(start_dir()).claim(task_id, agent=agent, lease=lease, remote=remote)
    if json_:
        output.emit_json(result)
        return 0
    took = f" (took it over from {result['took_over_from']}, whose lease expired)" if result.get(
        "took_over_from") else ""
    output.say(f"{task_id} claimed by {result['agent']} until {result['until']}{took}")
    for w in result.get("warnings", []):
        output.warn(w)
    return 0
