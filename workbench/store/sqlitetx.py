"""The SQLite backend's transaction (store/sqlitedb.py): the files backend's Transaction running the SQLite
stages (store/pipeline.SQLITE_STAGES) — its load, write and commit one database transaction. A module of its
own so that a reader (`wb status`) imports no write path."""

from __future__ import annotations

from typing import Any, ClassVar

from workbench.store import pipeline
from workbench.store.transaction import Transaction


class SqliteTransaction(Transaction):
    """One mutation in one database transaction: BEGIN IMMEDIATE → load → emit → validate → insert the
    events, replace both snapshots, insert the call records → COMMIT. Nothing is written before the COMMIT but
    the new files a `create` makes (config.yaml), and `put_file`'s after it."""

    PIPELINE: ClassVar[pipeline.Pipeline] = pipeline.SQLITE
    wb: Any  # store/sqlitedb.SqliteWorkbench (which imports this module when it opens a transaction)
