"""A hook that cannot do its work fails closed where it guards (issue 19): a PreToolUse payload wb cannot read
or check — not JSON, the wrong shape, the wrong types — and a payload that names no event (it may be a
PreToolUse) exit 2 with one line on stderr, which Claude Code and Codex read as "block this tool call, here is
why". Any other event's problem is one line and exit 0: recording it is not worth stopping the agent. Never a
traceback, never a SystemError."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import WB_ARGV, hash_workbench, run_wb
from tests.integrations.hookfixtures import events, fixture, hook, ok


def raw_hook(repo: Path, data: bytes, client: str = "claude-code") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*WB_ARGV, "hook", client], cwd=repo, input=data, capture_output=True, timeout=120)


def one_clean_line(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace")
    assert len(text.splitlines()) == 1, text
    assert "Traceback" not in text and "SystemError" not in text
    assert text.startswith("wb: hook ")
    return text


def pre_tool_use(repo: Path, **fields: object) -> bytes:
    payload = fixture("claude-code", "PreToolUse", repo)
    payload.update(fields)
    return json.dumps(payload).encode()


@pytest.mark.parametrize(("name", "data"), [
    ("not JSON", b"{'hook_event_name': 'PreToolUse'"),
    ("not UTF-8", b"\xff\xfe{\x00"),
    ("empty", b""),
    ("a list", b"[1, 2]"),
    ("no event name", b'{"session_id": "x", "tool_name": "Bash"}'),
    ("an event name that is not a string", b'{"hook_event_name": ["PreToolUse"]}'),
    ("NUL", b"\x00" * 64),
])
def test_a_payload_that_names_no_event_blocks(bench, repo: Path, name: str, data: bytes) -> None:
    files = hash_workbench(repo)
    proc = raw_hook(repo, data)
    assert proc.returncode == 2 and proc.stdout == b"", name
    assert "blocked" in one_clean_line(proc.stderr)
    assert hash_workbench(repo) == files


@pytest.mark.parametrize(("name", "fields", "said"), [
    ("tool_input a string", {"tool_input": "rm -rf .workbench"}, "tool_input is a string, not an object"),
    ("tool_input a list", {"tool_input": [".workbench/board.json"]}, "tool_input is a list, not an object"),
    ("tool_name a list", {"tool_name": ["Write"]}, "tool_name is a list, not a string"),
    ("cwd a number", {"cwd": 5}, "cwd is a number, not a string"),
    ("session_id an object", {"session_id": {"id": 1}}, "session_id is an object, not a string"),
])
def test_a_pretooluse_of_the_wrong_shape_blocks(bench, repo: Path, name: str, fields: dict, said: str) -> None:
    proc = raw_hook(repo, pre_tool_use(repo, **fields))
    assert proc.returncode == 2 and proc.stdout == b"", name
    line = one_clean_line(proc.stderr)
    assert said in line and "the tool call is blocked" in line


def test_another_events_bad_payload_is_one_line_and_never_blocks(bench, repo: Path) -> None:
    for event in ("Stop", "UserPromptSubmit", "PostToolUse", "SessionEnd"):
        payload = fixture("claude-code", event, repo)
        payload["session_id"] = ["not", "a", "string"]
        proc = raw_hook(repo, json.dumps(payload).encode())
        assert proc.returncode == 0, event
        assert "session_id is a list" in one_clean_line(proc.stderr)


def test_lone_surrogates_huge_and_deep_payloads_are_recorded_cleanly(bench, repo: Path) -> None:
    surrogate = pre_tool_use(repo, tool_input={"command": "echo \\ud800 \\udfff"}).replace(b"\\\\u", b"\\u")
    assert b"\\ud800" in surrogate
    huge = fixture("claude-code", "PostToolUse", repo)
    huge["tool_response"] = {"stdout": "x" * 20_000_000}
    deep = pre_tool_use(repo, tool_input={"command": "ls", "nested": "DEEP"}).replace(
        b'"DEEP"', b"[" * 200_000 + b"]" * 200_000)
    for data in (surrogate, json.dumps(huge).encode(), deep):
        proc = raw_hook(repo, data)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr[-500:]
        assert len(proc.stderr.splitlines()) <= 1
    ok(hook(repo, fixture("claude-code", "Stop", repo)))  # the fold takes them all
    kinds = [e["type"] for e in events(repo)]
    assert kinds.count("agent.tool_call") == 2 and kinds.count("agent.tool_result") == 1
    assert run_wb(repo, "validate").returncode == 0


def test_a_write_into_the_workbench_is_denied_from_outside_any_repository(bench, repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "scratch"
    elsewhere.mkdir()
    payload = fixture("claude-code", "PreToolUse", elsewhere)
    payload.update(tool_name="Write", tool_input={"file_path": str(repo / ".workbench" / "state.md"),
                                                  "content": "---\nstatus: completed\n---\n"})
    proc = hook(elsewhere, payload)
    assert proc.returncode == 0
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "state.md" in answer["permissionDecisionReason"]
    plain = fixture("claude-code", "PreToolUse", elsewhere)  # nothing of wb's to guard: one line, never blocked
    proc = hook(elsewhere, plain)
    assert proc.returncode == 0 and proc.stdout == "" and "not inside a git repository" in proc.stderr
