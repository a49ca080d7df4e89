"""What a workbench holds, read through the storage interface (store/backend.py) whichever backend keeps it:
the snapshots (board.json, state.md), the event log, the tool-call records. A test about wb's behaviour reads
them here rather than opening `.workbench/board.json` itself, so it runs on both backends (WB_TEST_BACKEND,
tests/conftest.py); a test about the files themselves (their bytes, git's view of them, a hand edit) reads the
files and is `files_only`.

On the files backend these are the bytes of `.workbench/` (the event log: its sealed segments, then
events.jsonl); on SQLite, the rows of the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.conftest import TEST_BACKEND

FILES = TEST_BACKEND == "files"  # the files backend: there are git commits of .workbench/ to count


@contextmanager
def storage(root: Path) -> Iterator[Any]:
    """The store/backend.Storage of the workbench at `root` (closed afterwards)."""
    from workbench.store import backend, opening

    wb = opening.discover(root)
    if getattr(wb, "storage", None) is not None:  # store/sqlitedb.SqliteWorkbench
        try:
            yield wb.storage
        finally:
            wb.storage.close()
    else:
        yield backend.FilesStorage(wb)


def snapshots(root: Path) -> tuple[bytes, bytes]:
    """(state.md, board.json) as stored."""
    with storage(root) as st:
        state, board = st.read_snapshots()
    assert state is not None and board is not None, f"no snapshots in the workbench at {root}"
    return state, board


def board(root: Path) -> dict[str, Any]:
    """board.json, parsed."""
    return json.loads(snapshots(root)[1])  # type: ignore[no-any-return]


def tasks(root: Path) -> dict[str, dict[str, Any]]:
    """board.json's tasks by id."""
    return {t["id"]: t for t in board(root)["tasks"]}


def state_text(root: Path) -> str:
    """state.md's text: its frontmatter and the decision log."""
    return snapshots(root)[0].decode("utf-8")


def state(root: Path) -> dict[str, Any]:
    """state.md's frontmatter, parsed."""
    from workbench.model import statefile

    return statefile.parse(snapshots(root)[0]).data  # type: ignore[no-any-return]


def event_bytes(root: Path) -> bytes:
    """Every event line as stored, oldest first, each ending in a newline."""
    with storage(root) as st:
        return st.log.complete_bytes()  # type: ignore[no-any-return]


def events(root: Path) -> list[dict[str, Any]]:
    """Every event, oldest first."""
    return [json.loads(line) for line in event_bytes(root).splitlines()]


def calls(root: Path) -> list[dict[str, Any]]:
    """The tool-call records, oldest first."""
    with storage(root) as st:
        return [json.loads(line) for line in st.calls_bytes().splitlines()]


def recorded_text(root: Path) -> dict[str, str]:
    """Everything the workbench at `root` keeps, as text, by where it is: every file under `.workbench/` (but
    the lock); on SQLite also the database's event lines and call records under the names their files have on
    files (`.workbench/events.jsonl`, `.workbench/calls.jsonl`), its snapshots, and the raw bytes of the
    database file and its write-ahead log (a secret in a freed page is a secret kept)."""
    wbdir = root / ".workbench"
    out = {p.relative_to(root).as_posix(): p.read_bytes().decode("utf-8", "replace")
           for p in wbdir.rglob("*") if p.is_file() and p.name != ".lock"}
    with storage(root) as st:
        if getattr(st, "kind", "files") == "sqlite":
            out[".workbench/events.jsonl"] = st.log.complete_bytes().decode("utf-8", "replace")
            out[".workbench/calls.jsonl"] = st.calls_bytes().decode("utf-8", "replace")
            state, board = st.read_snapshots()
            out[".workbench/state.md"] = (state or b"").decode("utf-8", "replace")
            out[".workbench/board.json"] = (board or b"").decode("utf-8", "replace")
            db = Path(st.path)
            for raw in (db, db.with_name(db.name + "-wal")):
                if raw.exists():
                    out[f"the database file {raw.name}"] = raw.read_bytes().decode("utf-8", "replace")
    return out


def write_config(path: Path, text: str) -> None:
    """Write config.yaml (`path`) as `text`, keeping the lines that name where the workbench is kept
    (`storage:`, `sqlite_path:`): a test that writes its own config.yaml means the same workbench."""
    from workbench.store.backend import STORAGE_KEYS

    kept = [line for line in path.read_text().splitlines(keepends=True) if line.startswith(STORAGE_KEYS)] \
        if path.exists() else []
    if kept and not text.endswith("\n"):
        text += "\n"
    path.write_text(text + "".join(kept))


@contextmanager
def holding_lock(root: Path) -> Iterator[None]:
    """Hold the workbench lock of `root` from this process, as another wb process would: the files backend's
    lock file, or SQLite's write lock (BEGIN IMMEDIATE) on a connection of its own."""
    from workbench.store import opening

    wb = opening.discover(root)
    with wb.lock():
        yield
    if getattr(wb, "storage", None) is not None:
        wb.storage.close()
