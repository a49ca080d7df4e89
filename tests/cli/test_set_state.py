"""`wb set KEY=VALUE…`: state fields."""

from __future__ import annotations

import json

from tests.stored import FILES


def test_set_fields(bench, repo, wb, git):
    bench.add_task("Parser")
    r = wb(repo, "set", "next_action=Write the lexer", "assumptions=[\"ascii only\", \"no macros\"]",
           "touched_files=src/lexer.py", "active_task_id=T-001", "--json")
    assert r.returncode == 0, r.stderr
    state = json.loads(r.stdout)
    assert state["next_action"] == "Write the lexer"
    assert state["assumptions"] == ["ascii only", "no macros"]
    assert state["touched_files"] == ["src/lexer.py"]
    assert state["active_task_id"] == "T-001"
    if FILES:
        assert git(repo, "log", "-1", "--format=%s").strip() == \
            "wb: set active_task_id, assumptions, next_action, touched_files"

    r = wb(repo, "set", "active_task_id=", "touched_files=")
    assert r.returncode == 0, r.stderr
    status = json.loads(wb(repo, "status", "--json").stdout)
    assert status["active_task"] is None and status["touched_files"] == []


def test_set_same_value_changes_nothing(bench, repo, wb, commits):
    count = commits(repo)
    r = wb(repo, "set", "next_action=Add the first task: wb task add TITLE")
    assert r.returncode == 0
    assert r.stdout.strip() == "nothing changed"
    assert commits(repo) == count


def test_derived_keys_cannot_be_set(bench, repo, wb, error_line):
    for key in ("last_event=3", "counters={}", "schema_version=2", "session=null"):
        r = wb(repo, "set", key)
        assert r.returncode == 2, key
        assert "kept by wb" in error_line(r.stderr)
