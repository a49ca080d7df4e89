"""`wb hook …`: record a coding agent's hook events in the workbench (`wb hook claude-code`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from workbench.cli.app import start_dir

if TYPE_CHECKING:
    from workbench.api import Bench

app = typer.Typer(help="Record a coding agent's hook events (tool calls, session start, stop) in the workbench.",
                  no_args_is_help=True)


@app.command("claude-code")
def claude_code() -> int:
    """Read a Claude Code hook payload (PreToolUse, PostToolUse, SessionStart, Stop) on stdin and record it as
    agent.* events; on SessionStart print `wb status` as context. Always exits 0: a wb problem is one line on
    stderr and never blocks the agent (exit 2 would block its tool call, or its stop)."""
    from workbench.errors import WorkbenchError
    from workbench.integrations.agenthooks import parse_hook_payload, record_claude_code

    # Claude Code reads exit 2 as "block this tool call" (or "do not stop"), and other codes as a failed
    # hook shown to the user: a workbench problem must not stall the agent's work, so every outcome is 0.
    try:
        hook = parse_hook_payload(sys.stdin.buffer.read())
        bench = _bench(hook)
        context = None
        if hook["hook_event_name"] == "SessionStart":
            context = bench.status()  # before recording: its "last event" is then the previous session's
        recorded = record_claude_code(bench, hook)
        if recorded is None:
            _complain(f"ignoring {hook['hook_event_name']} (wb records PreToolUse, PostToolUse, SessionStart "
                      "and Stop)")
        if context is not None:
            _print_context(context)
        for w in bench.last.warnings:
            _complain(f"warning: {w}")
    except WorkbenchError as err:
        _complain(str(err))
    except Exception as err:  # a bug, still never the agent's problem
        _complain(f"internal error: {type(err).__name__}: {err}")
    return 0


def _bench(hook: dict[str, Any]) -> Bench:
    """The workbench of -C, else of the agent's working directory (the payload's cwd), else of ours."""
    from workbench.api import Bench

    start = start_dir()
    cwd = hook.get("cwd")
    if start is None and isinstance(cwd, str) and cwd and Path(cwd).is_dir():
        start = Path(cwd)
    return Bench.open(start)


def _print_context(status: dict[str, Any]) -> None:
    from workbench.cli import status_view

    sys.stdout.write("This repository keeps your working state in .workbench/ (wb). `wb status`:\n")
    status_view.render(status)
    sys.stdout.write("Record your work through wb: wb task add/start/done, wb note, wb set next_action=...\n")


def _complain(message: str) -> None:
    from workbench.model.redaction import redact_known

    sys.stderr.write(f"wb: hook claude-code: {redact_known(message)}\n")
