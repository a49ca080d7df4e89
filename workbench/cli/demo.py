"""`wb demo [DIR]`: the main job on a throwaway repository — every yield shown with the command a person types."""

from __future__ import annotations

from pathlib import Path

import typer

from workbench.cli import output


def demo_command(
    directory: Path = typer.Argument(None, metavar="[DIR]", help="Where to create the demo repository "
                                                                "(default: a new temporary directory)."),
    backend: str = typer.Option(None, "--backend", metavar="files|sqlite",
                                help="Where the demo's workbench is kept (docs/storage.md): files in git (the "
                                     "default), or one SQLite database."),
) -> int:
    """Run a narrated session in a throwaway repository: init, a plan with a safe tool, an approval and a
    tool only a human can run, then the log of it all."""
    from workbench.errors import UsageError
    from workbench.ops.demo import run_demo

    if backend is not None and backend not in ("files", "sqlite"):
        raise UsageError(f"--backend: {backend!r} is not files or sqlite")
    run_demo(directory, output.say, backend)
    return 0
