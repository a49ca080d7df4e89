"""A person's edit of .workbench/ committed with plain git is still a person's edit (issue 19 §1).

Before: a person changed `next_action` in state.md and ran `git commit -am`: the next load took the file for
wb's own (it held what is committed), no `human.edit` was recorded, `wb replay --verify` exited 5 and
`wb doctor --fix` wrote the log's state.md over the person's edit. A hand edit of config.yaml (tools added)
went into the next wb commit with only a `Wb-Also-Changed` trailer: no event. Now a snapshot that differs from
the fold of the log at its own `last_event` is a hand edit whoever committed it, and a changed config.yaml is
a `config.edit` event naming what changed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound
from tests.person import as_person

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _events(repo: Path, prefix: str = "") -> list[dict]:
    lines = (repo / ".workbench" / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["type"].startswith(prefix)]


def _init(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "note", "first").returncode == 0


def _edit_next_action(repo: Path, text: str) -> Path:
    state = repo / ".workbench" / "state.md"
    before = state.read_text()
    after = re.sub(r"^next_action:.*$", f"next_action: {text}", before, count=1, flags=re.M)
    assert after != before
    state.write_text(after)
    return state


def test_a_committed_edit_of_next_action_is_recorded_at_the_next_write(repo: Path) -> None:
    _init(repo)
    state = _edit_next_action(repo, "ship the parser by hand")
    run_git(repo, "commit", "-qam", "my next action")
    assert as_person(repo, "note", "later").returncode == 0
    edits = _events(repo, "human.edit")
    assert edits and edits[-1]["payload"]["changes"] == {"next_action": "ship the parser by hand"}, edits
    assert edits[-1]["actor"] == "human"
    assert "next_action: ship the parser by hand" in state.read_text()
    assert_sound(repo, acknowledged=["first", "later"])


def test_doctor_fix_records_a_committed_hand_edit_and_never_reverts_it(repo: Path) -> None:
    _init(repo)
    state = _edit_next_action(repo, "mine, not the log's")
    run_git(repo, "commit", "-qam", "my next action")
    fix = run_wb(repo, "doctor", "--fix")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert "next_action: mine, not the log's" in state.read_text(), "doctor --fix reverted the person's edit"
    assert [e["payload"]["changes"] for e in _events(repo, "human.edit")] == [{"next_action": "mine, not the log's"}]
    assert_sound(repo, acknowledged=["first"])
    assert run_wb(repo, "doctor").returncode == 0


def test_a_committed_edit_of_board_json_is_recorded(repo: Path) -> None:
    _init(repo)
    assert run_wb(repo, "task", "add", "Parser").returncode == 0
    board_path = repo / ".workbench" / "board.json"
    board = json.loads(board_path.read_text())
    board["tasks"][0]["title"] = "Parser, renamed by hand"
    board_path.write_text(json.dumps(board, indent=2) + "\n")
    run_git(repo, "commit", "-qam", "rename")
    assert as_person(repo, "note", "later").returncode == 0
    edits = _events(repo, "human.edit")
    assert edits and edits[-1]["payload"]["file"] == "board.json"
    assert edits[-1]["payload"]["upsert"][0]["title"] == "Parser, renamed by hand"
    assert json.loads(board_path.read_text())["tasks"][0]["title"] == "Parser, renamed by hand"
    assert_sound(repo, acknowledged=["first", "later"])


def test_a_hand_edit_of_config_yaml_is_a_config_edit_event(repo: Path) -> None:
    _init(repo)
    config = repo / ".workbench" / "config.yaml"
    tools = "".join(f"  t{i}:\n    argv: [echo, '{i}']\n    mode: safe_readonly\n" for i in range(5))
    text = config.read_text()
    assert re.search(r"^tools:", text, flags=re.M)
    config.write_text(re.sub(r"^tools:.*$", "tools:\n" + tools.rstrip("\n"), text, count=1, flags=re.M))
    assert as_person(repo, "note", "after the config edit").returncode == 0
    edits = _events(repo, "config.edit")
    assert len(edits) == 1, edits
    payload = edits[0]["payload"]
    assert sorted(payload["tools"]["added"]) == [f"t{i}" for i in range(5)]
    assert edits[0]["actor"] == "human"
    shown = run_wb(repo, "log", "--type", "config")
    assert shown.returncode == 0 and "config.edit" in shown.stdout and "t0" in shown.stdout, shown.stdout
    # recorded once: later writes see the config they recorded
    assert run_wb(repo, "note", "again").returncode == 0
    assert len(_events(repo, "config.edit")) == 1
    assert_sound(repo, acknowledged=["first", "after the config edit", "again"])


def test_wbs_own_writes_are_no_hand_edits(repo: Path) -> None:
    """init (twice), notes, tasks, a migrate with nothing to do, doctor: no human.edit, no config.edit."""
    _init(repo)
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "task", "add", "A").returncode == 0
    assert run_wb(repo, "task", "start", "T-001").returncode == 0
    assert run_wb(repo, "migrate").returncode == 0
    assert run_wb(repo, "doctor", "--fix").returncode == 0
    assert run_wb(repo, "note", "end").returncode == 0
    assert not _events(repo, "human.edit") and not _events(repo, "config.edit")
    assert_sound(repo, acknowledged=["first", "end"])


def test_a_fresh_clone_records_a_hand_edit_the_other_clone_committed(repo: Path, tmp_path: Path) -> None:
    """Clone A's person commits an edit of next_action and pushes before any wb write records it; clone B has
    no cache of wb's writes: its first write asks the log, and records the edit (and only it)."""
    _init(repo)
    _edit_next_action(repo, "from clone A's person")
    run_git(repo, "commit", "-qam", "my next action")
    b = tmp_path / "b"
    run_git(tmp_path, "clone", "-q", str(repo), str(b))
    assert as_person(b, "note", "in B").returncode == 0
    edits = _events(b, "human.edit")
    assert [e["payload"]["changes"] for e in edits] == [{"next_action": "from clone A's person"}], edits
    assert_sound(b, acknowledged=["first", "in B"])
    # and a clone of a workbench nobody edited by hand records nothing
    c = tmp_path / "c"
    run_git(tmp_path, "clone", "-q", str(b), str(c))
    assert run_wb(c, "note", "in C").returncode == 0
    assert len(_events(c, "human.edit")) == 1
