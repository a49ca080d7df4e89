"""Issue 30.2 and 30.6: a clone's config cannot point wb outside the repository, and hostile SQLite files a clone
ships get one line and an exit code. Before: a clone's config.yaml with `storage: sqlite` and `sqlite_path:
../elsewhere/app.db` (or an absolute path) made a read-only `wb status` switch another program's existing database
to WAL mode (its bytes changed) and end in `internal error: OperationalError`; a database shipped with an
aborting trigger, a `load_extension()` trigger or a view in a table's place ended in `wb: internal error`."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import about_git, call_wb, run_git

pytestmark = about_git  # what a clone brings


@pytest.fixture(autouse=True)
def _no_blanket_trust(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WB_TRUST_REPO_COMMANDS", raising=False)  # the suite's CI opt-in would trust any path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def other_programs_db(path: Path) -> Path:
    """An application's own SQLite database, in the default (rollback journal) mode, with a row in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users(name TEXT)")
    conn.execute("INSERT INTO users VALUES ('ana')")
    conn.commit()
    conn.close()
    return path


def cloned_with_config(tmp_path: Path, sqlite_path: str, ship: Path | None = None) -> Path:
    """A repository whose committed config.yaml says `storage: sqlite` and `sqlite_path`, cloned."""
    origin = tmp_path / "origin"
    run_git(tmp_path, "init", "-q", "-b", "main", str(origin))
    (origin / ".workbench").mkdir()
    (origin / ".workbench" / "config.yaml").write_text(
        f"schema_version: 1\nstorage: sqlite\nsqlite_path: {sqlite_path}\n")
    if ship is not None:
        target = origin / sqlite_path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ship, target)
    run_git(origin, "add", "-A")
    run_git(origin, "commit", "-q", "-m", "wb on sqlite")
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(origin), str(clone))
    return clone


def one_line(proc: object, code: int = 5) -> str:
    rc, err = proc.returncode, proc.stderr  # type: ignore[attr-defined]
    assert rc == code, (rc, proc.stdout, err)  # type: ignore[attr-defined]
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wb: ") and "internal error" not in err, err
    return lines[0]


@pytest.mark.parametrize("where", ["relative, out of the repository", "absolute"])
def test_a_clones_sqlite_path_outside_the_repository_is_not_opened(tmp_path: Path, where: str) -> None:
    victim_db = other_programs_db(tmp_path / "elsewhere" / "app.db")
    before = digest(victim_db)
    named = "../elsewhere/app.db" if where.startswith("relative") else str(victim_db)
    clone = cloned_with_config(tmp_path, named)
    for args in (["status"], ["validate"], ["task", "list"], ["note", "hello"]):
        line = one_line(call_wb(clone, *args))
        assert "sqlite_path" in line and "wb trust" in line, line
    assert digest(victim_db) == before
    assert not Path(str(victim_db) + "-wal").exists()


def test_an_application_database_inside_the_repository_is_left_as_it_is(tmp_path: Path) -> None:
    app = other_programs_db(tmp_path / "ship" / "app.db")
    clone = cloned_with_config(tmp_path, "data/app.db", ship=app)
    before = digest(clone / "data" / "app.db")
    line = one_line(call_wb(clone, "status"))
    assert "not wb's" in line, line
    assert digest(clone / "data" / "app.db") == before


def hostile_wb_db(tmp_path: Path, sql: str) -> Path:
    """A real wb database (made by `wb init --backend sqlite --db`), with `sql` run on it afterwards."""
    repo = tmp_path / "maker"
    run_git(tmp_path, "init", "-q", "-b", "main", str(repo))
    run_git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    proc = call_wb(repo, "init", "--backend", "sqlite", "--db", "data/wb.sqlite3")
    assert proc.returncode == 0, proc.stderr
    db = repo / "data" / "wb.sqlite3"
    conn = sqlite3.connect(db)
    conn.executescript(sql)
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # all of it in the file a clone ships
    conn.close()
    return db


@pytest.mark.parametrize("name,sql", [
    ("an aborting trigger", "CREATE TRIGGER no_writes BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'no'); END;"),
    ("a load_extension trigger", "CREATE TRIGGER ext AFTER INSERT ON events BEGIN "
                                 "SELECT load_extension('/tmp/evil.so'); END;"),
    ("a view in a table's place", "ALTER TABLE calls RENAME TO calls_old; CREATE VIEW calls AS SELECT * FROM "
                                  "calls_old;"),
])
def test_a_hostile_database_a_clone_ships_gets_one_line(tmp_path: Path, name: str, sql: str) -> None:
    db = hostile_wb_db(tmp_path, sql)
    clone = cloned_with_config(tmp_path, "data/wb.sqlite3", ship=db)
    for args in (["status"], ["note", "hello"], ["doctor"]):
        proc = call_wb(clone, *args)
        assert proc.returncode in (1, 5), (args, proc.stdout, proc.stderr)
        out = proc.stdout + proc.stderr
        assert "internal error" not in out and "Traceback" not in out, out
        assert "trigger" in out or "view" in out, out


def test_a_database_path_the_person_gives_on_the_command_line_is_theirs(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    run_git(tmp_path, "init", "-q", "-b", "main", str(repo))
    run_git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    outside = tmp_path / "dbs" / "mine.sqlite3"
    proc = call_wb(repo, "init", "--backend", "sqlite", "--db", str(outside))
    assert proc.returncode == 0, proc.stderr
    for args in (["note", "kept outside, by my choice"], ["status"]):
        proc = call_wb(repo, *args)
        assert proc.returncode == 0, (args, proc.stderr)
