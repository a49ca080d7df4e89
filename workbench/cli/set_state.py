"""`wb set KEY=VALUE…`: set state fields such as next_action."""

from __future__ import annotations

import typer

from workbench.cli import writes
from workbench.cli.app import start_dir
from workbench.cli.writes import STATE_LIST_KEYS as LIST_KEYS
from workbench.cli.writes import parse_assignments

__all__ = ["LIST_KEYS", "parse_assignments", "set_command"]


def set_command(
    assignments: list[str] = typer.Argument(..., metavar="KEY=VALUE...",
                                            help="Fields to set, e.g. next_action='Write the parser'."),
    actor: str = typer.Option(None, "--actor", help="Who sets it: agent or human (default: human on a "
                                                    "terminal, agent otherwise)."),
    json_: bool = typer.Option(False, "--json", help="Print the new state as JSON."),
    about: list[str] = typer.Option(None, "--about", metavar="PATH",
                                    help="A path the assumptions this adds are about (repeatable): a later commit "
                                         "changing it flags them stale (wb verify)."),
) -> int:
    """Set state fields: next_action, status, active_task_id, touched_files, assumptions, blockers.

    List fields take a JSON array (assumptions='["a","b"]') or one item, and KEY+=ITEM appends one item;
    active_task_id=null clears it.
    """
    return writes.set_state(start_dir(), assignments, actor=actor, json_=json_, about=about)
