"""Every hook event, as Claude Code and Codex CLI send it (fixtures/hooks/: one documented payload per event),
is recorded under its own agent.* type with the documented fields; an event wb does not know is recorded
generically, never an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import head_count, run_git
from tests.integrations.hookfixtures import FILES, events, fixture, fixture_events, hook, ok, spool_lines, tree_status

# what each documented payload becomes: its type, and payload fields it must carry
CLAUDE_CODE = {
    "SessionStart": ("agent.session_start", {"source": "startup", "model": "claude-sonnet-4-6"}),
    "UserPromptSubmit": ("agent.prompt", {"prompt": "Write a function to parse the config file"}),
    "PreToolUse": ("agent.tool_call", {"tool": "Bash", "tool_use_id": "toolu_01ABC123",
                                       "args": {"command": "pytest -q", "description": "Run the tests",
                                                "timeout": 120000}}),
    "PostToolUse": ("agent.tool_result", {"tool": "Write", "tool_use_id": "toolu_01ABC124"}),
    "PostToolUseFailure": ("agent.tool_result", {"tool": "Bash", "tool_use_id": "toolu_01ABC125", "failed": True,
                                                 "error": "Command exited with non-zero status code 1"}),
    "Notification": ("agent.notification", {"message": "Claude needs your permission to use Bash",
                                            "title": "Permission needed", "notification_type": "permission_prompt"}),
    "Stop": ("agent.stop", {"stop_hook_active": False}),
    "SubagentStop": ("agent.subagent_stop", {"subagent": "def456", "subagent_type": "Explore",
                                             "stop_hook_active": False}),
    "PreCompact": ("agent.pre_compact", {"trigger": "manual", "custom_instructions": "Keep the open questions"}),
    "SessionEnd": ("agent.session_end", {"reason": "other"}),
    "SubagentStart": ("agent.hook", {"event": "SubagentStart", "subagent": "def456", "subagent_type": "Explore"}),
}
CODEX = {
    "SessionStart": ("agent.session_start", {"source": "startup", "model": "gpt-5-codex"}),
    "UserPromptSubmit": ("agent.prompt", {"prompt": "Fix the failing test"}),
    "PreToolUse": ("agent.tool_call", {"tool": "Bash", "tool_use_id": "call_5m2Jx9",
                                       "args": {"command": "pytest -q tests/test_config.py"}}),
    "PostToolUse": ("agent.tool_result", {"tool": "Bash", "result": "1 passed in 0.02s"}),
    "PermissionRequest": ("agent.hook", {"event": "PermissionRequest"}),
    "Stop": ("agent.stop", {"stop_hook_active": False}),
}
ORDER = ["SessionStart", "UserPromptSubmit", "SubagentStart", "PreToolUse", "PermissionRequest", "Notification",
         "PostToolUse", "PostToolUseFailure", "SubagentStop", "PreCompact", "Stop", "SessionEnd"]


def test_there_is_one_fixture_per_event() -> None:
    assert fixture_events("claude-code") == sorted(CLAUDE_CODE)
    assert fixture_events("codex") == sorted(CODEX)


@pytest.mark.parametrize(("client", "expected"), [("claude-code", CLAUDE_CODE), ("codex", CODEX)])
def test_every_event_is_recorded_with_its_documented_fields(bench, repo: Path, client: str,
                                                            expected: dict[str, tuple[str, dict]]) -> None:
    names = [n for n in ORDER if n in expected]
    spooled: list[str] = []
    clean = tree_status(repo)
    assert clean == "" or not FILES
    for name in names:
        proc = ok(hook(repo, fixture(client, name, repo), client))
        if name == "SessionStart":  # context through hookSpecificOutput.additionalContext
            answer = json.loads(proc.stdout)["hookSpecificOutput"]
            assert answer["hookEventName"] == "SessionStart" and "Next action" in answer["additionalContext"]
        else:
            assert proc.stdout == ""
        assert tree_status(repo) == clean  # never a dirty work tree
        spooled.append(name)
    logged = [e for e in events(repo) if e["type"].startswith("agent.")]
    assert len(logged) == len(names) and spool_lines(repo) == []  # each once, folded at the last fold event
    for name, event in zip(names, logged, strict=True):
        type_, fields = expected[name]
        assert event["type"] == type_, name
        assert event["actor"] == "agent" and event["payload"]["agent"] == client, name
        for key, value in fields.items():
            assert event["payload"][key] == value, (name, key)
        text = json.dumps(event["payload"])
        assert "transcript_path" not in text and "/home/dev/" not in text, name  # machine paths stay out
    if client == "codex":
        assert all(e["payload"]["turn"] == "0199a213-8d4e-7c21-9f0b-5e2f3c7a1d10"
                   for e in logged if e["type"] not in ("agent.session_start",))
    generic = [e for e in logged if e["type"] == "agent.hook"]
    assert generic and all("fields" in e["payload"] for e in generic)
    assert tree_status(repo) == clean
    if FILES:
        assert f"wb: {client} turn ends" in run_git(repo, "log", "--format=%s")


def test_a_failed_tool_call_is_recorded_as_failed(bench, repo: Path) -> None:
    ok(hook(repo, fixture("claude-code", "PreToolUse", repo)))
    failure = fixture("claude-code", "PostToolUseFailure", repo)
    failure["tool_use_id"] = "toolu_01ABC123"
    ok(hook(repo, failure))
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    call, result, _stop = [e for e in events(repo) if e["type"].startswith("agent.")]
    assert call["payload"]["tool_use_id"] == result["payload"]["tool_use_id"] == "toolu_01ABC123"
    assert result["payload"]["failed"] is True and "result" not in result["payload"]


def test_calls_inside_a_subagent_carry_its_id(bench, repo: Path) -> None:
    inner = fixture("claude-code", "PreToolUse", repo)
    inner.update(agent_id="def456", agent_type="Explore")
    ok(hook(repo, fixture("claude-code", "PreToolUse", repo)))
    ok(hook(repo, inner))
    ok(hook(repo, fixture("claude-code", "SubagentStop", repo)))
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    main_call, sub_call, sub_stop, _stop = [e["payload"] for e in events(repo) if e["type"].startswith("agent.")]
    assert "subagent" not in main_call and sub_call["subagent"] == sub_stop["subagent"] == "def456"


def test_an_unknown_event_is_recorded_generically(bench, repo: Path) -> None:
    odd = {**fixture("claude-code", "Stop", repo), "hook_event_name": "SomethingNew", "detail": {"n": 1}}
    odd.pop("stop_hook_active")
    proc = ok(hook(repo, odd))
    assert proc.stdout == ""
    assert [(r["type"], r["payload"]["event"], r["payload"]["fields"]) for r in spool_lines(repo)] == \
        [("agent.hook", "SomethingNew", {"detail": {"n": 1}, "last_assistant_message":
                                         "I've added the config parser and its tests."})]


@pytest.mark.parametrize("event", ["SessionEnd", "PreCompact", "SessionStart"])
def test_session_end_pre_compact_and_session_start_commit_what_is_pending(bench, repo: Path, event: str) -> None:
    ok(hook(repo, fixture("claude-code", "UserPromptSubmit", repo)))
    ok(hook(repo, fixture("claude-code", "PreToolUse", repo)))
    before = head_count(repo)
    clean = tree_status(repo)
    assert len(spool_lines(repo)) == 2
    ok(hook(repo, fixture("claude-code", event, repo)))
    assert spool_lines(repo) == []
    if FILES:
        assert head_count(repo) == before + 1
    types = [e["type"] for e in events(repo)]
    if event == "SessionEnd":  # the session ends with its handoff packet, in the same commit (issue 16 §3)
        assert types[-1] == "handoff.write" and (repo / ".workbench" / "handoff.json").is_file()
        if FILES:
            assert "handoff.json" in run_git(repo, "show", "--stat", "--format=", "HEAD")
        types = types[:-1]
    assert types[-3:] == ["agent.prompt", "agent.tool_call", CLAUDE_CODE[event][0]]
    assert tree_status(repo) == clean

