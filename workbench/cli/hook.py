"""`wb hook …`: record a coding agent's hook events in the workbench (`wb hook claude-code`, `wb hook codex`).

cli/main.py answers both before typer is imported (integrations/hookfast.py); these commands are their help
and their way in when options come first."""

from __future__ import annotations

import typer

from workbench.cli.app import start_dir

app = typer.Typer(help="Record a coding agent's hook events (tool calls, prompts, turns, sessions) in the "
                       "workbench.", no_args_is_help=True)


@app.command("claude-code")
def claude_code() -> int:
    """Read a Claude Code hook payload (any event) on stdin and spool it as an agent.* event in the git
    directory, leaving the work tree clean; SessionStart, Stop, PreCompact and SessionEnd fold the spool into
    the log and commit it (on SQLite: into the database). PreToolUse denies edits of .workbench/ (and of the
    SQLite database); SessionStart answers with `wb status` as additionalContext. Always exits 0: a wb problem
    is one line on stderr and never blocks the agent."""
    return _run("claude-code")


@app.command("codex")
def codex() -> int:
    """The same for a Codex CLI hook payload: its events are recorded with the source label `codex`."""
    return _run("codex")


def _run(client: str) -> int:
    from workbench.integrations import hookfast

    start = start_dir()
    return hookfast.main(client, str(start) if start else None)
