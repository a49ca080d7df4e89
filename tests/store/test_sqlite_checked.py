"""Issue 33: `wb validate` on SQLite checks only what came after the last checkpoint a check on this machine
reached — the lines up to it are hashed, not parsed, and the fold goes on from the checkpoint (at 50,000 events
0.78 s → 0.17 s of CPU, the files backend's 0.13 s) — and still finds any change to those earlier lines."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import run_wb
from workbench.api import Bench, init


def _long_sqlite_log(path: Path) -> Bench:
    path.mkdir()
    init(path, backend="sqlite", no_git=True)
    bench = Bench.open(path)
    for batch in range(7):  # 1,400 notes: a checkpoint past seq 1,000
        with bench.wb.transaction(actor="agent") as tx:
            for i in range(200):
                tx.emit("note.add", {"text": f"note {batch}.{i}"})
    return bench


def _db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path / ".workbench" / "workbench.sqlite3")


def test_a_change_before_the_checked_checkpoint_is_still_found(tmp_path: Path) -> None:
    path = tmp_path / "scratch"
    bench = _long_sqlite_log(path)
    [seq] = bench.wb.storage.checkpoints()  # type: ignore[attr-defined]
    bench.close()
    assert run_wb(path, "validate").returncode == 0
    record = json.loads((path / ".workbench" / ".local" / "wb" / "cache" / "sqlite-checked.json").read_text())
    assert record["through"] == seq  # the next check starts there
    assert run_wb(path, "validate").returncode == 0  # from the record: still valid
    with _db(path) as db:  # a hand edit of an event long before the checkpoint
        db.execute("UPDATE events SET line = replace(line, 'note 0.5\"', 'note 0.X\"') WHERE seq = 7")
    r = run_wb(path, "validate")
    assert r.returncode != 0 and "hash chain broken" in r.stdout + r.stderr, r.stdout + r.stderr


def test_a_checkpoint_changed_by_hand_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "scratch"
    bench = _long_sqlite_log(path)
    [seq] = bench.wb.storage.checkpoints()  # type: ignore[attr-defined]
    bench.close()
    assert run_wb(path, "validate").returncode == 0
    with _db(path) as db:  # the checkpoint's board says a task exists that no event added
        board = json.loads(db.execute("SELECT data FROM snapshots WHERE name = ?",
                                      (f"checkpoint/{seq}/board.json",)).fetchone()[0])
        board["tasks"].append({"id": "T-999", "title": "never added", "status": "todo"})
        db.execute("UPDATE snapshots SET data = ? WHERE name = ?",
                   (json.dumps(board).encode(), f"checkpoint/{seq}/board.json"))
    r = run_wb(path, "validate")  # its digest no longer matches: the whole log is checked, and it is valid
    assert r.returncode == 0, r.stdout + r.stderr
    assert run_wb(path, "validate", "--full").returncode == 0


def test_a_task_added_after_the_checkpoint_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "scratch"
    bench = _long_sqlite_log(path)
    assert run_wb(path, "validate").returncode == 0
    bench.add_task("After the checkpoint")
    bench.close()
    with _db(path) as db:  # the newest event, past the checkpoint, made invalid by hand
        db.execute("UPDATE events SET line = replace(line, '\"actor\":\"agent\"', '\"actor\":42') "
                   "WHERE seq = (SELECT max(seq) FROM events)")
        last = db.execute("SELECT max(seq) FROM events").fetchone()[0]
    r = run_wb(path, "validate")
    assert r.returncode != 0 and f"seq {last}" in r.stdout + r.stderr, r.stdout + r.stderr


def test_doctor_starts_from_the_checkpoint_and_still_finds_what_is_wrong_before_it(tmp_path: Path) -> None:
    """`wb doctor` remembers the checkpoint a whole check reached as validate does (at 50,000 events: 0.74 s of
    CPU and 141 MB → 0.25–0.32 s and 58 MB; the files backend 0.22–0.25 s, 72 MB), and what it checks of the
    lines before it — their recorded hash, their type column — it still checks, without parsing them."""
    path = tmp_path / "scratch"
    bench = _long_sqlite_log(path)
    [seq] = bench.wb.storage.checkpoints()  # type: ignore[attr-defined]
    bench.close()
    r = run_wb(path, "doctor")
    assert r.returncode == 0, r.stdout + r.stderr
    record = json.loads((path / ".workbench" / ".local" / "wb" / "cache" / "sqlite-checked.json").read_text())
    assert record["through"] == seq
    with _db(path) as db:
        db.execute("UPDATE events SET type = 'note.remove' WHERE seq = 9")
    r = run_wb(path, "doctor")
    assert r.returncode == 1 and "type_index" in r.stdout and "seq 9" in r.stdout, r.stdout + r.stderr
    assert run_wb(path, "doctor", "--fix").returncode == 0
    assert run_wb(path, "doctor").returncode == 0
    with _db(path) as db:
        db.execute("UPDATE events SET hash = ? WHERE seq = 11", ("0" * 64,))
    r = run_wb(path, "doctor")
    assert r.returncode == 1 and "seq 11: the line is not the one written" in r.stdout, r.stdout + r.stderr


def test_the_joined_digest_is_the_line_by_line_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """validate hashes the lines SQLite joins a run at a time; doctor (which also compares each line with its
    recorded hash) hashes them one by one: the same digest and last line, up to any seq, across runs, a row
    rewritten by hand as TEXT included — so that either's record lets the other start from the checkpoint."""
    from workbench.store import sqlitechecked

    monkeypatch.setattr(sqlitechecked, "_RUN", 300)  # runs of 300 lines: 1,400 of them cross four boundaries
    path = tmp_path / "scratch"
    _long_sqlite_log(path).close()
    with _db(path) as db:
        db.execute("UPDATE events SET line = CAST(line AS TEXT) WHERE seq IN (300, 301, 777)")
        db.execute("DELETE FROM events WHERE seq = 900")  # a gap: both skip it alike
        tail = db.execute("SELECT max(seq) FROM events").fetchone()[0]
        assert tail > 1200
        for upto in (0, 1, 299, 300, 301, 600, 900, 901, tail, tail + 500):
            joined, last = sqlitechecked.lines_digest(db, upto)
            each, last_each = sqlitechecked.lines_digest(db, upto, [])
            assert (joined.hexdigest(), last) == (each.hexdigest(), last_each), upto
        assert sqlitechecked.lines_digest(db, 0)[1] is None
        assert sqlitechecked.lines_digest(db, 777)[1] == bytes(db.execute("SELECT line FROM events WHERE seq = 777")
                                                                .fetchone()[0], "utf-8")


def _record(path: Path) -> dict:
    return json.loads((path / ".workbench" / ".local" / "wb" / "cache" / "sqlite-checked.json").read_text())


def test_validate_records_the_hash_and_type_columns_as_sqlite_joins_them(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole check records, beside the lines' digest, the digests of the `hash` and `type` columns up to the
    checkpoint as they should read (each line's own hash, its event's type): doctor compares them with what
    SQLite joins of the columns (issue 33: no per-line hash), so both sides must join alike — validate from the
    chain it checked, doctor from the rows it checked one by one."""
    from workbench.store import sqlitechecked

    monkeypatch.setattr(sqlitechecked, "_RUN", 300)  # runs of 300 rows: 1,400 of them cross four boundaries
    path = tmp_path / "scratch"
    _long_sqlite_log(path).close()
    assert run_wb(path, "validate").returncode == 0
    by_validate = _record(path)
    with _db(path) as db:
        assert sqlitechecked.column_digests(db, by_validate["through"]) == (by_validate["hashes"],
                                                                            by_validate["types"], False)
    (path / ".workbench" / ".local" / "wb" / "cache" / "sqlite-checked.json").unlink()
    assert run_wb(path, "doctor").returncode == 0
    assert _record(path) == by_validate  # doctor's whole check records the same


def test_doctor_checks_the_columns_one_by_one_when_their_digests_differ_and_then_vouches_for_them(
        tmp_path: Path) -> None:
    path = tmp_path / "scratch"
    _long_sqlite_log(path).close()
    assert run_wb(path, "validate").returncode == 0
    record = _record(path)
    cache = path / ".workbench" / ".local" / "wb" / "cache" / "sqlite-checked.json"
    cache.write_text(json.dumps(record | {"hashes": "0" * 64}))  # a record that no longer fits the columns
    r = run_wb(path, "doctor")  # each line's hash compared with its own, each type with its line's: all sound
    assert r.returncode == 0, r.stdout + r.stderr
    assert _record(path) == record  # and the columns, checked one by one, are vouched for again


def test_a_column_rewritten_by_hand_as_a_blob_of_the_same_bytes_is_still_found(tmp_path: Path) -> None:
    """A BLOB joins as the same bytes as the TEXT it replaced: doctor asks SQLite whether any is one."""
    path = tmp_path / "scratch"
    _long_sqlite_log(path).close()
    assert run_wb(path, "validate").returncode == 0
    with _db(path) as db:
        db.execute("UPDATE events SET type = CAST(type AS BLOB) WHERE seq = 12")
    r = run_wb(path, "doctor")
    assert r.returncode == 1 and "type_index" in r.stdout and "seq 12" in r.stdout, r.stdout + r.stderr
    assert run_wb(path, "doctor", "--fix").returncode == 0
    assert run_wb(path, "doctor").returncode == 0
    with _db(path) as db:
        db.execute("UPDATE events SET hash = CAST(hash AS BLOB) WHERE seq = 13")
    r = run_wb(path, "doctor")
    assert r.returncode == 1 and "seq 13: the line is not the one written" in r.stdout, r.stdout + r.stderr


def test_a_large_snapshot_reads_the_same_through_blob_io(tmp_path: Path) -> None:
    """A snapshot row past 64 KB is read through SQLite's incremental blob I/O inside a transaction (issue 33): the
    same bytes as a SELECT gives, outside one too, and a row rewritten by hand as TEXT reads as its UTF-8."""
    path = tmp_path / "scratch"
    bench = _long_sqlite_log(path)
    storage = bench.wb.storage  # type: ignore[attr-defined]
    with _db(path) as db:
        stored = {name: bytes(data) for name, data in db.execute("SELECT name, data FROM snapshots")}
    big = [name for name, data in stored.items() if len(data) > 64 * 1024]
    assert "state.md" in big and "state.body" in big, {n: len(d) for n, d in stored.items()}
    for name in big:
        with storage.reading():
            assert storage.read_snapshot(name) == stored[name], name
        assert storage.read_snapshot(name) == stored[name], name
    bench.close()
    with _db(path) as db:
        db.execute("UPDATE snapshots SET data = CAST(data AS TEXT) WHERE name = 'state.body'")
    bench = Bench.open(path)
    with bench.wb.storage.reading():  # type: ignore[attr-defined]
        assert bench.wb.storage.read_snapshot("state.body") == stored["state.body"]  # type: ignore[attr-defined]
    bench.close()
