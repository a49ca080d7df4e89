"""human_guard_seconds: right after a hand edit of a workbench file, agent writes to it are refused (exit 6)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.conftest import about_files, run_git, run_wb
from tests.person import as_person
from workbench.api import init

pytestmark = about_files  # the guard window after a hand edit of the files


def _setup(repo: Path, seconds: float) -> None:
    init(repo)
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("human_guard_seconds: 5", f"human_guard_seconds: {seconds}"))
    assert run_wb(repo, "note", "--actor", "agent", "config changed").returncode == 0


def _types(repo: Path) -> list[str]:
    return [json.loads(line)["type"] for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]


def test_agent_write_inside_the_window_is_refused_and_changes_nothing(repo: Path) -> None:
    _setup(repo, 30)
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("next_action: ", "# the human's note\nnext_action: ", 1))
    edited = state.read_bytes()
    before = run_git(repo, "rev-parse", "HEAD")
    refused = run_wb(repo, "set", "--actor", "agent", "next_action=agent wants this")
    assert refused.returncode == 6
    assert "edited by hand" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert state.read_bytes() == edited
    assert run_git(repo, "rev-parse", "HEAD") == before
    # the human's own write goes through and records the edit
    ok = as_person(repo, "note", "I edited state.md")  # at a terminal: a person, no flag needed
    assert ok.returncode == 0, ok.output
    assert _types(repo)[-2:] == ["human.edit", "note.add"]
    assert "# the human's note" in state.read_text()
    # the window covers the file, not just the first write after the edit
    assert run_wb(repo, "task", "add", "--actor", "agent", "x").returncode == 6


def test_agent_write_after_the_window_goes_through(repo: Path) -> None:
    _setup(repo, 1)
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("next_action: ", "# later\nnext_action: ", 1))
    assert run_wb(repo, "note", "--actor", "agent", "too soon").returncode == 6
    time.sleep(1.2)
    ok = run_wb(repo, "note", "--actor", "agent", "after the window")
    assert ok.returncode == 0, ok.stderr
    assert _types(repo)[-2:] == ["human.edit", "note.add"]
    assert run_wb(repo, "replay", "--verify").returncode == 0


def test_a_board_edit_guards_board_writes_only(repo: Path) -> None:
    _setup(repo, 30)
    assert run_wb(repo, "task", "add", "--actor", "agent", "first").returncode == 0
    board = repo / ".workbench" / "board.json"
    data = json.loads(board.read_text())
    data["tasks"][0]["title"] = "renamed by hand"
    board.write_text(json.dumps(data, indent=4) + "\n")
    # the board is guarded; a note does not touch the board, but it does write state.md, which was not edited
    assert run_wb(repo, "task", "add", "--actor", "agent", "second").returncode == 6
    ok = run_wb(repo, "note", "--actor", "agent", "a note")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(board.read_text())["tasks"][0]["title"] == "renamed by hand"
