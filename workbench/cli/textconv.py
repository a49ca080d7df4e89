"""`wb textconv KIND FILE`: git's textconv for the workbench files (the view itself: workbench/review/textconv.py).

git runs it on every revision of the file it shows, so it never fails: whatever it cannot read it says so in one
line and prints the raw text below, and it always exits 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.cli import output
from workbench.review.textconv import KINDS, convert, is_workbench_file


def textconv_command(kind: str, file: Path) -> int:
    """Print the readable wb view of one workbench file, for git's textconv. KIND is board (one line per
    task), events (one line per event, like `wb log`), state (the frontmatter one key per line, then the
    decision log) or calls (one line per journal record); FILE is the file (git passes a temporary copy).
    Never fails on a broken or empty file: exit 0 with what could be read."""
    return run(kind, file)


def run(kind: str, file: Path | str) -> int:
    """The command without typer (plain parameters), so an entry point can call it on a fast path."""
    from workbench.errors import UsageError

    if kind not in KINDS:
        raise UsageError(f"KIND must be one of {', '.join(KINDS)}, not '{kind}'")
    try:
        raw = Path(file).read_bytes()
    except OSError as err:
        output.say(f"(wb textconv: cannot read {file}: {err.strerror})")
        return 0
    if not is_workbench_file(kind, str(file)):  # a path routed here that is not wb's: shown as it is
        sys.stdout.flush()
        sys.stdout.buffer.write(raw)
        return 0
    lines = convert(kind, raw)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0
