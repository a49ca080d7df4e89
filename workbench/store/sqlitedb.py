"""The SQLite backend (`storage: sqlite` in config.yaml, `wb init --backend sqlite`): the workbench in one
database file, through the storage interface of store/backend.py.

Where: `sqlite_path` of config.yaml (relative to the work tree's top), else `<git dir>/wb/workbench.sqlite3`
(a linked worktree: `<common git dir>/wb/worktrees/<key>/workbench.sqlite3`, which `git worktree remove` leaves
alone; store/kept.py);
`wb init --no-git` (no repository: a CI runner, a scratch directory) names `.workbench/workbench.sqlite3`.
config.yaml stays a file in `.workbench/` (a person edits it); everything else is in the database:

    events(seq PRIMARY KEY, type, hash, line)  the event lines exactly as events.jsonl would hold them, so the
                                               `prev` hash chain is the same; `hash` is the line's own
    snapshots(name PRIMARY KEY, data)          state.md and board.json, the bytes the files backend would write
                                               (board.json in rows of 16 tasks past 16: store/sqliteboard.py)
    calls(n PRIMARY KEY, key, line)            calls.jsonl's records, as its lines

WAL mode and synchronous=FULL: a mutation is acknowledged once its COMMIT returns, and a kill -9 at any moment
loses nothing acknowledged (tests/reliability/test_crash.py, the `sqlite_` points). The lock is SQLite's own:
a transaction begins with BEGIN IMMEDIATE (waiting up to lock_timeout, then exit 6 as with the file lock), loads
inside it, and ends with one COMMIT that holds its events and both snapshots; an exception rolls it all back.
Readers (`wb status`) read one consistent snapshot of the database and take no lock.

Not on this backend: git commits of the state (there are no files to commit), hand edits of state.md and
board.json (there are no files to edit: the verbs and `wb set` are the way in) and the pending journal
(SQLite's durability takes its place); `wb sync` and git's drivers exit 2 with one line saying so
(store/backend.refuse_unsupported). The board's archive segments stay files, as on files; the agent hooks'
spool sits beside the database and the SQLite transaction folds it (store/sqlitetx.py). `wb doctor`
(ops/doctor_sqlite.py), `wb migrate` (migrate/sqlite.py) and `wb diff` between points of the log
(review/logpoints.py) have this backend's own code.
"""

from __future__ import annotations

import copy
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import Busy, NotFound, Refused
from workbench.git.repo import CommitOutcome, GitRepo
from workbench.model import reducer, schemas
from workbench.model.jsonl import encode, line_hash
from workbench.model.layout import WB_DIR
from workbench.store.eventlog import LogMoved, Tail
from workbench.store.sqliteboard import PUT, KeptBoard
from workbench.store.sqliteerrors import os_errors
from workbench.store.sqlitefile import (
    BOARD,
    DB_NAME,
    blob,
    check_not_foreign,
    check_schema,
    db_path,
    read_board,
    read_snapshot_row,
)
from workbench.store.workbench import Loaded, Workbench

if TYPE_CHECKING:
    from workbench.model.provenance import Who
    from workbench.store.transaction import Transaction

GITIGNORE = b"# wb: kept in SQLite (docs/storage.md); only config.yaml is a file\nworkbench.sqlite3*\n.local/\n"
NO_GIT_PATH = f"{WB_DIR}/{DB_NAME}"
# the database's layout, in meta: 1 board.json in one row; 2 board.json may continue in rows of its own
# (store/sqliteboard.py). A database of a format newer than this wb's is refused, never misread.
FORMAT = 2
CHECKPOINT_EVERY = 1000
CHECKPOINTS_KEPT = 3
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY, type TEXT NOT NULL, hash TEXT NOT NULL,
                                  line BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_type ON events(type, seq);
CREATE TABLE IF NOT EXISTS snapshots(name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS calls(n INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT, line BLOB NOT NULL);
"""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


_blob = blob  # a BLOB column's bytes (store/sqlitefile.py)


def _parse(line: bytes, seq: int) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        raise Refused(f"workbench.sqlite3: the event at seq {seq} is damaged (not JSON); run `wb validate`") from None
    if not isinstance(event, dict) or event.get("seq") != seq:
        raise Refused(f"workbench.sqlite3: the event at seq {seq} does not hold seq {seq}; run `wb validate`")
    return event


class SqliteLog:
    """The event log in the `events` table: store/backend.EventStore."""

    def __init__(self, db: SqliteStorage) -> None:
        self.db = db

    def tail(self) -> Tail:
        row = self.db.conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        return Tail(row[0], row[1], 0, 0) if row else Tail(0, None, 0, 0)

    def read_after(self, seq: int) -> list[dict[str, Any]]:
        rows = self.db.conn.execute("SELECT seq, line FROM events WHERE seq > ? ORDER BY seq", (seq,))
        return [_parse(line, s) for s, line in rows]

    def read_between(self, after: int, upto: int) -> list[dict[str, Any]]:
        """The events after seq `after` up to seq `upto`, both ends' seqs as given."""
        rows = self.db.conn.execute("SELECT seq, line FROM events WHERE seq > ? AND seq <= ? ORDER BY seq",
                                    (after, upto))
        return [_parse(line, s) for s, line in rows]

    def write_start(self, seq: int) -> int:
        """The seq before the newest line at or before `seq` that ends a write (carries no `more`), so that the
        lines after it begin with that line; 0 when none does."""
        for s, line in self.db.conn.execute("SELECT seq, line FROM events WHERE seq <= ? ORDER BY seq DESC", (seq,)):
            if not _parse(line, s).get("more"):
                return int(s) - 1
        return 0

    def bytes_of_types(self, types: tuple[str, ...], upto: int) -> bytes:
        """The lines of events of these types up to seq `upto`, oldest first (the index on type)."""
        marks = ",".join("?" * len(types))
        return b"".join(_blob(line) + b"\n" for (line,) in self.db.conn.execute(
            f"SELECT line FROM events WHERE type IN ({marks}) AND seq <= ? ORDER BY seq", (*types, upto)))

    def bytes_between(self, after: int, upto: int) -> bytes:
        """The log's lines after seq `after` up to seq `upto`, as stored (not parsed), each ending in a newline."""
        return b"".join(_blob(line) + b"\n" for (line,) in self.db.conn.execute(
            "SELECT line FROM events WHERE seq > ? AND seq <= ? ORDER BY seq", (after, upto)))

    def scan_after(self, seq: int) -> tuple[Tail, list[dict[str, Any]]]:
        with self.db.reading():
            return self.tail(), self.read_after(seq)

    def by_type(self, types: tuple[str, ...], limit: int) -> list[dict[str, Any]]:
        """The newest `limit` events of these types, newest first (the index on type)."""
        marks = ",".join("?" * len(types))
        rows = self.db.conn.execute(f"SELECT seq, line FROM events WHERE type IN ({marks}) ORDER BY seq DESC "
                                    "LIMIT ?", (*types, limit))
        return [_parse(line, s) for s, line in rows]

    def iter_all(self, after: int = 0, prev: str | None = None) -> Iterator[tuple[bytes, dict[str, Any]]]:
        """Every event (after seq `after`, the line before them hashing to `prev`), the chain checked."""
        expect = after + 1
        for seq, line in self.db.conn.execute("SELECT seq, line FROM events WHERE seq > ? ORDER BY seq", (after,)):
            event = _parse(line, seq)
            if seq != expect:
                raise Refused(f"workbench.sqlite3: seq {seq} follows seq {expect - 1}: a gap in the log")
            if event.get("prev") != prev:
                raise Refused(f"workbench.sqlite3: seq {seq}: hash chain broken")
            yield _blob(line), event
            prev = line_hash(_blob(line))
            expect += 1

    def iter_backwards(self) -> Iterator[tuple[bytes, dict[str, Any]]]:
        newer: dict[str, Any] | None = None
        for seq, line in self.db.conn.execute("SELECT seq, line FROM events ORDER BY seq DESC"):
            event = _parse(line, seq)
            if newer is not None and (seq != newer["seq"] - 1 or newer.get("prev") != line_hash(_blob(line))):
                raise Refused(f"workbench.sqlite3: seq {newer['seq']}: hash chain broken")
            yield _blob(line), event
            newer = event

    def lines_backwards(self) -> Iterator[bytes]:
        for (line,) in self.db.conn.execute("SELECT line FROM events ORDER BY seq DESC"):
            yield _blob(line)

    def complete_bytes(self) -> bytes:
        return b"".join(_blob(line) + b"\n" for (line,) in self.db.conn.execute("SELECT line FROM events ORDER BY seq"))

    unsealed_bytes = complete_bytes

    def iter_unsealed(self, res: Any = None) -> Iterator[tuple[bytes, dict[str, Any]]]:
        return self.iter_all()

    def headers(self) -> list[Any]:
        return []  # no sealed segments: one table holds every event

    def sealed_chain(self) -> list[Any]:
        return []

    def append(self, events: list[dict[str, Any]], tail: Tail) -> None:
        """Insert a batch inside the open write transaction (the caller's COMMIT makes it durable)."""
        if self.tail() != tail:
            raise LogMoved("workbench.sqlite3 changed under this write")
        self.db.conn.executemany("INSERT INTO events(seq, type, hash, line) VALUES (?, ?, ?, ?)",
                                 [(e["seq"], e["type"], line_hash(enc), enc) for e in events for enc in [encode(e)]])


class SqliteStorage:
    """One database: store/backend.Storage."""

    kind = "sqlite"

    def __init__(self, path: Path, timeout: float = 10.0, *, create: bool = False) -> None:
        self.path = path
        if not create and not path.exists():
            raise NotFound(f"the workbench's database {path} is missing: restore it, or run "
                           "`wb init --backend sqlite` to start an empty one")
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists() and path.stat().st_size > 0
        try:
            with os_errors(path):
                self.conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
                self.conn.execute("PRAGMA trusted_schema=OFF")  # no function runs from a view or trigger
                if existed:
                    self._refuse_foreign(path)
                    self._refuse_newer(path)
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=FULL")
                if create:
                    self.conn.executescript(SCHEMA)
                    self.conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('format', ?)",
                                      (str(FORMAT),))
                check_schema(self.conn, path)
        except sqlite3.DatabaseError as err:
            raise Refused(f"{path}: not a wb database ({err})") from None
        self.log = SqliteLog(self)
        self.kept = KeptBoard()  # board.json as this connection committed it last (store/sqliteboard.py)
        # state.md as read last, and PRAGMA data_version then: another connection's commit changes it, this one's
        # own put forgets it
        self.state_read: tuple[int, bytes] | None = None

    def _refuse_foreign(self, path: Path) -> None:
        try:
            check_not_foreign(self.conn, path)
        except Refused:
            self.conn.close()
            raise

    def _refuse_newer(self, path: Path) -> None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError:
            return  # no meta table: check_schema says what is missing
        found = str(row[0]) if row else "1"
        if not found.isdigit() or int(found) > FORMAT:
            self.conn.close()
            raise Refused(f"{path}: a database a newer wb wrote (format {found}; this wb reads formats 1 to "
                          f"{FORMAT}): use that wb, or upgrade this one")

    def close(self) -> None:
        self.conn.close()

    def share_between_threads(self) -> None:
        """Open the connection again for use by any thread (`wb serve`'s handlers, whose reads take turns
        under the server's own lock: sqlite3 refuses a connection made in another thread otherwise)."""
        (busy,) = self.conn.execute("PRAGMA busy_timeout").fetchone()
        self.conn.close()
        self.conn = sqlite3.connect(str(self.path), timeout=busy / 1000, isolation_level=None,
                                    check_same_thread=False)
        self.conn.execute("PRAGMA trusted_schema=OFF")
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.kept = KeptBoard()  # what it knew was the other connection's
        self.state_read = None

    def reading(self) -> _Reading:
        """A consistent read of the database (a read transaction), unless a write transaction is open."""
        return _Reading(self.conn)

    def read_snapshots(self) -> tuple[bytes | None, bytes | None]:
        return self.read_snapshot("state.md"), self.read_board()

    def read_board(self) -> bytes | None:
        """board.json's bytes: as this connection committed them when no other has committed since, else read."""
        raw = self.kept.stored(self.conn)
        return raw if raw is not None else read_board(self.conn)

    def put_snapshots(self, state: bytes, board: bytes, parsed: tuple[dict[str, Any], str] | None = None, *,
                      body_changed: bool = True) -> None:
        """Both snapshots, and state.md's frontmatter (JSON) and decision log (text) apart (`parsed`): what a
        load reads instead of parsing the YAML, and `wb status` without the decision log (the files backend
        keeps the same in its cache, store/caches.py). `body_changed=False`: the decision log row stands."""
        rows = [("state.md", state)]
        self.state_read = None
        self.kept.put(self.conn, board)  # in rows, only those the write changed (store/sqliteboard.py)
        if parsed is not None:
            rows.append(("state.json", json.dumps(parsed[0], ensure_ascii=False, separators=(",", ":")).encode()))
            if body_changed or not self.conn.execute("SELECT 1 FROM snapshots WHERE name = 'state.body'").fetchone():
                rows.append(("state.body", parsed[1].encode("utf-8")))
        else:
            self.conn.execute("DELETE FROM snapshots WHERE name IN ('state.json', 'state.body')")
        self.conn.executemany(PUT, rows)
        tail = self.conn.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
        newest = max(self.checkpoints(), default=0)
        if tail // CHECKPOINT_EVERY > newest // CHECKPOINT_EVERY:
            self.put_checkpoint(tail, state, board)

    # -- checkpoints: the snapshots as they were at a seq, kept so that `wb diff @SEQ` folds from the nearest one
    # at or before SEQ instead of from the first event (issue 33: 50,000 events folded for `wb diff @-1`). One is
    # kept by the first write past each CHECKPOINT_EVERY events, the newest CHECKPOINTS_KEPT of them; in the same
    # transaction as the snapshots, so a checkpoint is what the log folded to at its seq.
    def checkpoints(self) -> list[int]:
        """The seqs checkpoints are kept at, oldest first."""
        names = self.conn.execute("SELECT name FROM snapshots WHERE name GLOB 'checkpoint/*/state.md'")
        return sorted(int(seq) for (name,) in names for seq in [name.split("/")[1]] if seq.isdigit())

    def put_checkpoint(self, seq: int, state: bytes, board: bytes) -> None:
        self.conn.executemany(PUT,
                              [(f"checkpoint/{seq}/state.md", state), (f"checkpoint/{seq}/board.json", board)])
        for old in self.checkpoints()[:-CHECKPOINTS_KEPT]:
            self.conn.execute("DELETE FROM snapshots WHERE name GLOB ?", (f"checkpoint/{old}/*",))

    def read_checkpoint(self, at_most: int) -> tuple[int, bytes, bytes] | None:
        """The newest checkpoint at or before seq `at_most`: (its seq, state.md, board.json), or None."""
        for seq in reversed(self.checkpoints()):
            if seq <= at_most:
                state, board = (self.read_snapshot(f"checkpoint/{seq}/{name}") for name in ("state.md", "board.json"))
                if state is not None and board is not None:
                    return seq, state, board
        return None

    def read_snapshot(self, name: str) -> bytes | None:
        if name == BOARD:
            return self.read_board()
        if name == "state.md":  # read again only when a commit came since (validate and doctor read it twice)
            version = self.conn.execute("PRAGMA data_version").fetchone()[0]
            if self.state_read is not None and self.state_read[0] == version:
                return self.state_read[1]
        raw = read_snapshot_row(self.conn, name)
        if name == "state.md":
            self.state_read = (version, raw) if raw is not None else None
        return raw

    def append_calls(self, records: list[dict[str, Any]]) -> None:
        self.conn.executemany("INSERT INTO calls(key, line) VALUES (?, ?)",
                              [(str(r.get("key") or ""), json.dumps(r, ensure_ascii=False,
                                                                    separators=(",", ":")).encode()) for r in records])

    def calls_bytes(self) -> bytes:
        return b"".join(_blob(line) + b"\n" for (line,) in self.conn.execute("SELECT line FROM calls ORDER BY n"))

    def recorded_call(self, key: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT line FROM calls WHERE key = ? ORDER BY n DESC LIMIT 1", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def import_lines(self, events: bytes, calls: bytes, state: bytes, board: bytes,
                     checkpoint: tuple[int, bytes, bytes] | None = None) -> None:
        """Fill an empty database: the lines as given, in one transaction (with the snapshots as they were at a
        seq before the last, `checkpoint`, when the caller folded past one)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if self.conn.execute("SELECT 1 FROM events LIMIT 1").fetchone():
                raise Refused(f"{self.path} already holds a workbench: `wb import` fills an empty one only")
            rows = []
            for line in events.splitlines():
                event = json.loads(line)
                rows.append((event["seq"], event["type"], line_hash(line), line))
            self.conn.executemany("INSERT INTO events(seq, type, hash, line) VALUES (?, ?, ?, ?)", rows)
            self.conn.executemany("INSERT INTO calls(key, line) VALUES (?, ?)",
                                  [(str(json.loads(line).get("key") or ""), line) for line in calls.splitlines()])
            if checkpoint is not None:
                self.put_checkpoint(*checkpoint)
            from workbench.model import statefile

            parsed = statefile.parse(state)  # kept apart as a write keeps it: no load parses its YAML again
            self.put_snapshots(state, board, (parsed.data, parsed.body))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise


class _Reading:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.began = False

    def __enter__(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.began = True

    def __exit__(self, *exc: object) -> None:
        if self.began and self.conn.in_transaction:
            self.conn.execute("COMMIT")


class SqliteLock:
    """SQLite's write lock, held from BEGIN IMMEDIATE to COMMIT (or ROLLBACK): the workbench lock of this
    backend. `with wb.lock():` and the transaction use it alike."""

    def __init__(self, db: SqliteStorage, timeout: float) -> None:
        self.db = db
        self.timeout = timeout

    def acquire(self) -> None:
        self.db.conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        try:
            with os_errors(self.db.path):
                self.db.conn.execute("BEGIN IMMEDIATE")
            self.db.kept.begun()
        except sqlite3.OperationalError as err:
            if "locked" in str(err) or "busy" in str(err):
                raise Busy(f"another wb process holds the workbench lock for more than {self.timeout:g}s; "
                           "retry when it finishes (WB_LOCK_TIMEOUT raises the wait)") from None
            raise Refused(f"{self.db.path}: {err}") from None

    def commit(self) -> None:
        with os_errors(self.db.path):
            self.db.conn.execute("COMMIT")

    def release(self) -> None:
        if self.db.conn.in_transaction:
            self.db.conn.execute("ROLLBACK")

    def __enter__(self) -> SqliteLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None and self.db.conn.in_transaction:
            self.commit()
        self.release()


class NoGit(GitRepo):
    """The git side of a workbench kept without a repository (`wb init --no-git`): what wb keeps per clone in
    the git directory (the trust store, the refused attempts, caches) is kept in `.workbench/.local/`, and
    there is no git operation, HEAD or commit to ask about."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.local = root / WB_DIR / ".local"

    @property
    def git_dir(self) -> Path:
        return self.local

    @property
    def common_dir(self) -> Path:
        return self.local

    def operation_in_progress(self) -> str | None:
        return None

    def wait_for_users_git(self, seconds: float = 10.0) -> bool:
        return False

    def symbolic_head(self) -> str | None:
        return None

    def read_ref(self, ref: str) -> str | None:
        return None

    def committed_file(self, path: str, ref: str = "HEAD") -> bytes | None:
        return None

    def workbench_left_out(self) -> str | None:
        return None


class SqliteWorkbench(Workbench):
    """A workbench kept in SQLite: the files backend's Workbench with its storage, load and transaction
    replaced; config.yaml (and artifacts/) stay files in `.workbench/`."""

    def __init__(self, root: Path, config: dict[str, Any] | None = None, *, create: bool = False) -> None:
        super().__init__(root)
        from workbench.store.config import load_config

        opened = config if config is not None else load_config(self.paths.config)
        if opened.get("sqlite_path") == NO_GIT_PATH:
            self.git = NoGit(root)
            self.git.local.mkdir(parents=True, exist_ok=True)
        self._config = opened
        path = db_path(root, opened)
        if not create and not path.exists():
            from workbench.store import kept

            named = opened.get("sqlite_path")
            raise NotFound(kept.missing(root, path, str(named) if named else None,
                                        None if isinstance(self.git, NoGit) else self.git.git_dir))
        self.storage = SqliteStorage(path, self._timeout(), create=create)
        self.log = self.storage.log  # type: ignore[assignment]
        # where the database is was read now; the rest of config.yaml is read when first asked for, as on files
        # (a Bench opened before a person edits config.yaml sees the edit on its next verb)
        self._config = config

    @property
    def config(self) -> dict[str, Any]:
        if self._config is None:
            from workbench.store import trust
            from workbench.store.config import load_config

            config = load_config(self.paths.config)
            self.held_settings = trust.held_settings(self.git.common_dir, config)  # as the files backend does
            self.raw_config = config
            self._config = trust.without(config, self.held_settings) if self.held_settings else config
        return self._config

    @property
    def has_git(self) -> bool:
        return self.config.get("sqlite_path") != NO_GIT_PATH

    def _timeout(self) -> float:
        env = os.environ.get("WB_LOCK_TIMEOUT")
        return float(env) if env else float(self.config["lock_timeout"])

    def lock(self) -> SqliteLock:  # type: ignore[override]
        return SqliteLock(self.storage, self._timeout())

    def register_drivers_if_cloned(self) -> None:
        return None  # no state files in git: nothing for git's diff and merge drivers to show

    def deferred(self) -> str | None:
        return None  # git's operations never touch the database

    def pending_events(self, tail: Tail) -> list[dict[str, Any]]:
        return []  # no pending journal: an acknowledged write is in the database

    def checkpoint(self, summary: str, session: str | None = None) -> CommitOutcome:
        return CommitOutcome()  # every transaction was durable at its COMMIT; no git commit on this backend

    def recorded_call(self, key: str) -> dict[str, Any] | None:
        with self.storage.reading():
            return self.storage.recorded_call(key)

    def load(self, *, detect_human: bool = True, need_node: bool = False, need_body: bool = True,
             create: bool = False, thorough: bool = False) -> Loaded:
        """The snapshots and the events after them (none: both are written in the transaction that appends),
        from one consistent read of the database."""
        from workbench.model import ids, statefile
        from workbench.model.boardfile import encode_board, parse_board
        from workbench.model.reducer import Docs

        with self.storage.reading():
            db = self.storage
            parsed_raw = None if (need_node or create) else db.read_snapshot("state.json")
            body_raw = db.read_snapshot("state.body") if parsed_raw is not None and need_body else None
            state_raw: bytes | None
            if parsed_raw is not None and (body_raw is not None or not need_body):
                # wb status: the frontmatter alone, neither state.md's bytes nor its decision log
                state_raw = db.read_snapshot("state.md") if need_body else b""
                board_raw = db.read_snapshot("board.json")
            else:
                parsed_raw = None
                state_raw, board_raw = db.read_snapshots()
            rebuilt: tuple[str, ...] = ()
            if state_raw is None or board_raw is None:
                if not create:
                    raise NotFound(f"the workbench's database {self.storage.path} holds no workbench yet: run "
                                   "`wb init --backend sqlite`")
                folded = reducer.fold((event for _line, event in self.log.iter_all()), empty_ts=ids.utc_now())
                assert folded is not None
                state_raw = statefile.render(None, folded.state, folded.body)
                board_raw = encode_board(folded.board)
                rebuilt = ("state.md", "board.json")
            tail = self.log.tail()
            if parsed_raw is not None and not rebuilt:  # written with these bytes, in one transaction: no YAML
                node = None
                state = json.loads(parsed_raw)
                body = body_raw.decode("utf-8") if body_raw is not None else ""
            else:
                node, state, body = self.parse_state(state_raw)
            board = db.kept.take(board_raw)  # the board this connection committed last, when still stored
            if board is None:
                board = parse_board(board_raw, own=True)  # validated when it was written
            schemas.check_version("state.md", state.get("schema_version"), reducer.STATE_VERSION)
            schemas.check_version("board.json", board.get("schema_version"), reducer.BOARD_VERSION)
            docs = Docs(state, body, board)
            docs.board_raw = board_raw
            last = _int(state.get("last_event"))
            if tail.seq < last:
                raise Refused(f"state.md: last_event {last} is beyond the event log's last seq {tail.seq}")
            after = self.log.read_after(last) if tail.seq > last else []
            for event in after:
                schemas.check("event", event, f"events (seq {event['seq']})")
                reducer.apply(docs, event, board_from=_int(board.get("last_event")))
        return Loaded(docs, tail, node, state_raw, copy.deepcopy(state), [], replayed=len(after), rebuilt=rebuilt)

    def transaction(self, actor: str = "agent", session: str | None = None, *, commit: bool = True,
                    create: bool = False, who: Who | None = None, dry: bool = False) -> Transaction:
        from workbench.store.sqlitetx import SqliteTransaction  # a reader (wb status) imports no write path

        # as a Workbench: its `lock()` override returns a SqliteLock, not the WorkbenchLock that StageWorkbench
        # (store/stagecontext.py) names; the SQLite stages take it as `Any`
        wb: Workbench = self
        return SqliteTransaction(wb, actor, session, commit=commit, create=create, who=who, dry=dry)


# -- finding a workbench, and what this backend does not do ---------------------------------------------------

if TYPE_CHECKING:  # mypy checks that both backends implement the interface of store/backend.py
    from workbench.store.backend import EventStore, FilesStorage, Storage
    from workbench.store.eventlog import EventLog

    def _implements(a: SqliteLog, b: EventLog, c: SqliteStorage, d: FilesStorage) -> tuple[EventStore, ...]:
        sqlite: Storage = c
        files: Storage = d
        return (a, b, sqlite.log, files.log)
