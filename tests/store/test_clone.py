"""A fresh clone has no .cache/ (it is ignored): hand edits there are still seen, against the committed files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import about_git, run_git, run_wb
from workbench.api import Bench, init

pytestmark = about_git  # a fresh git clone of the files (a SQLite database is not in git)


def test_hand_edit_in_a_fresh_clone_is_recorded(repo: Path, tmp_path: Path) -> None:
    init(repo)
    Bench.open(repo).add_task("a task")
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert not (clone / ".workbench" / ".cache").exists()
    config = clone / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("human_guard_seconds: 5", "human_guard_seconds: 0"))
    state = clone / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("next_action: ", "next_action: 'edited in the clone' # was: ", 1))
    board = clone / ".workbench" / "board.json"
    data = json.loads(board.read_text())
    data["tasks"][0]["title"] = "renamed in the clone"
    board.write_text(json.dumps(data) + "\n")
    ok = run_wb(clone, "note", "--actor", "agent", "first write in the clone")
    assert ok.returncode == 0, ok.stderr
    events = [json.loads(line) for line in (clone / ".workbench" / "events.jsonl").read_text().splitlines()]
    edits = [e["payload"] for e in events if e["type"] == "human.edit"]
    assert {e["file"] for e in edits} == {"state.md", "board.json"}
    assert next(e for e in edits if e["file"] == "state.md")["changes"]["next_action"] == "edited in the clone"
    verify = run_wb(clone, "replay", "--verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_fresh_clone_without_edits_records_nothing(repo: Path, tmp_path: Path) -> None:
    init(repo)
    Bench.open(repo).note("hello")
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert run_wb(clone, "note", "--actor", "agent", "from the clone").returncode == 0
    types = [json.loads(line)["type"] for line in (clone / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert "human.edit" not in types
