"""What a config.edit says changed (store/configedit.py), and how `wb log` shows it (review/eventview.py)."""

from __future__ import annotations

from workbench.review.eventview import summarize
from workbench.store.configedit import diff


def test_tools_hooks_and_keys_added_removed_and_changed() -> None:
    old = {"lock_timeout": 10, "tools": {"pytest": {"argv": ["pytest"], "mode": "safe_readonly"}, "old": {}},
           "hooks": {"before_tool_call": [{"run": ["guard"]}]}}
    new = {"lock_timeout": 10, "approvals": "agent",
           "tools": {"pytest": {"argv": ["pytest"], "mode": "mutating"}, "lint": {"argv": ["ruff"]}}, "hooks": {}}
    out = diff(old, new)
    assert out["keys"] == {"added": ["approvals"], "values": {"approvals": "agent"}}
    assert out["tools"]["added"] == ["lint"] and out["tools"]["removed"] == ["old"]
    assert out["tools"]["changed"] == ["pytest"] and out["tools"]["values"]["pytest"]["mode"] == "mutating"
    assert out["hooks"] == {"removed": ["before_tool_call"]}
    line = summarize({**out, "sha": "0" * 64})
    assert "tools +lint -old ~pytest" in line and "hooks -before_tool_call" in line and "keys +approvals" in line


def test_the_same_config_is_no_change() -> None:
    config = {"tools": {"a": {"argv": ["a"]}}, "budget": {"max_turns": 3}}
    assert diff(config, {**config}) == {}


def test_a_refused_agent_edit_names_task_and_field() -> None:
    line = summarize({"file": "board.json", "refused": [{"task": "T-001", "field": "acceptance"},
                                                        {"task": "T-001", "field": "scope"}]})
    assert line.startswith("refused T-001.acceptance, T-001.scope")
