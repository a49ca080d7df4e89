"""`wb export FILE` and `wb import FILE`: move a workbench between the storage backends (docs/storage.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def export_command(
    file: Path = typer.Argument(..., metavar="FILE", help="The dump to write (replaced if it exists)."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> int:
    """Write the whole workbench (config, every event, every tool-call record) to FILE, from either backend."""
    from workbench.api import export_workbench

    data = export_workbench(start_dir(), file)
    if json_:
        output.emit_json(data)
    else:
        output.say(f"exported {data['events']} events and {data['calls']} call records from the {data['backend']} "
                   f"backend to {file}")
    return 0


def import_command(
    file: Path = typer.Argument(..., metavar="FILE", help="A dump `wb export` wrote."),
    backend: str = typer.Option("files", "--backend", metavar="files|sqlite", help="Where to keep the new "
                                "workbench (docs/storage.md)."),
    no_git: bool = typer.Option(False, "--no-git", help="With --backend sqlite: here, no git repository needed."),
    db: str = typer.Option(None, "--db", metavar="PATH", help="With --backend sqlite: the database file."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> int:
    """Make a new workbench here from FILE, kept in --backend; its snapshots are rebuilt from the events."""
    from workbench.api import import_workbench

    data = import_workbench(start_dir(), file, backend, no_git=no_git, db=db)
    if json_:
        output.emit_json(data)
    else:
        output.say(f"imported {data['events']} events and {data['calls']} call records into the {backend} backend "
                   f"in {data['workbench']}" + (f" (commit {data['commit'][:10]})" if data["commit"] else ""))
    return 0
