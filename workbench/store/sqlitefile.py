"""Which file a SQLite workbench is kept in (`db_path`: the git directory's, a linked worktree's kept past `git
worktree remove`, or the trusted `sqlite_path`), and whether a file found there is wb's database at all
(`check_not_foreign`, `check_schema`): both asked before anything is written (issue 30). And board.json as the
snapshots table holds it (`read_board`: one row, or its row and the rows it continues in, store/sqliteboard.py),
for every reader of the database, the agent hooks' guard included."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from workbench.errors import Refused

DB_NAME = "workbench.sqlite3"


def db_path(root: Path, config: dict[str, Any]) -> Path:
    """The database file of the workbench whose work tree top is `root`."""
    named = config.get("sqlite_path")
    if named:
        from workbench.store import trust

        path = (root / str(named)) if not os.path.isabs(str(named)) else Path(str(named))
        setting = trust.outside_path(named)
        if setting is not None:  # out of the repository: only where a person said so (`wb init --db`, `wb trust`)
            trust.require(root, [setting])
        elif not _inside(path, root):
            raise Refused(f"config.yaml: sqlite_path {named} leads out of the repository through a link; wb does "
                          "not follow it: name the database's own path (a person then trusts it with `wb trust`)")
        return path
    from workbench.git.repo import GitRepo
    from workbench.store import kept

    git_dir = GitRepo(root).git_dir
    keep = kept.keep_dir(root, git_dir)
    if keep != git_dir / "wb":  # a linked worktree: kept past `git worktree remove` (store/kept.py)
        kept.adopt_database(root, git_dir / "wb" / DB_NAME, keep / DB_NAME)
        kept.note(keep, root)
    return keep / DB_NAME


def _inside(path: Path, root: Path) -> bool:
    """Whether `path`, its links resolved, is under the work tree `root`."""
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


WB_TABLES = {"meta", "events", "snapshots", "calls"}


def check_not_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse, before anything is written, a database that is not wb's: wb keeps its own in WAL mode, so one in
    any other mode is another program's, and `PRAGMA journal_mode=WAL` would change it (its bytes changed by a
    read-only `wb status`). Asked through the connection — reading the mode changes nothing — never by opening
    the file apart: closing a second descriptor of a database drops this process's POSIX locks on it."""
    (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
    if str(mode).lower() != "wal":
        raise Refused(f"{path}: a SQLite database that is not wb's (wb keeps its own in WAL mode); wb leaves it as "
                      "it is: point sqlite_path at wb's own database")


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a database whose schema is not wb's own: a trigger (one can abort every write, or call a function
    on each), a view where a table should be, a table missing (issue 30: hostile files a clone ships)."""
    rows = conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')").fetchall()
    triggers = sorted(str(n) for t, n in rows if t == "trigger")
    views = sorted(str(n) for t, n in rows if t == "view")
    tables = {str(n) for t, n in rows if t == "table"}
    if triggers or views:
        what = ", ".join([*(f"trigger {n}" for n in triggers), *(f"view {n}" for n in views)])
        raise Refused(f"{path}: holds what no wb database has ({what}); wb does not use it: restore wb's own "
                      "database, or start an empty one with `wb init --backend sqlite`")
    missing = sorted(WB_TABLES - tables)
    if missing:
        raise Refused(f"{path}: not a wb database (no table {', '.join(missing)}); wb does not use it")


BOARD = "board.json"
# the rows board.json continues in (store/sqliteboard.py), oldest first: `board.json/000001`, … ('/' sorts just
# before '0', so these bounds hold exactly the names that start `board.json/`)
_BOARD_ROWS = "SELECT name, data FROM snapshots WHERE name = 'board.json' OR (name > 'board.json/' AND name < " \
              "'board.json0') ORDER BY name"


def blob(value: Any) -> bytes:
    """A BLOB column's bytes; a value rewritten by hand as TEXT (sqlite3's replace() returns text) reads as its
    UTF-8, so that the checks see what it holds rather than wb failing on its type."""
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)


def board_rows(conn: sqlite3.Connection) -> dict[str, bytes]:
    """{name: bytes} of the rows that hold board.json, in their order."""
    return {str(name): blob(data) for name, data in conn.execute(_BOARD_ROWS)}


def read_board(conn: sqlite3.Connection) -> bytes | None:
    """board.json's bytes: its row and the rows it continues in, joined; None when its own row is missing."""
    rows = board_rows(conn)
    return b"".join(rows.values()) if BOARD in rows else None


# the rowid of a snapshot row, and its data unless it is a BLOB larger than the bound (SQLite reads a BLOB's type
# and length from the row's header, not its pages)
_BIG_SNAPSHOT = 64 * 1024
_SNAPSHOT_ROW = ("SELECT rowid, CASE WHEN typeof(data) = 'blob' AND length(data) > ? THEN NULL ELSE data END "
                 "FROM snapshots WHERE name = ?")


def read_snapshot_row(conn: sqlite3.Connection, name: str) -> bytes | None:
    """A snapshot row's bytes. A large BLOB (state.md, its decision log, a checkpoint's: MBs at 50,000 notes) is
    read through SQLite's incremental blob I/O, straight into the bytes returned — half the time of a SELECT,
    which copies it through a value of its own (issue 33) — inside a transaction only, where the rowid found and
    the row the handle opens are one state of the database."""
    if not conn.in_transaction:
        row = conn.execute("SELECT data FROM snapshots WHERE name = ?", (name,)).fetchone()
        return blob(row[0]) if row is not None else None
    row = conn.execute(_SNAPSHOT_ROW, (_BIG_SNAPSHOT, name)).fetchone()
    if row is None:
        return None
    if row[1] is not None:  # small, or TEXT (a row rewritten by hand): as it reads
        return blob(row[1])
    with conn.blobopen("snapshots", "data", row[0], readonly=True) as handle:
        return handle.read()
