"""board.json in the SQLite snapshots table, and the board a write committed, kept by its process for the next
load (issue 33).

In parts (`put_board`): board.json's first row holds its top level and first PART_TASKS task lines, each further
row (`board.json/000001`, …) the next PART_TASKS lines; joined in name order they are its bytes
(store/sqlitefile.read_board). A write replaces only the rows whose bytes changed: adding or changing a task
rewrites the first row (the top level's `last_event`) and that task's, a few KB, where the whole board was
~125 KB at 500 tasks — written, synced and checkpointed at each write. A board of up to PART_TASKS tasks is one
row, as a database made before parts were holds any board: it reads the same, and its next write splits it.

A load parses board.json whole (~0.5 ms at 500 tasks, a third of a write on this backend). A process that
writes again — a long-lived `Bench`, the harness, `wb serve`, `wb mcp` — would parse the very bytes it just
committed. So the write keeps what it committed (`written` before the COMMIT, `committed` once it returned),
and the next load takes it instead of parsing when the database holds exactly those bytes still: equal bytes,
equal board, whoever wrote them since. Taken once: a load hands the dict to its transaction or reader, which
may change it, and the next load parses unless a write kept one again.

What is kept is the process's own, not what the write's caller may hold: the top level (with the archive's
references) and every task the write changed are read back from their JSON, so a task a verb returned (and
its lists, which the event's payload shares) is not in it; the others are the dicts a parse made, which the
write's events did not change (a change is an event, and an event marks its task touched, model/reducer.py).
A write that re-encoded the whole board (`touched` holds None) keeps nothing.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from workbench.model.boardfile import task_ids, unique
from workbench.store.sqlitefile import BOARD

PART_TASKS = 32
_TASKS_LINE = b'  "tasks": ['  # the line of model/boardfile.encode_board's layout after which the task lines come


def board_parts(raw: bytes) -> list[bytes]:
    """`raw` cut into the rows it is kept in: the lines through the first PART_TASKS task lines, then runs of
    PART_TASKS lines (whole, when `raw` is not laid out as encode_board writes). Joined they are `raw`."""
    lines = raw.split(b"\n")
    try:
        first = lines.index(_TASKS_LINE) + 1 + PART_TASKS
    except ValueError:
        return [raw]
    runs = [lines[:first], *(lines[at:at + PART_TASKS] for at in range(first, len(lines), PART_TASKS))]
    return [b"\n".join(run) + b"\n" for run in runs[:-1]] + [b"\n".join(runs[-1])]


def put_board(conn: sqlite3.Connection, raw: bytes) -> None:
    """board.json's rows made `raw`'s parts: each whose bytes differ written (SQLite compares them: nothing is
    read back), those past the last deleted."""
    parts = board_parts(raw)
    names = [BOARD, *(f"{BOARD}/{i:06d}" for i in range(1, len(parts)))]
    conn.executemany("INSERT OR REPLACE INTO snapshots(name, data) SELECT ?1, ?2 WHERE NOT EXISTS "
                     "(SELECT 1 FROM snapshots WHERE name = ?1 AND data = ?2)", zip(names, parts, strict=True))
    conn.execute("DELETE FROM snapshots WHERE name > ? AND name < 'board.json0'", (max(names[-1], BOARD + "/"),))


class KeptBoard:
    """One workbench's kept board (store/sqlitedb.SqliteWorkbench.kept_board)."""

    __slots__ = ("board", "pending", "raw")

    def __init__(self) -> None:
        self.raw: bytes | None = None
        self.board: dict[str, Any] | None = None
        self.pending: tuple[bytes, Any] | None = None

    def written(self, raw: bytes, docs: Any) -> None:
        """The write put `raw` for `docs.board` in its transaction (stage `write`); not kept before its COMMIT."""
        self.pending = (raw, docs) if None not in docs.touched else None

    def committed(self) -> None:
        """The COMMIT returned (stage `commit`): the board written is the next load's."""
        pending, self.pending = self.pending, None
        if pending is not None:
            raw, docs = pending
            self.raw, self.board = raw, _own(docs.board, docs.touched)

    def take(self, raw: bytes) -> dict[str, Any] | None:
        """The board kept, when `raw` (board.json as the database holds it now) is the one written; None
        otherwise. Either way nothing is kept after."""
        board, kept = self.board, self.raw
        self.raw = self.board = self.pending = None
        return board if kept is not None and kept == raw else None


def _own(board: dict[str, Any], touched: set[str]) -> dict[str, Any]:
    """`board` with its top level and the `touched` tasks read back from their JSON: no object a caller holds."""
    own: dict[str, Any] = json.loads(json.dumps({k: v for k, v in board.items() if k != "tasks"},
                                                ensure_ascii=False))
    tasks = own["tasks"] = list(board["tasks"])
    ids = task_ids(tasks)
    if ids is not None and unique(ids):  # as every board a write commits: the touched ones found by their ids
        where = dict(zip(ids, range(len(ids)), strict=True))
        positions = [where[tid] for tid in touched if tid in where]
    else:
        positions = [i for i, t in enumerate(tasks) if not isinstance(t, dict) or t.get("id") in touched]
    for i in positions:
        tasks[i] = json.loads(json.dumps(tasks[i], ensure_ascii=False))
    return own
