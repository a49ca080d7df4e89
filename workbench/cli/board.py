"""`wb board`: the board as a terminal kanban (cli/board_app.py, textual), or a static print off a terminal
(`--static`, or stdout not a terminal), or JSON (`--json`). Read-only: it never writes."""

from __future__ import annotations

from typing import Any

import typer

from workbench.cli import output
from workbench.cli.app import start_dir
from workbench.ops.board import HEADINGS, marks


def board_command(
    label: str = typer.Option(None, "--label", help="Only tasks with this label."),
    owner: str = typer.Option(None, "--owner", help="Only tasks with this owner (or assignee)."),
    status: str = typer.Option(None, "--status", help="Only this column (todo, in_progress, blocked, done, "
                                                      "cancelled)."),
    static: bool = typer.Option(False, "--static", help="Print the board once instead of the live view "
                                                        "(the default off a terminal)."),
    json_: bool = typer.Option(False, "--json", help="The columns as JSON (see docs/views.md)."),
) -> int:
    """Show the board as a live kanban in the terminal (keys: arrows, enter, h, /, f, ?, q), or print it once off a
    terminal; read-only."""
    from workbench.api import Bench

    bench = Bench.open(start_dir())
    data = bench.board(label=label, owner=owner, status=status)
    if json_:
        output.emit_json(data)
        return 0
    if static or not output.is_tty():
        print_static(data)
        return 0
    try:
        from workbench.cli.board_app import BoardApp
    except ImportError:  # textual is the [board] extra: the static print needs none of it
        from workbench.errors import UsageError

        raise UsageError("the live board needs textual: pip install textual (in wb's clone: pip install "
                         "'.[board]'), or `wb board --static`") from None

    BoardApp(bench, label=label, owner=owner, status=status).run()
    return 0


def print_static(data: dict[str, Any]) -> None:
    """The columns one after another, a line a task (plain off a terminal; a rich table of columns on one)."""
    if output.color_enabled():
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table(*(f"{HEADINGS[c['status']]} ({len(c['tasks'])})" for c in data["columns"]),
                      header_style="bold", expand=True)
        depth = max((len(c["tasks"]) for c in data["columns"]), default=0)
        for i in range(depth):
            table.add_row(*(Text(card_text(c["tasks"][i])) if i < len(c["tasks"]) else Text("")
                            for c in data["columns"]))
        Console().print(table)
        return
    for col in data["columns"]:
        output.say(f"{HEADINGS[col['status']]} ({len(col['tasks'])})")
        for card in col["tasks"]:
            output.say("  " + card_text(card))
    if not data["total"]:
        output.say("no tasks match" if any(data["filters"].values()) else "no tasks (add one: wb task add TITLE)")


def card_text(card: dict[str, Any]) -> str:
    """One card as one line of visible text: id, owner, title, markers."""
    shown = [output.shown(card["id"]), output.shown(card.get("assignee") or card["owner"]),
             output.shown(card["title"])]
    extra = [output.shown(m) for m in marks({**card, "priority": card.get("priority", 2)})]  # p2 when unset too
    return "  ".join(shown) + (f"  [{'; '.join(extra)}]" if extra else "")
