"""Issue 31 item 8: a hand edit of config.yaml is told by its right reason, committed on its own under its own
name, and stamped in log order — from the user's side: the editor, `wb status`, `wb run`, `git log`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_git, spawn_wb
from tests.stored import FILES

PLAN = "steps:\n  - description: run the check\n    tool: check\n  - description: think it over\n"


def _add_tool_by_hand(repo: Path) -> None:
    config = repo / ".workbench" / "config.yaml"
    text = config.read_text()
    assert "tools: {}" in text
    config.write_text(text.replace("tools: {}", 'tools:\n  check:\n    argv: ["true"]\n    mode: safe_readonly',
                                   1))


def test_status_names_both_ways_an_untrusted_command_comes(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WB_TRUST_REPO_COMMANDS")
    assert spawn_wb(repo, "init").returncode == 0
    _add_tool_by_hand(repo)
    status = spawn_wb(repo, "status")
    assert status.returncode == 0, status.stderr
    [line] = [ln for ln in status.stdout.splitlines() if ln.startswith("trust")]
    assert "came through git, or by a hand edit" in line and "wb trust" in line, line


def test_a_hand_edit_of_config_is_committed_alone_and_named_before_the_run(bench, repo: Path) -> None:
    _add_tool_by_hand(repo)
    (repo / "plan.yaml").write_text(PLAN)
    proc = spawn_wb(repo, "run", "Check it", "--plan", "plan.yaml")
    assert proc.returncode == 0, proc.stderr
    events = json.loads(spawn_wb(repo, "log", "--json", "--all").stdout)
    stamps = [e["ts"] for e in events]
    assert stamps == sorted(stamps), [(e["seq"], e["type"], e["ts"]) for e in events]  # never backwards
    if not FILES:
        return  # no config.edit event and no git commits of the state on SQLite
    edit = next(e for e in events if e["type"] == "config.edit")
    start = next(e for e in events if e["type"] == "session.start")
    assert edit["seq"] < start["seq"]
    subjects = run_git(repo, "log", "--format=%s").splitlines()
    [named] = [s for s in subjects if "config.yaml" in s]
    assert named.startswith("wb: config.yaml edited by hand") and "tools +check" in named, subjects
    sha = run_git(repo, "log", "--format=%H", "--grep", "config.yaml edited by hand").strip()
    assert run_git(repo, "show", "--name-only", "--format=", sha).split() == [
        ".workbench/config.yaml", ".workbench/events.jsonl", ".workbench/state.md"]
    riders = [m.strip().split("\n")[0] for m in run_git(repo, "log", "--format=%B%x00").split("\0")
              if "Wb-Also-Changed:" in m and "config.yaml" in m.split("Wb-Also-Changed:")[1].split("\n")[0]]
    assert riders == [named, "wb: init"]  # the edit rides along in no other commit's trailer
    step = run_git(repo, "log", "--format=%H", "--grep", "runs check").strip()
    assert ".workbench/config.yaml" not in run_git(repo, "show", "--name-only", "--format=", step)


@pytest.mark.skipif(not FILES, reason="no git commits of the state on SQLite, and no state.md to edit")
def test_the_edit_commit_names_every_hand_edit_it_records(bench, repo: Path) -> None:
    _add_tool_by_hand(repo)
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("next_action: ", "next_action: Read the parser first  # mine\n"
                                               "# was: ", 1))
    time_guard = repo / ".workbench" / "config.yaml"  # an agent write waits out human_guard_seconds: a person's
    time_guard.write_text(time_guard.read_text().replace("human_guard_seconds: 5", "human_guard_seconds: 0"))
    proc = spawn_wb(repo, "note", "after the edits")
    assert proc.returncode == 0, proc.stderr
    subjects = run_git(repo, "log", "--format=%s", "-2").splitlines()
    assert subjects[1] == "wb: config.yaml edited by hand: keys ~human_guard_seconds; tools +check; " \
                          "state.md edited by hand", subjects
    assert subjects[0].startswith("wb: note after the edits"), subjects
