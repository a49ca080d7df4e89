"""What this machine has checked of a SQLite workbench's log, so that `wb validate` checks only what came after
(issue 33: at 50,000 events SQLite's validate read, schema-checked and folded every event, 6× the files
backend, which trusts its sealed segments by digest — workbench/store/logcheck.py).

The record names a checkpoint (the snapshots as a write left them at a seq, store/sqlitedb.py) that a full
check reached: its seq, the digest of every log line up to it, and the digests of the checkpoint's two
documents, which that check found equal to its own fold. The next check reads the lines up to that seq only to
hash them (no JSON, no schema), and when the digests agree folds on from the checkpoint; any change to an
earlier line, to the checkpoint, or a record that does not fit, and the whole log is checked again. The record
is per machine, in the git directory (`<git dir>/wb/cache/`, or `.workbench/.local/` without git), never in
the database: what a database holds does not vouch for itself. `--full` ignores it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from workbench.model import reducer, statefile
from workbench.model.boardfile import parse_board
from workbench.model.layout import Paths
from workbench.store.atomic import atomic_write
from workbench.store.caches import read_json

_NAME = "sqlite-checked.json"


def lines_digest(conn: Any, upto: int, misrecorded: list[int] | None = None) -> tuple[Any, bytes | None]:
    """A running sha256 of the log's lines up to seq `upto` (each followed by a newline), and the last line.
    With `misrecorded`, the seqs whose `hash` column is not their line's hash are put in it (`wb doctor`)."""
    digest = hashlib.sha256()
    update = digest.update
    last = None
    query = "SELECT line, hash, seq FROM events WHERE seq <= ? ORDER BY seq"
    for line, recorded, seq in conn.execute(query, (upto,)):
        if type(line) is not bytes:  # a value rewritten by hand as TEXT reads as its UTF-8, as store/sqlitedb
            line = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else bytes(line)
        update(line)
        update(b"\n")
        last = line
        if misrecorded is not None and hashlib.sha256(line).hexdigest() != recorded:
            misrecorded.append(seq)
    return digest, last


def checked_start(p: Paths, storage: Any, misrecorded: list[int] | None = None,
                  ) -> tuple[int, Any, bytes, reducer.Docs] | None:
    """Where a check may begin: (the seq checked through, the running digest of the lines up to it, its last
    line, the documents at it), or None (check from the first event). `misrecorded`: as `lines_digest`."""
    record = read_json(p.cache / _NAME) or {}
    seq = record.get("through")
    if not isinstance(seq, int) or seq <= 0 or record.get("db") != str(storage.path):
        return None
    state_raw, board_raw = (storage.read_snapshot(f"checkpoint/{seq}/{n}") for n in ("state.md", "board.json"))
    if state_raw is None or board_raw is None or record.get("state") != _sha(state_raw) \
            or record.get("board") != _sha(board_raw):
        return None
    digest, last = lines_digest(storage.conn, seq, misrecorded)
    if last is None or digest.copy().hexdigest() != record.get("lines"):
        return None
    state, body = statefile.read_plain(state_raw)
    return seq, digest, last, reducer.Docs(state, body, parse_board(board_raw))


def remember(p: Paths, storage: Any, seq: int, lines: str, state_raw: bytes, board_raw: bytes) -> None:
    """A full check reached checkpoint `seq` with the lines' digest `lines` and found its documents equal to
    its fold."""
    record = {"db": str(storage.path), "through": seq, "lines": lines, "state": _sha(state_raw),
              "board": _sha(board_raw)}
    try:
        p.cache.mkdir(parents=True, exist_ok=True)
        atomic_write(p.cache / _NAME, json.dumps(record, separators=(",", ":")).encode(), durable=False)
    except OSError:
        pass  # a cache: the next check does the work again


def _sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()
