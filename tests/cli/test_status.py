"""`wb status`: where to start, as text and as JSON."""

from __future__ import annotations

import json

STATUS_KEYS = {"workbench", "status", "active_task", "next_action", "blockers", "assumptions", "touched_files",
               "counters", "session", "pending", "board", "last_event", "unrecorded_human_edits"}


def test_status_json_shape(bench, repo, wb):
    bench.add_task("Parser")
    bench.add_task("Printer")
    bench.start_task("T-001")
    bench.block_task("T-002", "needs T-001")
    bench.set_state({"next_action": "finish the parser"})

    r = wb(repo, "status", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data) >= STATUS_KEYS
    assert data["workbench"] == str(repo)
    assert data["status"] == "idle"
    assert data["active_task"]["id"] == "T-001" and data["active_task"]["status"] == "in_progress"
    assert data["next_action"] == "finish the parser"
    assert data["blockers"] == ["T-002: needs T-001"]
    assert data["assumptions"] == [] and data["touched_files"] == []
    assert set(data["counters"]) == {"tasks_completed", "tasks_failed", "turns", "tool_calls", "tokens_consumed"}
    assert data["session"] is None and data["pending"] is None
    assert data["board"]["total"] == 2
    assert data["board"]["by_status"] == {"todo": 0, "in_progress": 1, "blocked": 1, "done": 0, "cancelled": 0}
    assert set(data["last_event"]) == {"seq", "type", "ts", "actor"}
    assert data["last_event"]["type"] == "state.set"
    assert data["unrecorded_human_edits"] == []


def test_status_text(bench, repo, wb):
    r = wb(repo, "status")
    assert r.returncode == 0
    lines = dict(line.split(None, 1) if not line.startswith(("active", "next", "last"))
                 else (" ".join(line.split()[:2]), " ".join(line.split()[2:])) for line in r.stdout.splitlines())
    assert lines["status"] == "idle"
    assert lines["active task"] == "none"
    assert lines["next action"] == "Add the first task: wb task add TITLE"
    assert lines["blockers"] == "none"
    assert lines["board"].startswith("0 todo")
    assert lines["last event"].startswith("#1 workbench.init by wb")


def test_status_from_a_subdirectory_reads_nothing_it_should_not_write(bench, repo, wb, wb_hashes):
    files = wb_hashes(repo)
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    r = wb(sub, "status", "--json")
    assert r.returncode == 0
    assert json.loads(r.stdout)["workbench"] == str(repo)
    assert wb_hashes(repo) == files
