"""`wb resume`: continue the live session from where it stopped (a yield, a pause, or a crash)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from workbench.cli.app import start_dir
from workbench.errors import UsageError


def resume_command(
    result: str = typer.Option(None, "--result", metavar="JSON", help="The awaited tool's result, as JSON."),
    result_file: Path = typer.Option(None, "--result-file", metavar="F", help="The result, from a JSON file."),
    error: str = typer.Option(None, "--error", metavar="MSG", help="The awaited tool failed: why."),
    approve: bool = typer.Option(False, "--approve", help="Allow the tool call that waits for approval "
                                                          "(a person's, asked for a code on the terminal, unless "
                                                          "config.yaml says approvals: any)."),
    deny: bool = typer.Option(False, "--deny", help="Refuse it: the step ends denied, the session goes on "
                                                    "and ends incomplete (exit 1). A person's, as --approve."),
    retry: bool = typer.Option(False, "--retry", help="Run the failed step again (a session paused on step_failed)."),
    skip: bool = typer.Option(False, "--skip", help="Go on without the failed step; it stays shown as failed."),
    extend: list[str] = typer.Option(None, "--extend", metavar="LIMIT=N",
                                     help="Raise a budget: turns=N, tool_calls=N or seconds=N (repeatable)."),
    yield_id: str = typer.Option(None, "--yield", metavar="ID", help="Refuse unless this is the pending yield."),
    plan: Path = typer.Option(None, "--plan", metavar="FILE", help="The plan file, when the session must replan."),
    planner: str = typer.Option(None, "--planner", metavar="CMD", help="The planner command, for reflection."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable outcome."),
) -> int:
    """Continue the live session. Exit codes as `wb run`."""
    from workbench.api import Bench
    from workbench.cli.harness_view import outcome_exit, tty_approver

    if approve and deny:
        raise UsageError("--approve or --deny, not both")
    given = [x for x in (result, result_file, error) if x is not None]
    if len(given) > 1:
        raise UsageError("give one of --result, --result-file, --error")
    payload: Any = None
    if result is not None:
        payload = _json(result, "--result")
    elif result_file is not None:
        try:
            payload = _json(result_file.read_text(encoding="utf-8"), str(result_file))
        except OSError as err:
            raise UsageError(f"--result-file: {err.strerror}: {result_file}") from None
    bench = Bench.open(start_dir())
    if not json_:  # issue 16: what changed since the session yielded, said before it continues
        from workbench.cli import output

        for line in since_lines(bench.since_yield()):
            output.say(line)
    outcome = bench.resume(result=payload, error=error, approve=approve, deny=deny,
                           extend=extend or [], yield_id=yield_id, plan=plan, planner=planner,
                           approver=tty_approver(), retry=retry, skip=skip)
    return outcome_exit(outcome, json_)


def since_lines(found: dict[str, Any] | None) -> list[str]:
    """What changed since the yield, as `wb resume` says it first (issue 16); [] when nothing did."""
    if not found or not found.get("changed"):
        return []
    lines = [f"since the session yielded: {note}" for note in found["notes"]]
    commits = found["new_commits"]
    if commits:
        lines.append(f"since the session yielded: {len(commits)} new commit(s): "
                     + "; ".join(f"{c['sha'][:10]} {c['subject']}" for c in commits[:5])
                     + (" …" if len(commits) > 5 else ""))
    files = found["files_changed"]
    if files:
        lines.append(f"since the session yielded: {len(files)} file(s) changed: " + ", ".join(files[:10])
                     + (" …" if len(files) > 10 else ""))
    if found["dirty_changed"]:
        lines.append(f"since the session yielded: the uncommitted changes differ ({found['now']['dirty_files']} "
                     "dirty path(s) now)")
    return lines


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(f"{where}: not JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except RecursionError:
        raise UsageError(f"{where}: JSON nested too deeply") from None
