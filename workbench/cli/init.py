"""`wb init`: create .workbench/ in this git repository and commit it. Idempotent."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def init_command(
    json_: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ref: str = typer.Option(None, "--ref", metavar="BRANCH",
                            help="Record state on BRANCH (config git.ref) instead of the checked-out branch; "
                                 "your branches never track .workbench/."),
    agents_md: bool = typer.Option(False, "--agents-md", help="Also add (or update) the wb section of AGENTS.md "
                                                              "at the repository root; it is not committed."),
) -> int:
    """Create .workbench/ (state, board, event log, config) and commit it. A second run changes nothing."""
    from pathlib import Path

    from workbench.api import init

    if ref is not None:
        import re

        from workbench.errors import UsageError

        if not re.match(r"^[A-Za-z0-9._/-]+$", ref) or ref.startswith(("-", "/")) or ".." in ref:
            raise UsageError(f"--ref: {ref!r} is not a branch name")
    bench, created, last = init(start_dir() or Path.cwd(), ref)
    agents = None
    if agents_md:  # the one file outside .workbench/ wb writes, and only when asked
        from workbench.integrations.agents_md import write_agents_md

        agents = write_agents_md(bench.root)
    if json_:
        extra = {"agents_md": agents} if agents_md else {}
        output.emit_json({"workbench": str(bench.root), "created": created, "commit": last.commit,
                          "warnings": last.warnings, **extra})
    elif created:
        output.say(f"Initialized a workbench in {bench.root / '.workbench'}"
                   + (f" (commit {last.commit[:10]})" if last.commit else ""))
        output.say("Next: wb task add TITLE   ·   wb status")
    elif last.commit:
        output.say(f"Workbench already initialized; committed pending workbench changes ({last.commit[:10]})")
    else:
        output.say("Workbench already initialized; nothing changed")
    if agents and not json_:
        output.say(f"AGENTS.md: wb section {agents} (not committed: it is outside .workbench/; commit it yourself)"
                   if agents != "unchanged" else "AGENTS.md: wb section already up to date")
    for w in last.warnings:
        output.warn(w)
    return 0
