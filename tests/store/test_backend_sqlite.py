"""The SQLite backend (issue 24, store/sqlitedb.py) from the user's side: `wb init --backend sqlite` in a git
repository and `--no-git` outside any, the core verbs, validate and replay on it, `wb export` / `wb import`
between the backends byte for byte, the lock, and the one-line refusal of what it does not serve yet."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_git, spawn_wb


def ok(cwd: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    proc = spawn_wb(cwd, *args, **kw)  # type: ignore[arg-type]
    assert proc.returncode == 0, f"wb {' '.join(args)} exited {proc.returncode}: {proc.stderr}{proc.stdout}"
    return proc


def status(cwd: Path) -> dict:
    return json.loads(ok(cwd, "status", "--json").stdout)


def test_sqlite_in_a_git_repository_keeps_state_in_one_database(repo: Path) -> None:
    head0 = run_git(repo, "rev-parse", "HEAD")
    ok(repo, "init", "--backend", "sqlite")
    db = repo / ".git" / "wb" / "workbench.sqlite3"
    assert db.is_file()
    assert sorted(p.name for p in (repo / ".workbench").iterdir()) == [".gitignore", "config.yaml"]
    ok(repo, "task", "add", "first", "--accept", "true")
    ok(repo, "task", "add", "second")
    ok(repo, "task", "start", "T-001")
    ok(repo, "note", "a decision")
    ok(repo, "set", "next_action=finish T-001")
    ok(repo, "task", "done", "T-001")
    data = status(repo)
    assert data["board"]["by_status"]["done"] == 1 and data["board"]["total"] == 2
    assert data["last_event"]["seq"] == 7
    log = ok(repo, "log").stdout
    assert "task.done" in log and "note.add" in log
    assert ok(repo, "validate").returncode == 0
    assert "snapshots match the event log" in ok(repo, "replay", "--verify").stdout
    # the same event lines, chained as events.jsonl chains them; WAL mode; no state committed to git
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    lines = [bytes(r[0]) for r in con.execute("SELECT line FROM events ORDER BY seq")]
    con.close()
    from workbench.model.jsonl import line_hash

    prev = None
    for n, line in enumerate(lines, start=1):
        event = json.loads(line)
        assert event["seq"] == n and event.get("prev") == prev
        prev = line_hash(line)
    # one commit, wb init's own: config.yaml and .gitignore (issue 31: `git status` clean, as on files)
    assert run_git(repo, "rev-parse", "HEAD~1") == head0
    assert run_git(repo, "log", "-1", "--format=%s").strip() == "wb: init (SQLite)"


def test_no_git_workbench_in_a_scratch_directory(tmp_path: Path) -> None:
    scratch = tmp_path / "runner"
    (scratch / "src" / "deep").mkdir(parents=True)
    ok(scratch, "init", "--no-git", "--backend", "sqlite")
    assert (scratch / ".workbench" / "workbench.sqlite3").is_file()
    assert not (scratch / ".git").exists()
    ok(scratch / "src" / "deep", "task", "add", "from below")  # found from a subdirectory, as git would
    assert status(scratch)["board"]["total"] == 1
    assert ok(scratch, "validate").returncode == 0
    again = ok(scratch, "init", "--no-git", "--backend", "sqlite")  # idempotent
    assert "already initialized" in again.stdout
    assert status(scratch)["last_event"]["seq"] == 2


def test_no_git_needs_sqlite(tmp_path: Path) -> None:
    files_default = {k: v for k, v in os.environ.items() if k != "WB_DEFAULT_BACKEND"}  # as without the SQLite pass
    proc = spawn_wb(tmp_path, "init", "--no-git", env=files_default)
    assert proc.returncode == 5
    assert proc.stderr.strip().startswith("wb: --no-git needs --backend sqlite")
    assert not (tmp_path / ".workbench").exists()


def test_export_import_export_is_byte_identical_across_backends(repo: Path, tmp_path: Path, new_repo) -> None:
    ok(repo, "init")
    ok(repo, "task", "add", "alpha", "--accept", "true")
    ok(repo, "task", "add", "beta")
    ok(repo, "task", "start", "T-001")
    ok(repo, "note", "why we did it")
    ok(repo, "task", "done", "T-001")
    ok(repo, "task", "add", "dropped")
    ok(repo, "task", "set", "T-003", "status=cancelled")
    ok(repo, "task", "delete", "T-003")  # into the board's archive: a sealed segment
    first, second, third = (tmp_path / f"dump{i}.jsonl" for i in (1, 2, 3))
    ok(repo, "export", str(first))
    files_view = status(repo)

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    ok(scratch, "import", str(first), "--backend", "sqlite", "--no-git")
    assert "snapshots match" in ok(scratch, "replay", "--verify").stdout
    doctor = ok(scratch, "doctor")  # state.md's frontmatter and decision log kept apart, as a write keeps them
    assert "state.json" not in doctor.stdout + doctor.stderr and "state.body" not in doctor.stdout + doctor.stderr
    with sqlite3.connect(scratch / ".workbench" / "workbench.sqlite3") as db:
        assert {n for (n,) in db.execute("SELECT name FROM snapshots")} >= {"state.json", "state.body"}
    ok(scratch, "export", str(second))
    assert second.read_bytes() == first.read_bytes()
    sqlite_view = status(scratch)
    for key in ("board", "last_event", "counters", "next_action", "active_task"):
        assert sqlite_view[key] == files_view[key], key
    assert "T-003" in ok(scratch, "task", "list", "--all").stdout  # the archive came along
    ok(scratch, "note", "on sqlite")  # and the workbench goes on from there
    assert ok(scratch, "validate").returncode == 0

    back = new_repo(tmp_path / "back")
    ok(back, "import", str(second))  # into the files backend: rebuilt, validated and committed
    assert "snapshots match" in ok(back, "replay", "--verify").stdout
    assert ok(back, "validate").returncode == 0
    ok(back, "export", str(third))
    assert third.read_bytes() == second.read_bytes()
    assert run_git(back, "status", "--porcelain", "--", ".workbench") == ""


def test_import_refuses_over_an_existing_workbench(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    dump = tmp_path / "d.jsonl"
    ok(repo, "export", str(dump))
    proc = spawn_wb(repo, "import", str(dump))
    assert proc.returncode == 5 and "already exists" in proc.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(dump.read_bytes()[:-20])
    proc = spawn_wb(tmp_path, "import", str(bad), "--backend", "sqlite", "--no-git")
    assert proc.returncode == 5 and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / ".workbench").exists()


@pytest.mark.parametrize("argv", [["sync"], ["textconv", "board"]])
def test_what_sqlite_does_not_serve_exits_2_in_one_line(tmp_path: Path, argv: list[str]) -> None:
    ok(tmp_path, "init", "--no-git", "--backend", "sqlite")
    proc = spawn_wb(tmp_path, *argv)
    assert proc.returncode == 2, proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "not supported on the SQLite backend yet" in lines[0], proc.stderr


def test_a_held_write_lock_is_busy_exit_6(tmp_path: Path) -> None:
    ok(tmp_path, "init", "--no-git", "--backend", "sqlite")
    con = sqlite3.connect(tmp_path / ".workbench" / "workbench.sqlite3", isolation_level=None)
    con.execute("BEGIN IMMEDIATE")  # another writer holds the database
    try:
        proc = spawn_wb(tmp_path, "note", "waits", env={"WB_LOCK_TIMEOUT": "0.3"})
        assert proc.returncode == 6, proc.stderr
        assert proc.stderr.startswith("wb: another wb process holds the workbench lock")
        assert status(tmp_path)["last_event"]["seq"] == 1  # a reader is not held up by the writer
    finally:
        con.execute("ROLLBACK")
        con.close()
    ok(tmp_path, "note", "goes through")


def test_a_refused_write_writes_nothing(tmp_path: Path) -> None:
    ok(tmp_path, "init", "--no-git", "--backend", "sqlite")
    proc = spawn_wb(tmp_path, "task", "start", "T-404")
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1
    huge = spawn_wb(tmp_path, "task", "add", "x" * 100_000)
    assert huge.returncode == 5, huge.stderr
    assert status(tmp_path)["last_event"]["seq"] == 1
