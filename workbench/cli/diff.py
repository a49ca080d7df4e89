"""`wb diff [REV [REV]]`: what changed in the agent's state, as text, Markdown (for a pull request), a
self-contained HTML page (review/html.py) or JSON; `-o FILE` writes it to a file the user names."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from workbench.cli import output
from workbench.cli.app import start_dir
from workbench.review.diffview import Line, render_markdown, render_text, visible

FORMATS = ("text", "json", "markdown", "html")


def diff_command(
    revs: list[str] = typer.Argument(None, metavar="[REV [REV]]",
                                     help="None: HEAD vs the working tree. One: REV vs the working tree "
                                          "(A..B and A...B as in git). Two: the first vs the second. A REV "
                                          "may name a point of the event log: @SEQ (after event SEQ), @-N (N "
                                          "events before the last); on SQLite only those and `now`, and none "
                                          "is the start of the latest session vs now (docs/diff.md)."),
    format_: str = typer.Option("text", "--format", metavar="FORMAT",
                                help="text (the default; colour on a terminal), json (see docs/diff.md), "
                                     "markdown (for a pull request) or html (one self-contained page: no script, "
                                     "nothing fetched; docs/views.md)."),
    out: str = typer.Option(None, "--output", "-o", metavar="FILE",
                            help="Write the diff to FILE (without colour) instead of stdout."),
    all_: bool = typer.Option(False, "--all",
                              help="Also show the fields every write changes (updated_at, last_event)."),
) -> int:
    """Show what changed in the workbench between two revisions, by meaning: state fields, decision-log
    entries, tasks field by field, events and tool calls appended. Exit 0 whether or not anything changed."""
    from workbench.api import diff
    from workbench.errors import UsageError

    if format_ not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not '{format_}'")
    revs = list(revs or [])
    if len(revs) > 2:
        raise UsageError("wb diff takes at most two revisions")
    data = diff(start_dir(), *revs, all_fields=all_)
    if out is not None:
        _write(Path(out), rendered(data, format_))
    elif format_ == "text":
        _print(render_text(data))
    elif format_ == "json":
        output.emit_json(data)
    else:
        sys.stdout.write(rendered(data, format_))
    for warning in data["warnings"]:
        output.warn(warning)
    return 0


def rendered(data: dict[str, Any], format_: str) -> str:
    """The diff as one string in `format_` (text without colour)."""
    if format_ == "json":
        return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    if format_ == "markdown":
        return render_markdown(data)
    if format_ == "html":
        from workbench.review.html import render_diff_html

        return render_diff_html(data)
    return "\n".join(visible(text) for _style, text in render_text(data)) + "\n"


def _write(path: Path, text: str) -> None:
    """The file the user named with -o (anywhere they choose, like a shell's `>`), never .workbench/ itself."""
    from workbench.errors import UsageError

    if ".workbench" in path.resolve().parts:
        raise UsageError(f"-o {path}: not inside .workbench/ (wb writes there only through its own files)")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"-o {path}: cannot write it ({err.strerror or err}); name a file in a writable "
                         "directory") from err
    output.say(f"wrote {path}")


def _print(lines: list[Line]) -> None:
    if output.color_enabled():
        from rich.console import Console
        from rich.text import Text

        console = Console(highlight=False, soft_wrap=True)
        for style, text in lines:
            console.print(Text(visible(text), style=style))
        return
    output.say("\n".join(visible(text) for _style, text in lines))


