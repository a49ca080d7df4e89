"""`wb doctor` on a workbench kept in SQLite: the database damaged by hand with sqlite3 — a snapshot row, the
frontmatter kept beside state.md, an event line, the type index — is reported; `--fix` folds the snapshots
and the index again from the log, and never rewrites the log itself. A write killed before its COMMIT leaves
nothing to repair. Each workbench here is made with `--backend sqlite`, whatever the pass."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from tests.conftest import run_wb, spawn_wb
from tests.damage import database
from workbench.api import Bench, init


def _doctor(repo: Path, *args: str) -> tuple[int, dict]:
    proc = run_wb(repo, "doctor", "--json", *args)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _codes(report: dict) -> set[str]:
    return {f["code"] for f in report["findings"]}


def _sql(repo: Path, statement: str, *args: object) -> None:
    """One statement run by hand on the workbench's database, as a person with the sqlite3 shell would."""
    db = database(repo)
    assert db is not None and db.exists()
    conn = sqlite3.connect(db)
    try:
        with conn:
            conn.execute(statement, args)
    finally:
        conn.close()


def _row(repo: Path, query: str) -> object:
    db = database(repo)
    assert db is not None
    with sqlite3.connect(db) as conn:
        return conn.execute(query).fetchone()[0]


def _seeded(repo: Path) -> Bench:
    init(repo, backend="sqlite")
    bench = Bench.open(repo)
    bench.add_task("Parse the config", acceptance=["true"])
    bench.start_task("T-001")
    bench.note("Chose a hand-written parser.")
    return bench


def _titles(repo: Path) -> list[str]:
    proc = run_wb(repo, "task", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    return [t["title"] for t in (data["tasks"] if isinstance(data, dict) else data)]


def test_a_healthy_database_has_nothing_to_repair_and_claims_nothing_of_files_or_git(repo: Path) -> None:
    _seeded(repo)
    assert _doctor(repo) == (0, {"healthy": True, "findings": []})
    assert _doctor(repo, "--full") == (0, {"healthy": True, "findings": []})  # PRAGMA integrity_check
    assert _doctor(repo, "--fix") == (0, {"healthy": True, "findings": []})
    proc = run_wb(repo, "doctor")
    assert proc.returncode == 0 and proc.stdout.strip() == "healthy: nothing to repair"


def test_a_snapshot_row_changed_by_hand_is_reported_and_folded_again_from_the_log(repo: Path) -> None:
    _seeded(repo)
    events = _row(repo, "SELECT count(*) FROM events")
    # sqlite3's replace() returns TEXT: the row's type changes too, as a hand edit in the shell would leave it
    _sql(repo, "UPDATE snapshots SET data = replace(data, 'Parse the config', 'Not what the log says') "
               "WHERE name = 'board.json'")
    code, report = _doctor(repo)
    assert code == 1 and _codes(report) == {"snapshots_damaged"}, report
    [finding] = report["findings"]
    assert "board.json" in finding["message"] and "Not what the log says" in finding["message"]
    assert finding["fixable"] and not finding["fixed"]
    assert run_wb(repo, "validate").returncode == 5  # the same disagreement, seen by validate's replay
    code, report = _doctor(repo, "--fix")
    assert code == 0 and report["findings"][0]["fixed"], report
    assert _titles(repo) == ["Parse the config"]
    assert _row(repo, "SELECT count(*) FROM events") == events  # the log is the truth: no event rewritten
    assert run_wb(repo, "validate").returncode == 0
    assert run_wb(repo, "replay", "--verify").returncode == 0
    assert _doctor(repo) == (0, {"healthy": True, "findings": []})
    assert Bench.open(repo).add_task("Then another")["id"] == "T-002"  # writes go on from the rebuilt board


def test_the_frontmatter_kept_beside_state_md_and_a_missing_snapshot_are_rebuilt(repo: Path) -> None:
    _seeded(repo)
    kept = json.loads(_row(repo, "SELECT data FROM snapshots WHERE name = 'state.json'"))  # type: ignore[arg-type]
    _sql(repo, "UPDATE snapshots SET data = ? WHERE name = 'state.json'",
         json.dumps({**kept, "blockers": ["a blocker no event set"]}).encode())
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    assert status["blockers"] == ["a blocker no event set"]  # what `wb status` reads, damaged
    code, report = _doctor(repo)
    assert code == 1 and _codes(report) == {"snapshots_damaged"}
    assert "state.json" in report["findings"][0]["message"]
    assert _doctor(repo, "--fix")[0] == 0
    assert json.loads(run_wb(repo, "status", "--json").stdout)["blockers"] == []
    _sql(repo, "DELETE FROM snapshots WHERE name = 'board.json'")
    code, report = _doctor(repo)
    assert code == 1 and "board.json missing" in report["findings"][0]["message"]
    assert _doctor(repo, "--fix")[0] == 0 and _titles(repo) == ["Parse the config"]
    assert _doctor(repo) == (0, {"healthy": True, "findings": []})


def test_a_broken_event_line_is_reported_with_its_seq_and_never_rewritten(repo: Path) -> None:
    _seeded(repo)
    _sql(repo, "UPDATE events SET line = substr(line, 1, 30) WHERE seq = 3")  # cut short: not JSON
    damaged = _row(repo, "SELECT line FROM events WHERE seq = 3")
    code, report = _doctor(repo, "--fix")
    assert code == 1, report
    [finding] = [f for f in report["findings"] if f["code"] == "log_damaged"]
    assert "seq 3" in finding["message"] and not finding["fixable"] and not finding["fixed"]
    assert _row(repo, "SELECT line FROM events WHERE seq = 3") == damaged


def test_the_last_event_edited_in_place_is_found_by_the_hash_recorded_when_it_was_written(repo: Path) -> None:
    """No later event's `prev` covers the last line: the hash kept beside it, since its INSERT, does."""
    _seeded(repo)
    last = _row(repo, "SELECT max(seq) FROM events")
    line = _row(repo, f"SELECT line FROM events WHERE seq = {last}")
    assert isinstance(line, bytes) and b"hand-written" in line
    _sql(repo, "UPDATE events SET line = ? WHERE seq = ?", line.replace(b"hand-written", b"generated"), last)
    code, report = _doctor(repo, "--fix")
    assert code == 1
    [finding] = [f for f in report["findings"] if f["code"] == "log_damaged"]
    assert f"seq {last}" in finding["message"] and "not the one written" in finding["message"]


def test_the_type_index_is_rebuilt_from_the_lines(repo: Path) -> None:
    _seeded(repo)
    def indexed() -> list[int]:  # the events a query by type finds (store/sqlitedb.SqliteLog.by_type)
        return [e["seq"] for e in Bench.open(repo).wb.log.by_type(("task.add",), 10)]  # type: ignore[attr-defined]

    assert indexed() == [2]
    _sql(repo, "UPDATE events SET type = 'note.add' WHERE seq = 2")  # task.add, indexed as a note
    assert indexed() == []
    code, report = _doctor(repo)
    assert code == 1 and _codes(report) == {"type_index"}
    assert _doctor(repo, "--fix")[0] == 0
    assert _row(repo, "SELECT type FROM events WHERE seq = 2") == "task.add"
    assert indexed() == [2]


def test_a_write_killed_before_its_commit_leaves_nothing_to_repair(repo: Path) -> None:
    _seeded(repo)
    killed = spawn_wb(repo, "task", "add", "Never acknowledged", env={**os.environ, "WB_FAULT": "sqlite_before_commit"})
    assert killed.returncode == -9
    assert _doctor(repo, "--fix") == (0, {"healthy": True, "findings": []})
    assert _titles(repo) == ["Parse the config"]


def test_a_damaged_page_of_an_index_is_found_by_sqlites_check_and_rebuilt(repo: Path) -> None:
    """Bytes of the database file overwritten (a disk's damage) where the type index keeps its cells: SQLite's
    quick_check names it, and --fix rebuilds the indexes from the tables. Real processes only: no connection
    of this one caches the pages."""
    def doctor(*args: str) -> tuple[int, dict]:
        proc = spawn_wb(repo, "doctor", "--json", *args)
        return proc.returncode, json.loads(proc.stdout)

    assert spawn_wb(repo, "init", "--backend", "sqlite").returncode == 0
    for title in ("one", "two", "three"):
        assert spawn_wb(repo, "task", "add", title).returncode == 0
    db = database(repo)
    assert db is not None
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the database file itself
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events_by_type'").fetchone()
    (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * size + 8)  # the page's cell pointers
        fh.write(b"\x7f" * 4)
    code, report = doctor()
    assert code == 1 and _codes(report) == {"db_damaged"}, report
    assert "quick check fails" in report["findings"][0]["message"] and report["findings"][0]["fixable"]
    code, report = doctor("--fix")
    assert code == 0 and report["findings"][0]["fixed"], report
    assert doctor("--full") == (0, {"healthy": True, "findings": []})  # PRAGMA integrity_check agrees
    assert _titles(repo) == ["one", "two", "three"]
