"""Issue 33, on SQLite (store/sqliteboard.py): board.json kept in rows of PART_TASKS task lines, a write rewriting
only the rows it changed, and the board a write committed kept by its process for its next load. What the
database holds is still exactly what the log folds to, a database made before parts (board.json in one row)
reads the same and is split by its next write, and nothing a verb hands its caller is shared with what the
process keeps."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_wb
from workbench.api import Bench, init
from workbench.model import reducer
from workbench.model.boardfile import encode_board
from workbench.store.sqliteboard import PART_TASKS, board_parts
from workbench.store.sqlitefile import read_board


def _open(tmp_path: Path, tasks: int) -> Bench:
    path = tmp_path / "scratch"
    path.mkdir()
    init(path, backend="sqlite", no_git=True)
    bench = Bench.open(path)
    bench.import_tasks([{"title": f"task {i}"} for i in range(tasks)])
    return bench


def _db(bench: Bench) -> sqlite3.Connection:
    return sqlite3.connect(bench.root / ".workbench" / "workbench.sqlite3")


def _rows(bench: Bench) -> dict[str, bytes]:
    with _db(bench) as db:
        return {n: bytes(d) for n, d in db.execute("SELECT name, data FROM snapshots WHERE name GLOB 'board.json*'")}


def _folded(bench: Bench) -> bytes:
    """board.json as the whole log folds it."""
    docs = reducer.fold(event for _line, event in bench.wb.log.iter_all())
    assert docs is not None
    return encode_board(docs.board)


def test_parts_join_to_the_bytes_for_any_layout() -> None:
    for raw in (b"", b"{}", b"not json\n", encode_board({"schema_version": 2, "tasks": []}),
                encode_board({"schema_version": 2, "last_event": 3,
                              "tasks": [{"id": f"T-{i:03d}"} for i in range(1, 3 * PART_TASKS + 2)]})):
        assert b"".join(board_parts(raw)) == raw
    few = encode_board({"schema_version": 2, "tasks": [{"id": f"T-{i:03d}"} for i in range(1, PART_TASKS + 1)]})
    assert board_parts(few) == [few]
    many = encode_board({"schema_version": 2, "tasks": [{"id": f"T-{i:03d}"} for i in range(1, 3 * PART_TASKS + 5)]})
    parts = board_parts(many)  # the top level, then runs of PART_TASKS task lines, the last with the closing lines
    assert len(parts) == 5 and parts[0].endswith(b'"tasks": [\n') and parts[-1].endswith(b"  ]\n}\n")
    assert all(part.count(b"\n") == PART_TASKS for part in parts[1:-1]) and parts[-1].count(b"\n") == 4 + 2


def test_a_write_rewrites_the_rows_it_changed_and_they_join_to_the_fold(tmp_path: Path) -> None:
    bench = _open(tmp_path, 3 * PART_TASKS - 5)
    before = _rows(bench)
    assert len(before) == 4 and b"".join(before[n] for n in sorted(before)) == _folded(bench)
    bench.add_task("one more")  # the top level (last_event) and the last row change; the ones between stand
    after = _rows(bench)
    assert sorted(after) == sorted(before)
    assert [n for n in sorted(after) if after[n] != before[n]] == ["board.json", "board.json/000003"]
    bench.done_task("T-020")  # a row between changes
    bench.add_task("and another")
    with _db(bench) as db:
        assert read_board(db) == _folded(bench)
    bench.close()
    for argv in (("validate",), ("doctor",), ("replay", "--verify")):
        r = run_wb(bench.root, *argv)
        assert r.returncode == 0, (argv, r.stdout + r.stderr)


def test_a_board_kept_in_one_row_reads_the_same_and_its_next_write_splits_it(tmp_path: Path) -> None:
    bench = _open(tmp_path, 2 * PART_TASKS)
    whole = read_board(_db(bench))
    bench.close()
    with _db(bench) as db:  # as a database made before parts holds it
        db.execute("DELETE FROM snapshots WHERE name GLOB 'board.json/*'")
        db.execute("UPDATE snapshots SET data = ? WHERE name = 'board.json'", (whole,))
        db.execute("UPDATE meta SET value = '1' WHERE key = 'format'")
    assert run_wb(bench.root, "validate").returncode == 0
    listed = run_wb(bench.root, "task", "list")
    assert listed.returncode == 0 and "task 31" in listed.stdout
    bench = Bench.open(bench.root)
    bench.add_task("after")
    assert len(_rows(bench)) == 4  # the top level, and 2 * PART_TASKS + 1 tasks in three
    with _db(bench) as db:
        assert read_board(db) == _folded(bench)
        assert db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("2",)  # says so now
    bench.close()
    assert run_wb(bench.root, "doctor").returncode == 0


def test_a_row_of_the_board_changed_by_hand_is_found(tmp_path: Path) -> None:
    bench = _open(tmp_path, 2 * PART_TASKS)
    bench.close()
    with _db(bench) as db:
        db.execute("UPDATE snapshots SET data = replace(data, 'task 3\"', 'task X\"') WHERE name = 'board.json/000001'")
    r = run_wb(bench.root, "validate")
    assert r.returncode != 0 and "disagree" in r.stdout + r.stderr, r.stdout + r.stderr
    assert run_wb(bench.root, "doctor", "--fix").returncode == 0
    assert run_wb(bench.root, "validate").returncode == 0


def test_what_a_caller_holds_is_not_what_the_next_write_reads(tmp_path: Path) -> None:
    """The board a write keeps for the next load shares nothing with what the verb returned: a caller that
    changes the task it got changes nothing wb writes next."""
    bench = _open(tmp_path, 40)
    task = bench.add_task("mine", acceptance=["true"], depends_on=["T-001"])
    task["acceptance"].append("rm -rf /")
    task["title"] = "changed by the caller"
    started = bench.start_task("T-002")  # a copy of the board's task, whose lists are the board's
    started["acceptance"].append("rm -rf /")
    started["depends_on"].append("T-040")
    bench.add_task("next")  # loads the kept board
    for tid in (task["id"], "T-002"):  # loads the kept board, and re-encodes the task the caller changed
        bench.block_task(tid, "waiting")
    with _db(bench) as db:
        assert read_board(db) == _folded(bench)
    board = bench.wb.load().docs.board
    for tid, acceptance, depends in ((task["id"], ["true"], ["T-001"]), ("T-002", [], [])):
        found = reducer.find_task(board, tid)
        assert found is not None and (found["acceptance"], found["depends_on"]) == (acceptance, depends)
    bench.close()


def test_a_write_by_another_process_is_read_not_the_kept_board(tmp_path: Path) -> None:
    bench = _open(tmp_path, 40)
    bench.add_task("here")  # keeps its board
    r = run_wb(bench.root, "task", "add", "from the command line")
    assert r.returncode == 0, r.stderr
    added = bench.add_task("here again")
    assert added["id"] == "T-043"  # past the other process's T-042
    board = bench.wb.load().docs.board
    assert [t["title"] for t in board["tasks"][-3:]] == ["here", "from the command line", "here again"]
    with _db(bench) as db:
        assert read_board(db) == _folded(bench)
    bench.close()


def test_a_hand_edit_between_two_writes_is_read_not_what_the_connection_knew(tmp_path: Path) -> None:
    """The connection knows the board it committed (PRAGMA data_version: no other commit since); a person's
    edit of a row through sqlite3 is another connection's commit, so the next write reads the rows again and
    writes its change beside the edit, not over it with rows it remembered."""
    bench = _open(tmp_path, 2 * PART_TASKS)
    bench.add_task("before the edit")
    last = max(_rows(bench))
    with _db(bench) as db:
        db.execute("UPDATE snapshots SET data = replace(data, 'before the edit', 'edited by hand') WHERE name = ?",
                   (last,))
    bench.add_task("after the edit")  # rewrites that row: the task after the edited one joins it
    stored = read_board(_db(bench))
    assert stored is not None and b'"edited by hand"' in stored and b'"after the edit"' in stored
    fresh = Bench.open(bench.root)  # another connection: what the database holds, parsed
    assert encode_board(fresh.wb.load().docs.board) == stored
    fresh.close()
    bench.close()


def test_a_board_put_by_this_connection_is_read_back_as_the_database_holds_it(tmp_path: Path) -> None:
    """After a put that rolled back the database holds the board before it; after one committed by another
    path than a write's stage (`wb doctor --fix`, `wb migrate`, `wb import`), the one put: never the one the
    connection committed before either."""
    bench = _open(tmp_path, 2 * PART_TASKS)
    bench.add_task("kept")  # the connection knows the board it committed
    storage: Any = bench.wb.storage  # type: ignore[attr-defined]
    before = storage.read_board()
    with pytest.raises(RuntimeError), bench.wb.lock():
        storage.kept.put(storage.conn, before.replace(b'"task 3"', b'"task Z"'))
        raise RuntimeError("the write fails before its COMMIT")
    assert storage.read_board() == before == read_board(_db(bench))
    bench.add_task("again")
    before = storage.read_board()
    with bench.wb.lock():
        storage.kept.put(storage.conn, before.replace(b'"task 3"', b'"task Z"'))
    assert storage.read_board() == read_board(_db(bench)) == before.replace(b'"task 3"', b'"task Z"')
    with bench.wb.lock():
        storage.kept.put(storage.conn, before)
    bench.add_task("after")
    assert read_board(_db(bench)) == _folded(bench)
    bench.close()


def test_parts_cut_after_the_parts_before_are_the_parts_cut_afresh() -> None:
    """put cuts the new board.json taking the runs of the board before that it still holds in place: the
    same rows as a cut of the bytes alone, whatever changed (a task added, changed, removed, the top level)."""
    board: dict[str, Any] = {"schema_version": 2, "last_event": 1,
                             "tasks": [{"id": f"T-{i:03d}", "title": f"task {i}"} for i in range(1, 4 * PART_TASKS)]}
    before = board_parts(encode_board(board))
    changes = [lambda b: b["tasks"].append({"id": "T-900", "title": "new"}),
               lambda b: b["tasks"][len(b["tasks"]) // 2].update(title="changed"),
               lambda b: b["tasks"].pop(5), lambda b: b.update(last_event=2),
               lambda b: b["tasks"].extend({"id": f"T-{i}", "title": "x"} for i in range(1000, 1000 + PART_TASKS)),
               lambda b: b["tasks"].__setitem__(slice(None), b["tasks"][:PART_TASKS + 2]),
               lambda b: b["tasks"].pop()]
    for change in changes * 2:
        change(board)
        raw = encode_board(board)
        assert board_parts(raw, before) == board_parts(raw)
        before = board_parts(raw, before)
    del board["tasks"][PART_TASKS:]
    raw = encode_board(board)
    assert board_parts(raw, before) == [raw]


def test_state_md_is_read_again_after_any_commit_since(tmp_path: Path) -> None:
    """state.md (MBs of decision log) is read once while nothing commits (validate and doctor read it twice):
    another connection's commit, or this one's own write, and it is read again."""
    bench = _open(tmp_path, 3)
    storage: Any = bench.wb.storage  # type: ignore[attr-defined]
    first = storage.read_snapshot("state.md")
    assert storage.read_snapshot("state.md") is first  # nothing committed since
    with _db(bench) as db:
        db.execute("UPDATE snapshots SET data = replace(data, 'next_action', 'next_action') || x'0a' "
                   "WHERE name = 'state.md'")
    assert storage.read_snapshot("state.md") == first + b"\n"  # another connection's commit
    bench.add_task("one more")  # this connection's own commit
    with _db(bench) as db:
        assert storage.read_snapshot("state.md") == bytes(db.execute(
            "SELECT data FROM snapshots WHERE name = 'state.md'").fetchone()[0])
    bench.close()


def test_board_rows_mark_the_database_format_2_and_a_newer_format_is_refused(tmp_path: Path) -> None:
    """A database whose board continues in rows says so (meta format 2); one of a format newer than this wb
    reads is refused with one line saying what to do, not misread."""
    bench = _open(tmp_path, 3 * PART_TASKS)
    with _db(bench) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("2",)
        db.execute("UPDATE meta SET value = '3' WHERE key = 'format'")
    bench.close()
    proc = run_wb(bench.root, "task", "list")
    assert proc.returncode != 0
    assert "a newer wb wrote (format 3" in proc.stderr and "upgrade" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
