"""`wb merge-driver KIND %O %A %B %P`: the git merge drivers `wb init` registers (the merge itself:
workbench/review/merge_driver.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from workbench.review.merge_driver import KINDS, acts_on, merge_file, plain_merge


def merge_driver_command(
    kind: str = typer.Argument(..., help="board, events or state."),
    base: Path = typer.Argument(..., help="%O: the common ancestor's version."),
    ours: Path = typer.Argument(..., help="%A: our version; the merge result is written here."),
    theirs: Path = typer.Argument(..., help="%B: their version."),
    path: str = typer.Argument(".workbench/?", help="%P: the path being merged."),
) -> int:
    """Merge one workbench file for git (registered by `wb init`; not meant to be run by hand). Exits 1 on a
    real conflict, naming the task and the field."""
    from workbench.errors import UsageError

    if kind not in KINDS:
        raise UsageError(f"merge-driver KIND must be one of {', '.join(KINDS)}")
    if not acts_on(kind, path):  # routed here by some .gitattributes, but not a workbench file: git's merge
        return plain_merge(Path.cwd(), base, ours, theirs, path)
    versions = {"base": base.read_bytes(), "ours": ours.read_bytes(), "theirs": theirs.read_bytes()}
    result, conflicts = merge_file(kind, versions, Path.cwd())
    ours.write_bytes(result)
    for conflict in conflicts:
        sys.stderr.write(f"wb: merge conflict in {path}: {conflict}\n")
    return 1 if conflicts else 0
