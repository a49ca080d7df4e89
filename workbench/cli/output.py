"""All terminal output goes through here: JSON for scripts, plain text without a TTY, rich on a TTY.

Text for a person is shown, never obeyed: `say`, `warn`, `error` and `table` pass it through
`model/display.escape` (control characters, ANSI escapes and bidi controls written as `\\e[8m`, `\\u202e`),
and rich never reads markup in a value (`[bold]` in a title is text). JSON is written as it is, for scripts.
"""

from __future__ import annotations

import json
import os
import sys
from itertools import repeat

from workbench.model.display import escape

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def is_tty() -> bool:
    return sys.stdout.isatty()


def color_enabled() -> bool:
    return is_tty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def emit_json_items(items: list[Any], known: list[str | None] | None = None) -> None:
    """A long JSON list, one item per line (as board.json keeps its tasks): json's C encoder writes each item,
    where indent= falls back to its pure-Python one (three quarters of a 2,000-task `wb task list --json`).
    `known`: each item's JSON as `item_encoder` would write it, where the caller has it already (None where
    not: encoded here)."""
    if not items:
        sys.stdout.write("[]\n")
        return
    encode = item_encoder()
    texts = map(encode, items) if known is None else \
        (text if text is not None else encode(item) for item, text in zip(items, known, strict=True))
    sys.stdout.write("[\n  " + ",\n  ".join(texts) + "\n]\n")


def emit_json_bytes(data: bytes) -> None:
    """JSON already encoded as UTF-8 (`emit_json_items`' text, copied from board.json): written as it is where
    stdout writes UTF-8, else through the text stream, which escapes what it cannot write as for any output."""
    buffer = getattr(sys.stdout, "buffer", None)
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if buffer is None or os.linesep != "\n" or (encoding != "utf8" and not data.isascii()):
        sys.stdout.write(data.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)


def item_encoder() -> Callable[[Any], str]:
    """`JSONEncoder(ensure_ascii=False, default=str).encode`, for many values: its `encode` makes a new C encoder
    for every call (a third of encoding 2,000 tasks one by one, issue 33); this makes one, the same way. Where
    json has no C encoder, or makes it otherwise, `encode` itself (tests/cli/test_output.py: the same text)."""
    from json import encoder

    plain = json.JSONEncoder(ensure_ascii=False, default=str)
    make = getattr(encoder, "c_make_encoder", None)
    if make is None:
        return plain.encode
    try:  # as JSONEncoder.iterencode calls it, one shot with indent=None
        chunks = make({}, plain.default, encoder.encode_basestring, None, plain.key_separator, plain.item_separator,
                      plain.sort_keys, plain.skipkeys, plain.allow_nan)
    except TypeError:
        return plain.encode

    def encode(value: Any) -> str:
        if isinstance(value, str):  # what `encode` does first
            return plain.encode(value)
        return "".join(chunks(value, 0))

    return encode


def say(text: str = "") -> None:
    """A line (or lines) for a person; a value that must stay on its line is escaped by the caller (`shown`)."""
    sys.stdout.write(escape(text, layout=True) + "\n")


def shown(value: object) -> str:
    """One value as one line of visible text (model/display.escape)."""
    return escape(value)


def warn(text: str) -> None:
    sys.stderr.write(f"wb: warning: {escape(text)}\n")


def error(text: str) -> None:
    sys.stderr.write(f"wb: {escape(text)}\n")


def report_write(bench: Any) -> None:
    """Warnings from the last write (an uncommitted change, a locked index) go to stderr."""
    for w in bench.last.warnings:
        warn(w)


class Progress:
    """A progress bar for long work, on stderr, as a context manager that is also the `progress(done, total)`
    callback the core takes. Drawn only when stderr is a terminal, TERM is not `dumb` and CI is unset;
    otherwise nothing at all is written. NO_COLOR keeps the bar and drops its colours (rich honours it).
    Work that ends without an error ends with a full bar: the core reports only every few thousand events."""

    def __init__(self, description: str) -> None:
        self.description = description
        self._bar: Any = None
        self._task: Any = None
        self._total = 0

    def __enter__(self) -> Progress:
        if sys.stderr.isatty() and os.environ.get("TERM") != "dumb" and not os.environ.get("CI"):
            from rich.console import Console
            from rich.progress import Progress as Bar

            self._bar = Bar(console=Console(stderr=True), transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=None)
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._bar is not None:
            self._total = total
            self._bar.update(self._task, completed=done, total=total or None)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self._bar is not None:
            if exc_type is None and self._total:
                self._bar.update(self._task, completed=self._total)
            self._bar.__exit__(exc_type, *exc)


class LockWait:
    """How a wait for the workbench lock is shown, on stderr (store/lock.py reports it): at a terminal, one line
    redrawn in place — how many writers are ahead, for how long — and wiped when the lock is taken; elsewhere
    (a pipe, a log, TERM=dumb), one line once the wait passes a second, so a script's log says why the command
    took its time without a spinner's noise."""

    AFTER = 1.0  # seconds of waiting before the line off a terminal

    def __init__(self) -> None:
        self._said = False

    def __call__(self, ahead: int, holder: str, waited: float, done: bool) -> None:
        live = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
        if done:
            if live and self._said:
                sys.stderr.write("\r\x1b[K")
                sys.stderr.flush()
            self._said = False
            return
        who = f", held by pid {holder}" if holder else ""
        writers = f"{ahead} writer{'s' if ahead != 1 else ''} ahead"
        if live:
            sys.stderr.write(f"\r\x1b[Kwb: waiting for the workbench lock: {writers}{who} ({waited:.0f}s)")
            sys.stderr.flush()
            self._said = True
        elif waited >= self.AFTER and not self._said:
            sys.stderr.write(f"wb: waiting for the workbench lock: {writers}{who}\n")
            sys.stderr.flush()
            self._said = True


def _laid_out(headers: list[str], columns: list[list[str]]) -> list[str]:
    """The table's lines: each column as wide as its widest cell (padded by C, a column at a time), two spaces
    apart, each line's end stripped."""
    padded = []
    for header, column in zip(headers[:-1], columns[:-1], strict=True):
        width = max([len(header), *map(len, column)])
        padded.append(list(map(str.ljust, [header, *column], repeat(width))))
    padded.append([headers[-1], *columns[-1]])  # the last column: its line's end, stripped anyway
    return list(map(str.rstrip, map("  ".join, zip(*padded, strict=True))))


def table(headers: list[str], rows: list[list[str]]) -> None:
    table_columns(headers, [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in headers])


def table_columns(headers: list[str], columns: list[list[str]]) -> None:
    """`table`, its cells given a column at a time (`wb task list` builds its 2,000 rows so, issue 33)."""
    if len(columns) != len(headers) or len({len(column) for column in columns}) > 1:
        raise ValueError("a table's columns: one per header, all of one length")
    if color_enabled():
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        t = Table(*headers, box=None, pad_edge=False, header_style="bold")
        for row in zip(*columns, strict=True):
            t.add_row(*(Text(escape(cell)) for cell in row))  # Text, not markup: `[bold]` in a title is text
        Console().print(t)
        return
    # laid out as the cells are, and looked at once: the cells all printable (most tables) are shown as they
    # are; one unprintable character anywhere (or a cell that is not text yet) and every cell is escaped first, so
    # the columns line up with what is shown (a 2,000-task list, issue 33)
    try:
        shown = all("".join(column).isprintable() for column in columns)
    except TypeError:
        shown = False
    if shown:
        sys.stdout.write("\n".join(_laid_out(headers, columns)) + "\n")  # one write, not one per row (issue 33)
    else:
        say("\n".join(_laid_out(headers, [[escape(cell) for cell in column] for column in columns])))
