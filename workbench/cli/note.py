"""`wb note`: append an entry to the decision log in state.md."""

from __future__ import annotations

import typer

from workbench.cli import writes
from workbench.cli.app import start_dir
from workbench.cli.writes import actor_of

__all__ = ["actor_of", "note_command"]


def note_command(
    text: list[str] = typer.Argument(..., help="The note; `-` reads it from standard input."),
    actor: str = typer.Option(None, "--actor", help="Who writes it: agent or human (default: human on a "
                                                    "terminal, agent otherwise)."),
    about: list[str] = typer.Option(None, "--about", metavar="PATH",
                                    help="A path the note is about (repeatable): once a later commit changes it, "
                                         "status, prime and the handoff flag the note stale (wb verify)."),
) -> int:
    """Append TEXT to the decision log (the Markdown body of state.md).

    With --about PATH the note is remembered as an item (M-<event>) tied to HEAD's commit.
    """
    return writes.note(start_dir(), text, actor=actor, about=about)
