"""`wb hook claude-code`: Claude Code hook payloads on stdin become agent.* events; the hook never blocks."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import hash_workbench, head_count, run_git, run_wb, spawn_wb
from tests.integrations.hookfixtures import FILES, event_bytes, events

SESSION = "8c35adc1-2f4e-4d2a-9a51-0c8f5b3e7d21"


def payloads(cwd: Path) -> dict[str, dict[str, Any]]:
    """The shapes Claude Code sends (hooks reference: the common fields, then each event's own)."""
    common = {"session_id": SESSION, "transcript_path": f"/home/dev/.claude/projects/x/{SESSION}.jsonl",
              "cwd": str(cwd), "permission_mode": "default"}
    return {
        "SessionStart": {**common, "hook_event_name": "SessionStart", "source": "startup"},
        "PreToolUse": {**common, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "pytest -q", "description": "Run the tests", "timeout": 120000},
                       "tool_use_id": "toolu_01ABC123"},
        "PostToolUse": {**common, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "pytest -q", "description": "Run the tests"},
                        "tool_response": {"stdout": "3 passed in 0.01s\n", "stderr": "", "interrupted": False,
                                          "isImage": False},
                        "tool_use_id": "toolu_01ABC123"},
        "Stop": {**common, "hook_event_name": "Stop", "stop_hook_active": False},
    }


def hook(repo: Path, payload: Any, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return spawn_wb(cwd or repo, *args, "hook", "claude-code", input=data, timeout=60)  # stdin is a real pipe


def wb_ok(repo: Path, *args: str) -> str:
    proc = run_wb(repo, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_four_events_land_in_the_log_and_the_workbench_stays_valid(bench, repo: Path) -> None:
    bench.add_task("Parse the config")
    shapes = payloads(repo)
    commits = head_count(repo)

    start = hook(repo, shapes["SessionStart"])
    assert start.returncode == 0 and start.stderr == ""
    answer = json.loads(start.stdout)["hookSpecificOutput"]  # Claude Code's SessionStart context, as JSON
    assert answer["hookEventName"] == "SessionStart"
    context = answer["additionalContext"]
    assert "Next action" in context and "1 todo" in context  # the `wb status` summary, as context
    assert "Last event: #2 task.add" in context  # read before this session's own event
    assert len(events(repo)) == 3  # SessionStart folds the spool: its event is in the log
    if FILES:
        assert head_count(repo) == commits + 1

    for name in ("PreToolUse", "PostToolUse"):
        proc = hook(repo, shapes[name])
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert len(events(repo)) == 3  # tool events wait for the end of the turn to be folded (and committed)
    if FILES:
        assert head_count(repo) == commits + 1

    stop = hook(repo, shapes["Stop"])
    assert (stop.returncode, stop.stdout, stop.stderr) == (0, "", "")
    if FILES:  # SQLite: the turn is one database transaction, no commit
        assert head_count(repo) == commits + 2
        assert run_git(repo, "log", "-1", "--format=%s").strip() == "wb: claude-code turn ends"
        assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""

    logged = events(repo)[-4:]
    assert [e["type"] for e in logged] == ["agent.session_start", "agent.tool_call", "agent.tool_result",
                                           "agent.stop"]
    assert all(e["actor"] == "agent" and e["session"] is None for e in logged)
    assert all(e["payload"]["agent"] == "claude-code" and e["payload"]["agent_session"] == SESSION for e in logged)
    assert logged[0]["payload"]["source"] == "startup"
    assert logged[1]["payload"]["tool"] == "Bash" and logged[1]["payload"]["args"]["command"] == "pytest -q"
    assert logged[2]["payload"]["result"]["stdout"] == "3 passed in 0.01s\n"
    assert logged[2]["payload"]["tool_use_id"] == "toolu_01ABC123"
    assert logged[3]["payload"]["stop_hook_active"] is False
    assert all("transcript_path" not in json.dumps(e["payload"]) for e in logged)  # machine paths stay out

    wb_ok(repo, "validate")
    assert "snapshots match" in wb_ok(repo, "replay", "--verify")
    assert "agent.tool_call" in wb_ok(repo, "log", "--type", "agent")


def test_long_tool_output_is_clipped_with_its_size_and_sha256(bench, repo: Path) -> None:
    output = "".join(f"line {i}: {'x' * 70}\n" for i in range(2000))  # ~160 KB of test output
    payload = payloads(repo)["PostToolUse"]
    payload["tool_response"] = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
    payload["tool_input"] = {"command": "pytest -q -vv"}
    assert hook(repo, payload).returncode == 0
    assert hook(repo, payloads(repo)["Stop"]).returncode == 0  # the turn's end folds the spool into the log
    event = [e for e in events(repo) if e["type"] == "agent.tool_result"][-1]
    clipped = event["payload"]["result"]["stdout"]
    assert clipped["truncated"] is True and clipped["text"] == output[:2048]
    assert clipped["bytes"] == len(output.encode())
    assert clipped["sha256"] == hashlib.sha256(output.encode()).hexdigest()
    line = [raw for raw in event_bytes(repo).splitlines() if b'"agent.tool_result"' in raw][-1]
    assert len(line) < 8192
    wb_ok(repo, "validate")


def test_a_hook_never_blocks_the_agent(bench, repo: Path, tmp_path: Path) -> None:
    files = hash_workbench(repo)
    for bad in ("not json", "[1, 2]", '{"session_id": "x"}', ""):  # which event? It may be a PreToolUse: blocked
        proc = hook(repo, bad)
        assert proc.returncode == 2 and proc.stdout == ""
        assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("wb: hook claude-code: hook payload")
    bad_stop = hook(repo, {**payloads(repo)["Stop"], "session_id": ["x"]})  # any other event: never blocked
    assert bad_stop.returncode == 0 and "session_id is a list, not a string" in bad_stop.stderr
    # UserPromptSubmit was ignored before issue 13; now it is spooled in the git directory: .workbench/ as it was
    prompt = hook(repo, {**payloads(repo)["Stop"], "hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    assert (prompt.returncode, prompt.stdout, prompt.stderr) == (0, "", "")
    assert hash_workbench(repo) == files

    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    run_git(elsewhere, "init", "-q")
    for name, shape in payloads(elsewhere).items():  # a repo without a workbench: one line, exit 0
        proc = hook(elsewhere, shape)
        assert proc.returncode == 0 and proc.stdout == "", name
        assert proc.stderr.splitlines() == [f"wb: hook claude-code: no workbench in {elsewhere.resolve()}: "
                                            "run `wb init` first"]


def test_the_payload_cwd_finds_the_workbench(bench, repo: Path, tmp_path: Path) -> None:
    proc = hook(repo, payloads(repo)["PreToolUse"], cwd=tmp_path)  # started elsewhere, as a global hook may be
    assert (proc.returncode, proc.stderr) == (0, "")
    stop = hook(repo, payloads(repo)["Stop"], cwd=tmp_path)
    assert (stop.returncode, stop.stderr) == (0, "")
    assert [e["type"] for e in events(repo)[-2:]] == ["agent.tool_call", "agent.stop"]


def test_agent_events_leave_a_live_harness_session_alone(bench, repo: Path) -> None:
    (repo / "plan.json").write_text(json.dumps({"steps": [
        {"description": "Deploy", "tool": "deploy", "args": {"env": "staging"}}]}))
    proc = run_wb(repo, "run", "Ship it", "--plan", "plan.json", env=_ci_env())
    assert proc.returncode == 3, proc.stderr
    before = json.loads(wb_ok(repo, "status", "--json"))["session"]
    for shape in payloads(repo).values():
        assert hook(repo, shape).returncode == 0
    after = json.loads(wb_ok(repo, "status", "--json"))["session"]
    assert after == before
    resumed = run_wb(repo, "resume", "--result", '{"ok": true}', env=_ci_env())
    assert resumed.returncode == 0, resumed.stderr
    wb_ok(repo, "validate")
    assert "snapshots match" in wb_ok(repo, "replay", "--verify")


def test_record_event_refuses_types_wb_folds(bench) -> None:
    from workbench.errors import Refused, UsageError
    from workbench.integrations.agenthooks import record_event

    for folded in ("tool.call", "tool.result", "session.start", "task.add", "note.add"):
        with pytest.raises(Refused, match="choose a type of your own"):
            record_event(bench, folded, {})
    with pytest.raises(UsageError):
        record_event(bench, "Agent Thing", {})
    event = record_event(bench, "agent.note", {"text": "hello"})
    assert event["type"] == "agent.note" and (bench.last.commit is not None or not FILES)
    assert bench.log(type="agent")[-1]["payload"] == {"text": "hello"}


def test_redacted_values_never_reach_the_log(bench, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.integrations.agenthooks import record_claude_code

    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("redact: []", "redact: [DEPLOY_TOKEN]"))
    monkeypatch.setenv("DEPLOY_TOKEN", "s3cr3t-value")
    from workbench.api import Bench

    fresh = Bench.open(repo)
    shape = payloads(repo)["PreToolUse"]
    shape["tool_input"] = {"command": "curl -H 'Authorization: s3cr3t-value' https://example.invalid"}
    record_claude_code(fresh, shape)
    text = event_bytes(repo).decode()
    assert "s3cr3t-value" not in text and "[redacted]" in text


def _ci_env() -> dict[str, str]:
    import os

    return dict(os.environ, CI="1")
