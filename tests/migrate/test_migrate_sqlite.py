"""`wb migrate` on a workbench kept in SQLite: snapshots of an older schema_version in the database (put there
with sqlite3, as an older wb would have left them) are upgraded by the same migrations, recorded by the same
`migration.apply`, in one database transaction — a kill before its COMMIT leaves the database as it was, and
the next run migrates. Each workbench here is made with `--backend sqlite`, whatever the pass."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from tests.conftest import one_error_line, run_wb, spawn_wb
from tests.damage import database
from workbench.api import Bench, init


def _rows(repo: Path) -> list[tuple[object, ...]]:
    """Everything the database holds, table by table: "nothing was written" means all of it."""
    db = database(repo)
    assert db is not None
    with sqlite3.connect(db) as conn:
        return [("snapshot", *r) for r in conn.execute("SELECT name, data FROM snapshots ORDER BY name")] + \
            [("event", *r) for r in conn.execute("SELECT seq, type, hash, line FROM events ORDER BY seq")]


def _set_versions(repo: Path, state: int, board: int) -> None:
    """The snapshots rewritten at these schema_versions (the documents are otherwise the same)."""
    db = database(repo)
    assert db is not None
    conn = sqlite3.connect(db)
    try:
        with conn:
            rows = dict(conn.execute("SELECT name, data FROM snapshots"))
            md = bytes(rows["state.md"]).replace(b"schema_version: 2", f"schema_version: {state}".encode(), 1)
            kept = {**json.loads(rows["state.json"]), "schema_version": state}
            data = {**json.loads(rows["board.json"]), "schema_version": board}
            for name, value in (("state.md", md), ("state.json", json.dumps(kept).encode()),
                                ("board.json", (json.dumps(data, indent=2) + "\n").encode())):
                conn.execute("UPDATE snapshots SET data = ? WHERE name = ?", (value, name))
    finally:
        conn.close()


def _older(repo: Path) -> None:
    init(repo, backend="sqlite")
    bench = Bench.open(repo)
    bench.add_task("Parse the config")
    bench.note("kept through the migration")
    _set_versions(repo, state=1, board=1)


def test_older_snapshots_are_refused_by_the_verbs_and_upgraded_by_wb_migrate(repo: Path) -> None:
    _older(repo)
    r = run_wb(repo, "status")
    assert r.returncode == 5 and "run `wb migrate`" in one_error_line(r.stderr)
    doctor = json.loads(run_wb(repo, "doctor", "--json").stdout)
    assert [f["code"] for f in doctor["findings"]] == ["migration_needed"]  # not "rebuilt" behind migrate's back
    before = _rows(repo)
    dry = run_wb(repo, "migrate", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == "dry run: `wb migrate` would make these changes (nothing was written)"
    assert "state.md      1 → 2" in dry.stdout and "board.json    1 → 2" in dry.stdout
    assert "  + events: migration.apply" in dry.stdout
    assert _rows(repo) == before
    r = run_wb(repo, "migrate", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["changed"] and report["versions"]["state.md"] == 1 and report["commit"] is None
    assert report["events"] == [{"seq": 4, "type": "migration.apply"}]
    assert json.loads(run_wb(repo, "status", "--json").stdout)["board"]["total"] == 1
    assert run_wb(repo, "validate").returncode == 0
    assert run_wb(repo, "replay", "--verify").returncode == 0  # migration.apply carries what the fold needs
    assert json.loads(run_wb(repo, "doctor", "--json").stdout) == {"healthy": True, "findings": []}
    again = run_wb(repo, "migrate")
    assert again.returncode == 0 and "nothing to migrate" in again.stdout
    r = run_wb(repo, "note", "after the migration")
    assert r.returncode == 0, r.stderr
    decisions = json.loads(run_wb(repo, "log", "--type", "note", "--json").stdout)
    assert [e["payload"]["text"] for e in decisions] == ["kept through the migration", "after the migration"]


def test_a_migration_killed_before_its_commit_leaves_the_database_as_it_was(repo: Path) -> None:
    _older(repo)
    before = _rows(repo)
    killed = spawn_wb(repo, "migrate", env={**os.environ, "WB_FAULT": "sqlite_migrate_before_commit"})
    assert killed.returncode == -9
    assert _rows(repo) == before  # events and snapshots: all or nothing
    r = run_wb(repo, "migrate")
    assert r.returncode == 0 and r.stdout.startswith("migrated"), r.stderr
    assert run_wb(repo, "replay", "--verify").returncode == 0


def test_a_current_workbench_is_left_alone_and_a_newer_snapshot_is_refused(repo: Path) -> None:
    init(repo, backend="sqlite")
    Bench.open(repo).add_task("First")
    before = _rows(repo)
    r = run_wb(repo, "migrate")
    assert r.returncode == 0 and "nothing to migrate" in r.stdout
    assert _rows(repo) == before
    _set_versions(repo, state=3, board=2)
    before = _rows(repo)
    r = run_wb(repo, "migrate")
    assert r.returncode == 5
    assert one_error_line(r.stderr) == ("wb: state.md: schema_version 3 is newer than this wb understands (2); "
                                        "upgrade wb. Nothing was changed")
    assert _rows(repo) == before

