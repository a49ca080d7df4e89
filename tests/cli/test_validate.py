"""`wb validate` and `wb replay`."""

from __future__ import annotations

import json

from tests.conftest import about_files
from tests.stored import FILES


def test_validate_ok(bench, repo, wb):
    bench.add_task("Parser")
    r = wb(repo, "validate")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok: ")
    assert ("events.jsonl and calls.jsonl are valid" if FILES else "workbench.sqlite3 (the events") in r.stdout
    r = wb(repo, "validate", "--json")
    assert json.loads(r.stdout) == {"ok": True, "problems": []}


@about_files  # damaged bytes written into board.json and calls.jsonl
def test_validate_reports_every_problem(bench, repo, wb):
    bench.add_task("Parser")
    board_path = repo / ".workbench" / "board.json"
    board = json.loads(board_path.read_text())
    board["tasks"][0]["status"] = "finished"
    board["tasks"].append(dict(board["tasks"][0], status="todo"))
    board_path.write_text(json.dumps(board))
    (repo / ".workbench" / "calls.jsonl").write_text("not json\n")
    r = wb(repo, "validate", "--json")
    assert r.returncode == 5
    problems = json.loads(r.stdout)["problems"]
    assert 'board.json: tasks[0].status: "finished" is not one of "todo", "in_progress", "blocked", "done", ' \
           '"cancelled"' in problems
    assert "board.json: tasks[1].id: duplicate id T-001" in problems
    assert "calls.jsonl:1: damaged line (not JSON)" in problems
    r = wb(repo, "validate")
    assert r.returncode == 5
    assert all(line.startswith("wb: ") for line in r.stderr.splitlines())
    assert len(r.stderr.splitlines()) == len(problems)


def test_replay(bench, repo, wb):
    bench.add_task("Parser")
    bench.note("why")
    r = wb(repo, "replay", "--verify")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("replayed 3 events")
    assert "snapshots match the event log" in r.stdout
    data = json.loads(wb(repo, "replay", "--json").stdout)
    assert data["events"] == 3 and data["matches"] is True
    assert data["board"]["tasks"][0]["title"] == "Parser"


@about_files  # board.json and its cached copy rewritten by hand
def test_replay_verify_catches_a_snapshot_that_disagrees(bench, repo, wb):
    bench.add_task("Parser")
    board_path = repo / ".workbench" / "board.json"
    from workbench.model.layout import Paths

    cache = Paths(repo).board_cache
    board = json.loads(board_path.read_text())
    board["tasks"][0]["title"] = "Not what the log says"
    data = (json.dumps(board, indent=2) + "\n").encode()
    board_path.write_bytes(data)
    cache.write_bytes(data)  # not a hand edit wb can see: the snapshot itself is wrong
    r = wb(repo, "replay", "--verify")
    assert r.returncode == 5
    assert "board.json: tasks" in r.stderr and "Not what the log says" in r.stderr
