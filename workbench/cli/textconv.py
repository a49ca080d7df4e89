"""`wb textconv KIND FILE`: git's textconv for the workbench files (the view itself: workbench/review/textconv.py).

git runs it on every revision of the file it shows, so it never fails: whatever it cannot read it says so in one
line and prints the raw text below, and it always exits 0.
"""

from __future__ import annotations

import sys
from pathlib import Path  # typer reads the annotation of textconv_command

from workbench.review.textconv import KINDS, is_workbench_file, render


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
        with open(file, "rb") as fh:
            raw = fh.read()
    except OSError as err:
        from workbench.cli import output

        output.say(f"(wb textconv: cannot read {file}: {err.strerror})")
        return 0
    if not is_workbench_file(kind, str(file)):  # a path routed here that is not wb's: shown as it is
        sys.stdout.flush()
        sys.stdout.buffer.write(raw)
        return 0
    cache = None
    if kind in ("events", "calls"):
        from workbench.review.textconv_cache import MIN_BYTES

        cache = _cache(kind) if len(raw) >= MIN_BYTES else None
    sys.stdout.write(render(kind, raw, cache))
    return 0


def _cache(kind: str) -> Path | None:
    """Where the last render of KIND is kept: under the repository's common git directory (git runs the
    textconv inside the repository), or None outside one."""
    import subprocess

    try:
        found = subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    common = found.stdout.decode("utf-8", errors="surrogateescape").rstrip("\n")
    return Path(common).absolute() / "wb" / "textconv" / kind if common else None
