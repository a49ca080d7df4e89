"""`wb run GOAL`: start a harness session and drive it until it finishes or yields."""

from __future__ import annotations

from pathlib import Path

import typer

from workbench.cli.app import start_dir


def run_command(
    goal: str = typer.Argument(..., help="What the session is for."),
    plan: Path = typer.Option(None, "--plan", metavar="FILE", help="A plan file (YAML or JSON)."),
    planner: str = typer.Option(None, "--planner", metavar="CMD",
                                help="A command: request JSON on stdin, plan JSON on stdout."),
    max_turns: int = typer.Option(None, "--max-turns", min=0, help="Budget: steps started."),
    max_tool_calls: int = typer.Option(None, "--max-tool-calls", min=0, help="Budget: tool calls."),
    max_seconds: float = typer.Option(None, "--max-seconds", min=0, help="Budget: seconds of active run time."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable outcome."),
) -> int:
    """Run GOAL: plan, then step by step; exit 0 when done, 3 at a yield (a tool result or an approval is
    needed), 4 at a pause (budget or hook). `wb resume` continues."""
    from workbench.api import Bench
    from workbench.cli.harness_view import outcome_exit, tty_approver

    outcome = Bench.open(start_dir()).run(goal, plan=plan, planner=planner, max_turns=max_turns,
                                          max_tool_calls=max_tool_calls, max_seconds=max_seconds,
                                          approver=tty_approver())
    return outcome_exit(outcome, json_)
