"""`wb verify M-…`: confirm remembered notes and assumptions again after a commit changed what they are about."""

from __future__ import annotations

import typer

from workbench.cli import writes
from workbench.cli.app import start_dir


def verify_command(
    items: list[str] = typer.Argument(..., metavar="ITEM...", help="Memory items to confirm, e.g. M-12 "
                                                                  "(wb status and wb prime name the stale ones)."),
    actor: str = typer.Option(None, "--actor", help="Who confirms: agent or human (default: human on a "
                                                    "terminal, agent otherwise)."),
    json_: bool = typer.Option(False, "--json", help="Print the confirmed items as JSON."),
) -> int:
    """Re-confirm memory items (wb note --about, wb set assumptions+=… --about) as still true at HEAD.

    The confirmation is an event that records who gave it; the item is stale again only when a later commit
    changes one of its paths.
    """
    return writes.verify(start_dir(), items, actor=actor, json_=json_)
