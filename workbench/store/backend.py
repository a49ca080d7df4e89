"""The storage interface: what the transaction, the loaders, replay, validate and `wb export`/`wb import` need
of the place a workbench is kept, and the two places that implement it.

- `files` (the default): the files of `.workbench/` committed to git — the event log in events.jsonl and its
  sealed segments (store/eventlog.py), the snapshots state.md and board.json, the tool-call journal
  calls.jsonl; durability by fsync and the pending journal in the git directory (store/pending.py), the lock
  a file lock with a queue (store/lock.py).
- `sqlite`: one SQLite database (store/sqlitedb.py): the same event lines, byte for byte, in a table keyed by
  seq, the same snapshots' bytes, the same call records; WAL mode, one database transaction per mutation, the
  lock SQLite's own write lock (BEGIN IMMEDIATE).

Both keep the same events (same JSON line encoding, so the same `prev` hash chain), the same snapshots
validated against the same schemas; a workbench moves between them with `wb export` / `wb import`
(`dump`, `load_dump`), losslessly: the dump holds the event and call lines as stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from workbench.errors import Refused, UsageError, WorkbenchError

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Protocol

    from workbench.store.eventlog import Tail

BACKENDS = ("files", "sqlite")
DUMP_FORMAT = 1
# the `wb` command this process runs (cli/app.py sets it), for a backend to refuse one it does not serve with one
# line rather than half-serve it (store/sqlitedb.UNSUPPORTED)
command: str | None = None


if TYPE_CHECKING:  # the interface both backends implement, for the type checker
    class EventStore(Protocol):
        """The event log as the callers read and append it (store/eventlog.EventLog is the files one)."""

        def tail(self) -> Tail: ...  # the last event's seq and line hash: where the next event chains

        def read_after(self, seq: int) -> list[dict[str, Any]]: ...  # the events after `seq`, oldest first

        def scan_after(self, seq: int) -> tuple[Tail, list[dict[str, Any]]]: ...  # tail + read_after, one read

        def iter_all(self) -> Iterator[tuple[bytes, dict[str, Any]]]: ...  # every event, oldest first, chain checked

        def iter_backwards(self) -> Iterator[tuple[bytes, dict[str, Any]]]: ...  # newest first, chain checked

        def lines_backwards(self) -> Iterator[bytes]: ...  # the stored lines, newest first, unchecked

        def complete_bytes(self) -> bytes: ...  # every event line, oldest first, newline-terminated

        def append(self, events: list[dict[str, Any]], tail: Tail) -> None: ...  # durable before it returns


    class Storage(Protocol):
        """One workbench's storage: its event log, its snapshots, its call journal."""

        kind: str  # "files" | "sqlite"

        @property
        def log(self) -> EventStore: ...

        def read_snapshots(self) -> tuple[bytes | None, bytes | None]: ...  # (state.md, board.json) as stored

        def calls_bytes(self) -> bytes: ...  # the tool-call journal's lines, newline-terminated

        def import_lines(self, events: bytes, calls: bytes, state: bytes, board: bytes) -> None: ...
        # an empty workbench filled with a dump's lines and the snapshots they fold to, in one step


def find_nogit(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a `.workbench/` kept in SQLite (outside git)."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        config = candidate / ".workbench" / "config.yaml"
        if config.is_file():
            return candidate if is_sqlite_config(config) else None
    return None


def is_sqlite_config(path: Path) -> bool:
    """Whether the config.yaml at `path` names the SQLite backend. One read of a small file when it does not
    mention `storage` (every files workbench); parsed (and cached, store/config.py) when it does."""
    try:
        text = path.read_bytes()
    except OSError:
        return False
    if b"storage" not in text:
        return False
    from workbench.store.config import load_config

    try:
        return kind_of(load_config(path)) == "sqlite"
    except Refused:  # a config.yaml wb refuses (a YAML tag, a bad value): the backend its own line names, whose
        # load then reports what is wrong with config.yaml (the files backend would report its missing files)
        import re

        return re.search(rb"^storage:[ \t]*[\"']?sqlite[\"']?[ \t]*(#.*)?$", text, re.M) is not None


# the commands the SQLite backend does not serve yet: each exits 2 with one line (refuse_unsupported)
SQLITE_UNSUPPORTED = {"sync": "wb sync", "textconv": "wb textconv", "merge-driver": "wb merge-driver"}


def unsupported(what: str) -> UsageError:
    """The one line a command the SQLite backend does not serve exits with (exit 2)."""
    return UsageError(f"{what} is not supported on the SQLite backend yet (docs/storage.md): `wb export FILE`, "
                      "then `wb import FILE` in a git repository, moves the workbench to the files backend")


def refuse_unsupported(start: Path) -> None:
    """Refuse the command this process runs (`command`) when the workbench found from `start` is kept in SQLite
    and the command is not served there. Only those commands pay for the look (a few stats and one read)."""
    if command not in SQLITE_UNSUPPORTED:
        return
    from workbench.git.repo import find_worktree

    try:
        root: Path | None = find_worktree(start)
    except WorkbenchError:
        root = find_nogit(start)
    if root is not None and is_sqlite_config(root / ".workbench" / "config.yaml"):
        raise unsupported(SQLITE_UNSUPPORTED[command])


def kind_of(config: dict[str, Any]) -> str:
    """The backend config.yaml names (`storage:`), `files` when it names none."""
    return str(config.get("storage") or "files")


class FilesStorage:
    """The files-in-git backend seen through the interface (the transaction writes it itself)."""

    kind = "files"

    def __init__(self, wb: Any) -> None:
        self.wb = wb
        self.log = wb.log

    def read_snapshots(self) -> tuple[bytes | None, bytes | None]:
        from workbench.store.atomic import read_or_none

        return read_or_none(self.wb.paths.state), read_or_none(self.wb.paths.board)

    def calls_bytes(self) -> bytes:
        from workbench.model.jsonl import split_lines
        from workbench.store.atomic import read_or_none

        lines, _torn = split_lines(read_or_none(self.wb.paths.calls) or b"")  # a torn tail was never acknowledged
        return b"".join(line + b"\n" for line in lines)

    def import_lines(self, events: bytes, calls: bytes, state: bytes, board: bytes) -> None:
        from workbench.store.atomic import write_workbench_file

        root = self.wb.paths.wb
        # the log and the journal first; state.md and board.json the `create` transaction of `wb init` rebuilds
        # from the log (the same code a crash between an append and the snapshots is caught up by)
        write_workbench_file(root, "calls.jsonl", calls)
        write_workbench_file(root, "events.jsonl", events)


# -- the dump `wb export` writes and `wb import` reads ------------------------------------------------------------
#
# One file: a first line {"wb_dump": 1, "config": <config.yaml text without its storage lines>, "events": N,
# "calls": M}, then the N event lines as stored, then the M call lines. The snapshots are not in it: the events
# rebuild them (`wb replay --verify` on either side says they do).

STORAGE_KEYS = ("storage:", "sqlite_path:")


def portable_config(text: str) -> str:
    """config.yaml without the lines that name the backend: what moves from one backend to the other."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(STORAGE_KEYS))


def dump(config_text: str, events: bytes, calls: bytes) -> bytes:
    import json

    n_events = events.count(b"\n")
    n_calls = calls.count(b"\n")
    head = json.dumps({"wb_dump": DUMP_FORMAT, "config": portable_config(config_text), "events": n_events,
                       "calls": n_calls}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return head.encode() + b"\n" + events + calls


def write_dump(path: Path, data: bytes) -> None:
    """The dump written whole to the file the user named (`wb export FILE`, outside `.workbench/`)."""
    from workbench.store.atomic import atomic_write

    try:
        atomic_write(path, data)
    except OSError as err:
        raise Refused(f"cannot write {path}: {err.strerror or err}") from None


def read_dump(path: Path) -> tuple[str, bytes, bytes]:
    """(config text, event lines, call lines) of a dump; Refused naming what is wrong with it."""
    import json

    try:
        data = path.read_bytes()
    except OSError as err:
        raise Refused(f"cannot read {path}: {err.strerror or err}") from None
    head, _, rest = data.partition(b"\n")
    try:
        meta = json.loads(head)
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or meta.get("wb_dump") != DUMP_FORMAT or not isinstance(meta.get("config"), str):
        raise Refused(f"{path}: not a wb dump (made by `wb export`)")
    lines = rest.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    n_events, n_calls = meta.get("events"), meta.get("calls")
    if not isinstance(n_events, int) or not isinstance(n_calls, int) or len(lines) != n_events + n_calls:
        raise Refused(f"{path}: cut short or damaged ({len(lines)} lines, its header says "
                      f"{n_events} events and {n_calls} calls)")
    events = b"".join(line + b"\n" for line in lines[:n_events])
    calls = b"".join(line + b"\n" for line in lines[n_events:])
    return meta["config"], events, calls
