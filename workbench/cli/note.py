"""`wb note`: append an entry to the decision log in state.md."""

from __future__ import annotations

import sys

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def note_command(
    text: list[str] = typer.Argument(..., help="The note; `-` reads it from standard input."),
    actor: str = typer.Option(None, "--actor", help="Who writes it: agent or human (default: human on a "
                                                    "terminal, agent otherwise)."),
) -> int:
    """Append TEXT to the decision log (the Markdown body of state.md)."""
    from workbench.api import Bench

    body = sys.stdin.read() if text == ["-"] else " ".join(text)
    bench = Bench.open(start_dir())
    bench.note(body, actor=actor_of(actor))
    output.say(f"noted (event {bench.last.seqs[-1]})")
    output.report_write(bench)
    return 0


def actor_of(value: str | None) -> str:
    """--actor, defaulting to `human` when a person types at a terminal and `agent` when a program runs wb."""
    import os

    from workbench.errors import UsageError

    if value is None:
        return "human" if sys.stdin.isatty() and not os.environ.get("CI") else "agent"
    if value not in ("agent", "human"):
        raise UsageError(f"--actor must be agent or human, not {value!r}")
    return value
