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
    stale = data["stale_next_action"]
    assert {k: stale[k] for k in ("text", "why")} == {"text": "Start T-002", "why": "T-002 is done"}
    assert stale["set_at"] and isinstance(stale["event"], int)  # when it was set, and by which event
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


def test_the_derived_next_action_puts_the_task_in_progress_before_a_waiting_yield(repo, wb):
    assert wb(repo, "init").returncode == 0
    assert wb(repo, "task", "add", "Parser").returncode == 0
    assert wb(repo, "task", "add", "Printer").returncode == 0
    assert wb(repo, "task", "start", "T-001").returncode == 0
    (repo / "plan.json").write_text(json.dumps({"steps": [{"description": "Deploy", "tool": "deploy"}]}))
    assert wb(repo, "run", "Ship it", "--plan", "plan.json").returncode == 3  # a tool wb cannot run: it waits

    data = json.loads(wb(repo, "status", "--json").stdout)
    assert data["pending"] is not None and data["next_action_source"] == "derived"
    assert data["next_action"].startswith("Finish T-001 Parser")  # the active task, then the yield
    nxt = json.loads(wb(repo, "handoff", "--json").stdout)["next_action"]
    assert nxt == {"text": "finish T-001: Parser", "command": "wb task done T-001"}

    assert wb(repo, "task", "done", "T-001").returncode == 0  # no task in progress: the yield leads
    data = json.loads(wb(repo, "status", "--json").stdout)
    assert data["next_action"].startswith("Answer the waiting harness session"), data["next_action"]
    assert json.loads(wb(repo, "handoff", "--json").stdout)["next_action"]["text"].startswith("answer the waiting")


def test_a_next_action_naming_no_task_goes_stale_when_the_work_it_was_set_in_changes(repo, wb):
    assert wb(repo, "init").returncode == 0
    assert wb(repo, "task", "add", "Parser").returncode == 0
    assert wb(repo, "task", "add", "Printer").returncode == 0
    assert wb(repo, "task", "start", "T-001").returncode == 0
    assert wb(repo, "set", "next_action=Ask Ana about the grammar before writing more").returncode == 0
    data = json.loads(wb(repo, "status", "--json").stdout)
    assert data["next_action"] == "Ask Ana about the grammar before writing more"  # holds while T-001 goes on

    assert wb(repo, "task", "done", "T-001").returncode == 0
    data = json.loads(wb(repo, "status", "--json").stdout)
    assert data["next_action_source"] == "derived" and data["next_action"].startswith("Start T-002")
    stale = data["stale_next_action"]
    assert stale["text"] == "Ask Ana about the grammar before writing more"
    assert stale["why"] == "T-001 was in_progress then and is done now"
    text = wb(repo, "status").stdout
    (line,) = [line for line in text.splitlines() if line.startswith("stale")]
    assert f"(set {stale['set_at']}, event {stale['event']})" in line and "dropped" in line
    nxt = json.loads(wb(repo, "handoff", "--json").stdout)["next_action"]
    assert nxt == {"text": "start T-002: Printer", "command": "wb task start T-002"}
