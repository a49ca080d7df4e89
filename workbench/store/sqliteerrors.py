"""The SQLite backend's errors of the machine (store/sqlitedb.py, store/sqlitetx.py): a module of its own, which
both import."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# what SQLite says of the machine (a full disk, a read-only file, an I/O error), and the OSError wb reports for
# the same on the files backend (cli/main.os_problem: one line, exit 1) — never an "internal error"
_OS_ERRORS = (("disk is full", 28, "No space left on device"), ("readonly", 30, "Read-only file system"),
              ("disk I/O error", 5, "Input/output error"), ("unable to open", 13, "cannot open the database file"))


@contextmanager
def os_errors(path: Path) -> Iterator[None]:
    """Inside: a sqlite3 error that is the machine's (disk full, read-only, I/O) is raised as that OSError,
    naming the database file."""
    import sqlite3  # here: the files backend's write pipeline imports this module and never opens a database

    try:
        yield
    except sqlite3.OperationalError as err:
        for words, code, what in _OS_ERRORS:
            if words in str(err):
                raise OSError(code, what, str(path)) from None
        raise
