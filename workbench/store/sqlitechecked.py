"""`wb validate` on SQLite, and what this machine has checked of its log, so that validate and doctor check only
what came after (issue 33: at 50,000 events SQLite's validate read, schema-checked and folded every event, 6× the
files backend, which trusts its sealed segments by digest — workbench/store/logcheck.py).

The record names a checkpoint (the snapshots as a write left them at a seq, store/sqlitedb.py) that a full
check reached: its seq, the digest of every log line up to it, and the digests of the checkpoint's two
documents, which that check found equal to its own fold. The next check reads the lines up to that seq only to
hash them (no JSON, no schema), and when the digests agree folds on from the checkpoint; any change to an
earlier line, to the checkpoint, or a record that does not fit, and the whole log is checked again. The record
is per machine, in the git directory (`<git dir>/wb/cache/`, or `.workbench/.local/` without git), never in
the database: what a database holds does not vouch for itself. `--full` ignores it.

`wb doctor` also checks each of those rows' `hash` and `type` columns (a query by type reads the index; the hash
is what the line was when written). A whole check that found them right records their digests too (`hashes`,
`types`: each value followed by a space, in seq order — validate takes each line's hash from the next line's
`prev`); doctor then asks SQLite to join those columns in the same read as the lines and compares digests, and
only when they differ (or a value is a BLOB, which joins like the TEXT of its bytes) looks at each row — then
says which — and, finding them right, records the digests it found (issue 33: 50,000 hashes and a JSON type
extracted per row were most of doctor's time on SQLite).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from workbench.errors import NotFound, Refused
from workbench.model import reducer, schemas, statefile
from workbench.model.boardfile import parse_board
from workbench.model.jsonl import line_hash
from workbench.model.layout import Paths
from workbench.store.atomic import atomic_write
from workbench.store.caches import read_json
from workbench.store.sqlitefile import blob

if TYPE_CHECKING:
    from workbench.store.sqlitedb import SqliteStorage, SqliteWorkbench

_NAME = "sqlite-checked.json"


def lines_digest(conn: Any, upto: int, misrecorded: list[int] | None = None) -> tuple[Any, bytes | None]:
    """A running sha256 of the log's lines up to seq `upto` (each followed by a newline), and the last line.
    With `misrecorded`, the seqs whose `hash` column is not their line's hash are put in it (`wb doctor`)."""
    if misrecorded is None:
        return _joined_digest(conn, upto)
    digest = hashlib.sha256()
    sha = hashlib.sha256
    last = None
    rows = conn.execute("SELECT line, hash, seq FROM events WHERE seq <= ? ORDER BY seq", (upto,))
    while batch := rows.fetchmany(_RUN):
        # a value rewritten by hand as TEXT reads as its UTF-8, as store/sqlitedb
        lines = [line if type(line) is bytes else blob(line) for line, _hash, _seq in batch]
        digest.update(b"\n".join(lines))
        digest.update(b"\n")
        misrecorded.extend([seq for line, (_line, recorded, seq) in zip(lines, batch, strict=True)
                            if sha(line).hexdigest() != recorded])
        last = lines[-1]
    return digest, last


_RUN = 2000  # lines SQLite joins at a time: ~0.6 MB of notes
# a rowid range is read in rowid order: no ORDER BY, whose subquery cost a tenth of the join (were SQLite ever to
# join in another order, the digest would differ and the check would read the whole log: never a wrong `unchanged`)
_LINES = "CAST(group_concat(line, x'0a') AS BLOB)"
_JOIN = f"SELECT {_LINES} FROM events WHERE seq > ? AND seq <= ?"
# the `hash` and `type` columns too, each value followed by a space (a run's join ends with one), and whether any
# is a BLOB, which joins as the TEXT of its bytes would (BLOBs sort after all TEXT: the largest is one)
_COLUMNS = "CAST(group_concat(hash, ' ') AS BLOB), CAST(group_concat(type, ' ') AS BLOB), " \
           "max(hash) >= x'' OR max(type) >= x''"
_JOIN_COLUMNS = f"SELECT {_LINES}, {_COLUMNS} FROM events WHERE seq > ? AND seq <= ?"


def _joined_digest(conn: Any, upto: int) -> tuple[Any, bytes | None]:
    """`lines_digest` without the per-line look: SQLite joins each run of lines (no Python object per line, a
    third of the time at 50,000 events)."""
    return joined(conn, upto, None)


class Columns:
    """The running digests of the `hash` and `type` columns as SQLite joins them, and whether either held a BLOB."""

    __slots__ = ("blob", "hashes", "types")

    def __init__(self) -> None:
        self.hashes, self.types, self.blob = hashlib.sha256(), hashlib.sha256(), False

    def digests(self) -> tuple[str, str]:
        return self.hashes.hexdigest(), self.types.hexdigest()


def joined(conn: Any, upto: int, columns: Columns | None) -> tuple[Any, bytes | None]:
    """The lines' running digest and the last line up to seq `upto`; with `columns`, those of the two columns
    too."""
    digest = hashlib.sha256()
    after = 0
    while after < upto:
        row = conn.execute(_JOIN if columns is None else _JOIN_COLUMNS, (after, min(after + _RUN, upto))).fetchone()
        if row[0] is not None:
            digest.update(row[0])
            digest.update(b"\n")
            if columns is not None:
                columns.hashes.update(row[1])
                columns.hashes.update(b" ")
                columns.types.update(row[2])
                columns.types.update(b" ")
                columns.blob = columns.blob or bool(row[3])
        after += _RUN
    last = conn.execute("SELECT line FROM events WHERE seq <= ? ORDER BY seq DESC LIMIT 1", (upto,)).fetchone()
    return digest, (blob(last[0]) if last is not None else None)


def column_digests(conn: Any, upto: int) -> tuple[str, str, bool]:
    """(the digest of the `hash` column up to seq `upto`, of the `type` column, whether either holds a BLOB), as
    SQLite joins them: what a record's `hashes` and `types` are compared with."""
    columns = Columns()
    joined(conn, upto, columns)
    return (*columns.digests(), columns.blob)


class Expected:
    """The digests `column_digests` would give of the rows a check reads from the first event on, as they should
    read: each line's hash (the next line's `prev`, which the chain check compared with it; the line's own at the
    end) and its event's type. Taken 2,000 rows at a time, so a long log holds no list of them all."""

    __slots__ = ("hashes", "pending_hashes", "pending_types", "types")

    def __init__(self) -> None:
        self.hashes, self.types = hashlib.sha256(), hashlib.sha256()
        self.pending_hashes: list[str] = []
        self.pending_types: list[str] = []

    def add(self, event: dict[str, Any]) -> None:
        """The next event, read by SqliteLog.iter_all (its `prev` checked)."""
        if event["seq"] > 1:
            self.pending_hashes.append(event["prev"])
        self.pending_types.append(event["type"])
        if len(self.pending_types) >= _RUN:
            self.hashes.update(_spaced(self.pending_hashes))
            self.types.update(_spaced(self.pending_types))
            self.pending_hashes, self.pending_types = [], []

    def at(self, line: bytes) -> tuple[str, str]:
        """The digests up to the last event added, whose line is `line`."""
        hashes, types = self.hashes.copy(), self.types.copy()
        hashes.update(_spaced([*self.pending_hashes, line_hash(line)]))
        types.update(_spaced(self.pending_types))
        return hashes.hexdigest(), types.hexdigest()


def _spaced(values: list[str]) -> bytes:
    return "".join(f"{value} " for value in values).encode()


class Start:
    """Where a check may begin (`checked_start`): the seq checked through, the running digest of the lines up to
    it, its last line, the documents at it, and — for doctor — whether the `hash` and `type` columns up to it
    are the ones a check found right (`columns_known`; `columns`: their digests as SQLite joined them now, which
    doctor records once a look at each row finds them right)."""

    __slots__ = ("columns", "columns_known", "digest", "docs", "last", "seq")

    def __init__(self, seq: int, digest: Any, last: bytes, docs: reducer.Docs, columns_known: bool,
                 columns: tuple[str, str] | None) -> None:
        self.seq, self.digest, self.last, self.docs = seq, digest, last, docs
        self.columns_known, self.columns = columns_known, columns


def checked_start(p: Paths, storage: Any, misrecorded: list[int] | None = None) -> Start | None:
    """Where a check may begin, or None (check from the first event). `misrecorded` (doctor): the lines' hash
    and type columns are checked too — by their digests when the record has them and they agree
    (`columns_known`), otherwise each line's recorded hash against its own (the seqs that differ are put in
    `misrecorded`), and the type column is the caller's to check."""
    record = read_json(p.cache / _NAME) or {}
    seq = record.get("through")
    if not isinstance(seq, int) or seq <= 0 or record.get("db") != str(storage.path):
        return None
    state_raw, board_raw = (storage.read_snapshot(f"checkpoint/{seq}/{n}") for n in ("state.md", "board.json"))
    if state_raw is None or board_raw is None or record.get("state") != _sha(state_raw) \
            or record.get("board") != _sha(board_raw):
        return None
    known, columns = False, None
    if misrecorded is None:
        digest, last = _joined_digest(storage.conn, seq)
    else:
        found = Columns()
        digest, last = joined(storage.conn, seq, found)
        columns = None if found.blob else found.digests()  # a BLOB: never vouched for
        known = columns is not None and columns == (record.get("hashes"), record.get("types"))
        if not known and last is not None and digest.copy().hexdigest() == record.get("lines"):
            lines_digest(storage.conn, seq, misrecorded)  # the lines are the ones checked: look at each hash
    if last is None or digest.copy().hexdigest() != record.get("lines"):
        return None
    state, body = statefile.read_plain(state_raw)
    return Start(seq, digest, last, reducer.Docs(state, body, parse_board(board_raw)), known, columns)


def vouch_columns(p: Paths, storage: Any, start: Start) -> None:
    """The `hash` and `type` columns up to the record's checkpoint were checked row by row and found right:
    record their digests, so that the next doctor compares digests instead."""
    record = read_json(p.cache / _NAME) or {}
    if start.columns is None or record.get("through") != start.seq or record.get("db") != str(storage.path):
        return
    record["hashes"], record["types"] = start.columns
    _write(p, record)


def remember(p: Paths, storage: Any, seq: int, lines: str, state_raw: bytes, board_raw: bytes,
             columns: tuple[str, str] | None = None) -> None:
    """A full check reached checkpoint `seq` with the lines' digest `lines` and found its documents equal to
    its fold; `columns`: the digests of the `hash` and `type` columns up to it, when that check found them
    right (else doctor checks them row by row next time, and then records them)."""
    record: dict[str, Any] = {"db": str(storage.path), "through": seq, "lines": lines, "state": _sha(state_raw),
                              "board": _sha(board_raw)}
    if columns is not None:
        record["hashes"], record["types"] = columns
    _write(p, record)


def _write(p: Paths, record: dict[str, Any]) -> None:
    try:
        p.cache.mkdir(parents=True, exist_ok=True)
        atomic_write(p.cache / _NAME, json.dumps(record, separators=(",", ":")).encode(), durable=False)
    except OSError:
        pass  # a cache: the next check does the work again


def _sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


class Folded:
    """What the log folds to, taken on the way through `validate`'s one read of it: the documents, how many
    events, and the Refused an event that cannot be applied raised (folding stopped there)."""

    __slots__ = ("docs", "error", "events")

    def __init__(self) -> None:
        self.docs: Any = None
        self.events = 0
        self.error: Refused | None = None


def validate(wb: SqliteWorkbench, folded: Folded | None = None, *, full: bool = False) -> list[str]:
    """`wb validate` on SQLite: config.yaml, every event against its schema and the chain, the snapshots
    against theirs, every call record, and the whole log's fold against the snapshots. With `folded`, the
    events are also folded as they are read (issue 33: one read of the log for both, not two), from the last
    checkpoint a check on this machine reached when the lines up to it are unchanged (store/sqlitechecked.py;
    `full`: from the first event)."""
    import hashlib

    from workbench.model import reducer, statefile
    from workbench.model.boardfile import duplicate_ids, parse_board
    from workbench.store.config import load_config

    problems: list[str] = []
    try:
        load_config(wb.paths.config)
    except (Refused, NotFound) as err:
        problems.append(str(err))
    reached = None
    with wb.storage.reading():
        start = None if full or folded is None else checked_start(wb.paths, wb.storage)
        after, prev, digest = 0, None, hashlib.sha256()
        if start is not None and folded is not None:
            after, digest, folded.docs = start.seq, start.digest, start.docs
            prev, folded.events = line_hash(start.last), after
        # from the first event: the hash and type columns as they should read up to a checkpoint, for doctor
        expected = Expected() if after == 0 else None
        checkpoints = set(wb.storage.checkpoints()) if folded is not None else set()
        try:
            log: Any = wb.log  # this backend's: store/sqlitedb.SqliteLog
            for line, event in log.iter_all(after, prev):
                digest.update(line)
                digest.update(b"\n")
                if expected is not None:
                    expected.add(event)
                problems.extend(str(e) for e in schemas.errors("event", event, f"events (seq {event['seq']})"))
                if folded is not None and folded.error is None:
                    try:
                        folded.docs = reducer.fold_more(folded.docs, (event,))
                        folded.events += 1
                    except Refused as err:  # raised when it matters: when the log is otherwise valid
                        folded.error = err
                if event["seq"] in checkpoints and folded is not None and folded.error is None and not problems:
                    lines = digest.copy().hexdigest()
                    columns = None if expected is None else expected.at(line)
                    reached = reached_checkpoint(wb.storage, event["seq"], folded.docs, lines, columns) or reached
        except Refused as err:
            problems.append(str(err))
        state_raw, board_raw = wb.storage.read_snapshots()
        if state_raw is None or board_raw is None:
            problems.append(f"{wb.storage.path}: no snapshots (run `wb init --backend sqlite`)")
            return problems
        try:
            state, _body = statefile.parse_plain(state_raw)  # no ruamel for what wb wrote (issue 33)
            problems.extend(str(e) for e in schemas.errors("state", state, "state.md"))
            board = parse_board(board_raw)
            problems.extend(str(e) for e in schemas.errors("board", board, "board.json"))
            problems.extend(f"board.json: tasks[{i}].id: duplicate id {tid}"
                            for i, tid in duplicate_ids(board.get("tasks")))
        except Refused as err:
            problems.append(str(err))
        for number, line in enumerate(wb.storage.calls_bytes().splitlines(), start=1):
            try:
                call = json.loads(line)
            except ValueError:
                problems.append(f"calls:{number}: damaged record (not JSON)")
                continue
            problems.extend(str(e) for e in schemas.errors("call", call, f"calls:{number}"))
    if reached is not None and not problems:
        remember(wb.paths, wb.storage, *reached)
    return problems


def reached_checkpoint(storage: SqliteStorage, seq: int, docs: Any, lines: str, columns: tuple[str, str] | None = None,
                       ) -> tuple[int, str, bytes, bytes, tuple[str, str] | None] | None:
    """Checkpoint `seq`, when its documents are the fold's: (seq, the lines' digest, its two documents, the
    columns' digests as given)."""
    from workbench.model import statefile
    from workbench.model.boardfile import parse_board

    state_raw, board_raw = (storage.read_snapshot(f"checkpoint/{seq}/{n}") for n in ("state.md", "board.json"))
    if state_raw is None or board_raw is None:
        return None
    try:
        same = statefile.read_plain(state_raw) == (docs.state, docs.body) and parse_board(board_raw) == docs.board
    except Refused:
        return None
    return (seq, lines, state_raw, board_raw, columns) if same else None
