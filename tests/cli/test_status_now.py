"""issue 22 item 3: `wb status` and `wb handoff` say what is true now, not what someone set before it changed."""

from __future__ import annotations

import json


def test_a_next_action_set_by_hand_is_dropped_once_its_task_is_done(repo, wb):
    assert wb(repo, "init").returncode == 0
    for title in ("Parser", "Printer", "Docs"):
        assert wb(repo, "task", "add", title).returncode == 0
    assert wb(repo, "set", "next_action=Start T-002").returncode == 0
    assert wb(repo, "task", "start", "T-002").returncode == 0
    assert wb(repo, "task", "done", "T-002").returncode == 0

    data = json.loads(wb(repo, "status", "--json").stdout)
    assert "T-002" not in data["next_action"]
    assert data["next_action_source"] == "derived"
    assert data["next_action"].startswith("Start T-001")
    assert data["stale_next_action"] == {"text": "Start T-002", "why": "T-002 is done"}
    text = wb(repo, "status").stdout
    assert "Start T-002" in text and "dropped: T-002 is done" in text  # shown as stale, not as the action
    assert not any(line.startswith("next action") and "T-002" in line for line in text.splitlines())

    r = wb(repo, "handoff", "--json")
    assert r.returncode == 0, r.stderr
    nxt = json.loads(r.stdout)["next_action"]
    assert "T-002" not in nxt["text"] and nxt["command"] == "wb task start T-001"


def test_a_next_action_naming_an_open_task_still_holds(repo, wb):
    assert wb(repo, "init").returncode == 0
    assert wb(repo, "task", "add", "Parser").returncode == 0
    assert wb(repo, "set", "next_action=Start T-001 after lunch").returncode == 0
    data = json.loads(wb(repo, "status", "--json").stdout)
    assert data["next_action"] == "Start T-001 after lunch" and data["stale_next_action"] is None


def test_a_blocked_active_task_does_not_hide_the_ready_line(repo, wb):
    assert wb(repo, "init").returncode == 0
    assert wb(repo, "task", "add", "Parser").returncode == 0
    assert wb(repo, "task", "add", "Printer").returncode == 0
    assert wb(repo, "task", "start", "T-001").returncode == 0
    assert wb(repo, "task", "block", "T-001", "--reason", "waiting on review").returncode == 0
    text = wb(repo, "status").stdout
    assert any(line.startswith("ready") and "T-002" in line for line in text.splitlines()), text


def test_the_handoff_lists_the_sessions_commits_when_every_task_is_done(repo, wb, git):
    assert wb(repo, "init").returncode == 0
    assert wb(repo, "task", "add", "Parser").returncode == 0
    assert wb(repo, "task", "start", "T-001").returncode == 0
    (repo / "parser.py").write_text("def parse(): ...\n")
    git(repo, "add", "parser.py")
    git(repo, "commit", "-qm", "Add the parser")
    assert wb(repo, "task", "done", "T-001").returncode == 0

    r = wb(repo, "handoff", "--json")
    assert r.returncode == 0, r.stderr
    packet = json.loads(r.stdout)
    assert [c["subject"] for c in packet["commits"]] == ["Add the parser"]
    assert packet["changed_files"]["committed"] == ["parser.py"] and packet["changed_files"]["since"]
    assert "no recorded base commit" not in (repo / ".workbench" / "handoff.md").read_text()


def test_status_does_not_say_idle_while_a_task_is_in_progress(repo, wb):
    assert wb(repo, "init").returncode == 0
    assert wb(repo, "task", "add", "Parser").returncode == 0
    assert wb(repo, "task", "start", "T-001").returncode == 0
    status = next(line for line in wb(repo, "status").stdout.splitlines() if line.startswith("status"))
    assert "idle" not in status and "T-001" in status
