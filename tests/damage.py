"""Damage a workbench's board snapshot as a person or a crash would, on either backend: board.json written by
hand (files), or its row rewritten with sqlite3 (SQLite) — for the tests of what a reader does with a workbench
that does not load."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from workbench.model.layout import WB_DIR


def database(repo: Path) -> Path | None:
    """The SQLite database of the workbench at `repo`, or None for a files workbench."""
    from workbench.store import backend, sqlitedb
    from workbench.store.config import load_config

    config = repo / WB_DIR / "config.yaml"
    if not backend.is_sqlite_config(config):
        return None
    return sqlitedb.db_path(repo, load_config(config))


def read_board(repo: Path) -> bytes:
    db = database(repo)
    if db is None:
        return (repo / WB_DIR / "board.json").read_bytes()
    from workbench.store.sqlitefile import read_board  # its row and the rows it continues in

    with sqlite3.connect(db) as conn:
        data = read_board(conn)
    assert data is not None
    return data


def write_board(repo: Path, data: bytes) -> None:
    """board.json's bytes replaced, as `data` (not validated: the point is to damage it)."""
    db = database(repo)
    if db is None:
        (repo / WB_DIR / "board.json").write_bytes(data)
        return
    conn = sqlite3.connect(db)
    try:
        with conn:
            conn.execute("UPDATE snapshots SET data = ? WHERE name = 'board.json'", (data,))
            conn.execute("DELETE FROM snapshots WHERE name GLOB 'board.json/*'")  # one row holds it all now
    finally:
        conn.close()
