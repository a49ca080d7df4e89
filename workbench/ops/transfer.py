"""`wb export FILE` / `wb import FILE`: a workbench moved between the storage backends (store/backend.py),
losslessly: the dump holds config.yaml (less the lines naming the backend), every event line and every call
record as stored; the snapshots are folded from the events on import, so `wb replay --verify` agrees on both
sides, and export → import → export gives the same bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.errors import Refused, UsageError
from workbench.model import reducer, schemas
from workbench.model.jsonl import line_hash
from workbench.store import backend
from workbench.store.workbench import Workbench


def export(wb: Workbench, target: Path) -> dict[str, Any]:
    """Write the dump of `wb` to `target`: {"events": N, "calls": M, "bytes": size}."""
    storage: Any = getattr(wb, "storage", None) or backend.FilesStorage(wb)
    if storage.kind == "files" and wb.pending_events(wb.log.tail()):
        raise Refused("events are waiting in the pending journal (git was mid-operation): run any wb write "
                      "first, then export")
    config_text = wb.paths.config.read_text(encoding="utf-8")
    reading = storage.reading() if storage.kind == "sqlite" else None
    if reading is not None:
        reading.__enter__()
    try:
        for _line, _event in wb.log.iter_all():  # the chain checked end to end: a dump is never of a broken log
            pass
        events = wb.log.complete_bytes()
        calls = storage.calls_bytes()
    finally:
        if reading is not None:
            reading.__exit__(None, None, None)
    data = backend.dump(config_text, events, calls)
    backend.write_dump(target, data)
    return {"file": str(target), "backend": storage.kind, "events": events.count(b"\n"),
            "calls": calls.count(b"\n"), "bytes": len(data)}


def _fold(events: bytes, source: Path) -> tuple[reducer.Docs, tuple[int, bytes, bytes] | None]:
    """The documents the dump's events fold to, each event validated and the chain checked, and the documents
    at a seq before the end (a checkpoint: seq, state.md, board.json), or None for a short log."""
    from workbench.model import ids, statefile
    from workbench.model.boardfile import encode_board
    from workbench.store.sqlitedb import CHECKPOINT_EVERY

    parsed = []
    prev = None
    for n, line in enumerate(events.splitlines(), start=1):
        try:
            event = json.loads(line)
        except ValueError:
            raise Refused(f"{source}: event line {n} is not JSON") from None
        if not isinstance(event, dict) or event.get("seq") != n or event.get("prev") != prev:
            raise Refused(f"{source}: event line {n}: seq or hash chain broken")
        schemas.check("event", event, f"{source} (seq {n})")
        parsed.append(event)
        prev = line_hash(line)
    # folded in two parts when the log is long: the documents at the last whole thousand before the end are kept
    # as the SQLite backend's checkpoint (`wb diff @-1` then folds a few events, not all of them)
    at = (len(parsed) - 1) // CHECKPOINT_EVERY * CHECKPOINT_EVERY
    docs = reducer.fold(iter(parsed[:at] if at else parsed), empty_ts=ids.utc_now())
    assert docs is not None
    checkpoint = None
    if at:
        checkpoint = (at, statefile.render(None, docs.state, docs.body), encode_board(docs.board))
        reducer.fold_more(docs, iter(parsed[at:]))
    return docs, checkpoint


def import_(start: Path, source: Path, kind: str, *, no_git: bool = False, db: str | None = None) -> dict[str, Any]:
    """Make a workbench in `start` (a git work tree's; with `no_git` the directory itself) from a dump, kept
    in `kind`. Refused where a workbench already is."""
    from workbench.model import statefile
    from workbench.model.boardfile import encode_board
    from workbench.store.atomic import write_workbench_file

    if kind not in backend.BACKENDS:
        raise UsageError(f"--backend: {kind!r} is not files or sqlite")
    if kind == "files" and (no_git or db):
        raise UsageError("--no-git and --db are for --backend sqlite: the files backend keeps the workbench in git")
    config_text, events, calls = backend.read_dump(source)
    if not events:
        raise Refused(f"{source}: holds no events")
    docs, checkpoint = _fold(events, source)
    if no_git:
        root = start.resolve()
    else:
        from workbench.git.repo import find_worktree

        root = find_worktree(start)
    if (root / ".workbench").exists():
        raise Refused(f"{root}/.workbench already exists: `wb import` makes a new workbench (import elsewhere, or "
                      "remove it first)")
    if kind == "sqlite":
        from workbench.store import sqlitedb
        from workbench.store.archive import write_sealed
        from workbench.store.config import parse_config

        path = db or (sqlitedb.NO_GIT_PATH if no_git else None)
        text = config_text + "storage: sqlite\n" + (f"sqlite_path: {json.dumps(path)}\n" if path else "")
        wb = sqlitedb.SqliteWorkbench(root, parse_config(text.encode()), create=True)
        write_workbench_file(wb.paths.wb, "config.yaml", text.encode())
        write_workbench_file(wb.paths.wb, ".gitignore", sqlitedb.GITIGNORE)
        write_sealed(wb.paths, docs)  # the board's archive segments, as the files backend keeps them
        wb.storage.import_lines(events, calls, statefile.render(None, docs.state, docs.body), encode_board(docs.board),
                                checkpoint)
        commit = None
    else:
        from workbench.ops import init as initcmd
        from workbench.store.config import parse_config

        parse_config(config_text.encode())  # refused before anything is written
        files = Workbench(root)
        write_workbench_file(files.paths.wb, "config.yaml", config_text.encode())
        from workbench.store.archive import write_sealed

        write_sealed(files.paths, docs)  # the board's archive segments the events seal (init rebuilds the rest)
        backend.FilesStorage(files).import_lines(events, calls, b"", b"")
        _wb, _created, last = initcmd.init(root)  # rebuilds state.md and board.json from the log, and commits
        commit = last.commit
    return {"workbench": str(root), "backend": kind, "events": events.count(b"\n"), "calls": calls.count(b"\n"),
            "commit": commit}
