"""board.json in the SQLite snapshots table, and the board a write committed, kept by its process for the next
load (issue 33).

In rows (`KeptBoard.put`): a board of up to PART_TASKS tasks is one row, `board.json`, as a database made before
rows were holds any board (it reads the same; its next write cuts it). A larger one: `board.json` holds its
top level through the `"tasks": [` line, and each further row (`board.json/000001`, …) the next PART_TASKS task
lines; joined in name order they are its bytes (store/sqlitefile.read_board, every reader's). A write changes
only the rows whose bytes changed, in place: adding a task rewrites the top level's row (its `last_event`) and
the last one — at 5,000 tasks / 50,000 events 6.7 pages of the write-ahead log per add, as at 50 tasks, where
the whole board in one row (~125 KB at 500 tasks on the board) was 41.6, written, synced and checkpointed at
each write.

A load parses board.json whole (~0.5 ms at 500 tasks, a third of a write on this backend). A process that
writes again — a long-lived `Bench`, the harness, `wb serve`, `wb mcp` — would parse the very bytes it just
committed. So the write keeps what it committed (`written` before the COMMIT, `committed` once it returned),
and the next load takes it instead of parsing when the database holds exactly those bytes still: equal bytes,
equal board, whoever wrote them since. Taken once: a load hands the dict to its transaction or reader, which
may change it, and the next load parses unless a write kept one again. While no other connection has committed
(`PRAGMA data_version`, which only another connection's commit changes) the connection knows those bytes and
their rows without reading them, and the next write compares its rows with them.

What is kept is the process's own, not what the write's caller may hold (store/keptboard.own_copy, which the
files backend's kept board shares).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from workbench.store.keptboard import own_copy
from workbench.store.sqlitefile import BOARD

# a row replaced in place (an upsert), not deleted and inserted again at the table's end (INSERT OR REPLACE):
# a write changes the pages of its rows and no other, nor the name index
# board.json in rows is format 2: a wb that reads formats up to 1 would misread it; from format 2 on, wb refuses
# a database newer than it reads (store/sqlitedb.py)
FORMAT_2 = "INSERT INTO meta(key, value) VALUES ('format', '2') ON CONFLICT(key) DO UPDATE SET value = '2' " \
           "WHERE value = '1'"
PUT = "INSERT INTO snapshots(name, data) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET data = excluded.data"
PART_TASKS = 16  # ~4 KB a row: each fits its page, with no overflow pages freed and taken again at each write
_TASKS_LINE = b'  "tasks": ['  # the line of model/boardfile.encode_board's layout after which the task lines come


def board_parts(raw: bytes, before: list[bytes] | None = None) -> list[bytes]:
    """`raw` cut into the rows it is kept in: one, when it holds PART_TASKS task lines or fewer (or is not laid
    out as encode_board writes); else its top level through the `"tasks": [` line, then runs of PART_TASKS
    lines. Joined they are `raw`. `before`: the rows of the board before (this function's): the runs of them
    that `raw` still holds in the same place are taken as they are, not cut again."""
    tasks_line = raw.find(b"\n" + _TASKS_LINE + b"\n")
    if tasks_line < 0:
        return [raw]
    first = tasks_line + len(_TASKS_LINE) + 2
    if raw.count(b"\n", first) <= PART_TASKS + 2:  # the task lines, `  ]` and `}`, each ending in a newline
        return [raw]
    parts, at = [raw[:first]], first
    for run in (before or [])[1:-1]:  # whole runs of PART_TASKS lines: where `raw` has the same bytes, the same
        if not raw.startswith(run, at):
            break
        parts.append(run)
        at += len(run)
    lines = raw[at:].split(b"\n")
    runs = [lines[i:i + PART_TASKS] for i in range(0, len(lines), PART_TASKS)]
    return parts + [b"\n".join(run) + b"\n" for run in runs[:-1]] + [b"\n".join(runs[-1])]


class KeptBoard:
    """board.json as this connection last committed it (store/sqlitedb.SqliteStorage.kept): its bytes, the rows
    they are kept in and, for the next load to take once, the board; known true while no other connection has
    committed since (`PRAGMA data_version` changes with every commit of another connection, never with one's
    own) and this one has not put another board (`put` forgets it first)."""

    __slots__ = ("board", "parts", "pending", "raw", "version")

    def __init__(self) -> None:
        self.raw: bytes | None = None
        self.parts: list[bytes] | None = None
        self.board: dict[str, Any] | None = None
        self.version: int | None = None
        self.pending: tuple[bytes, list[bytes], Any] | None = None

    def forget(self) -> None:
        self.raw = self.parts = self.board = self.version = None

    def stored(self, conn: sqlite3.Connection) -> bytes | None:
        """board.json's bytes as the database holds them, when known without reading them; None otherwise."""
        if self.raw is not None and conn.execute("PRAGMA data_version").fetchone()[0] != self.version:
            self.forget()  # another connection committed: what the database holds is read again
        return self.raw

    def put(self, conn: sqlite3.Connection, raw: bytes) -> None:
        """board.json's rows made `raw`'s parts: each whose bytes differ written, those past the last deleted.
        The rows as stored are the ones this connection committed last when it knows them, else SQLite compares
        each (nothing is read back)."""
        old = self.parts if self.stored(conn) is not None else None
        parts = board_parts(raw, old)
        names = [BOARD, *(f"{BOARD}/{i:06d}" for i in range(1, len(parts)))]
        if len(parts) > 1:  # a layout of format 2 (store/sqlitedb.py FORMAT): the database says so
            conn.execute(FORMAT_2)
        self.forget()  # until its COMMIT returns, the database holds this board or (rolled back) the one before
        self.pending = (raw, parts, None)
        if old is not None:
            conn.executemany(PUT,
                             [(n, p) for i, (n, p) in enumerate(zip(names, parts, strict=True))
                              if i >= len(old) or old[i] != p])
            if len(old) > len(parts):
                conn.execute("DELETE FROM snapshots WHERE name > ? AND name < 'board.json0'", (names[-1],))
            return
        conn.executemany("INSERT INTO snapshots(name, data) SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM snapshots "
                         "WHERE name = ?1 AND data = ?2) ON CONFLICT(name) DO UPDATE SET data = excluded.data",
                         zip(names, parts, strict=True))
        conn.execute("DELETE FROM snapshots WHERE name > ? AND name < 'board.json0'", (max(names[-1], BOARD + "/"),))

    def written(self, docs: Any) -> None:
        """The board `put` wrote is `docs.board` (stage `write`): kept for the next load once the COMMIT returns,
        unless the write re-encoded it whole (`touched` holds None)."""
        if self.pending is not None and None not in docs.touched:
            self.pending = (*self.pending[:2], docs)

    def committed(self, conn: sqlite3.Connection) -> None:
        """The COMMIT returned (stage `commit`): the board written is what the database holds."""
        pending, self.pending = self.pending, None
        if pending is not None:
            raw, parts, docs = pending
            self.raw, self.parts = raw, parts
            self.board = own_copy(docs.board, docs.touched, raw) if docs is not None else None
            self.version = conn.execute("PRAGMA data_version").fetchone()[0]

    def begun(self) -> None:
        """A write transaction began: a board put by one that rolled back is nobody's."""
        self.pending = None

    def take(self, raw: bytes) -> dict[str, Any] | None:
        """The board kept, when `raw` (board.json as the database holds it now) is the one written; None
        otherwise. Taken once: the load hands it to a transaction or reader, which may change it."""
        board, self.board = self.board, None
        return board if board is not None and (raw is self.raw or raw == self.raw) else None
