"""A real `claude -p` session (npm @anthropic-ai/claude-code) against a scripted Messages API on 127.0.0.1,
with wb wired by `wb init --claude-code`: its hooks record the session and guard `.workbench/` and the
task's scope, its MCP server does the work. What wb recorded, committed and denied is read back from wb."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.clients.conftest import client_env, events, wb
from tests.clients.modelserver import ScriptedModel, pick
from tests.conftest import run_git

pytestmark = pytest.mark.clients


def tool_results(requests: list[dict[str, Any]]) -> list[str]:
    """The text of every tool_result Claude Code sent back to the model, in order, once each."""
    seen: dict[str, str] = {}
    for request in requests:
        for message in request["body"].get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = block.get("content")
                    text = content if isinstance(content, str) else json.dumps(content)
                    seen.setdefault(block["tool_use_id"], text)
    return list(seen.values())


def run_claude(clients_bin: Path, repo: Path, tmp_path: Path, model: ScriptedModel,
               allowed: str) -> subprocess.CompletedProcess[str]:
    """`claude -p` in `repo` against the scripted model, with wb's `.mcp.json` and only `allowed` tools."""
    env = client_env(ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-scripted",
                     CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"), DISABLE_AUTOUPDATER="1",
                     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                     # MCP tools are deferred behind ToolSearch by default: the script calls them directly
                     ENABLE_TOOL_SEARCH="false")
    return subprocess.run(
        [str(clients_bin / "claude"), "-p", "Do the scripted work.", "--mcp-config", ".mcp.json",
         "--allowedTools", allowed, "--output-format", "json"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_a_claude_code_session_is_recorded_guarded_and_committed(clients_bin: Path, guarded_repo: Path,
                                                                  tmp_path: Path) -> None:
    repo = guarded_repo
    wb(repo, "init", "--claude-code")
    board_before = (repo / ".workbench" / "board.json").read_bytes()
    commits_before = int(run_git(repo, "rev-list", "--count", "HEAD"))
    turns = [("tool", pick("status"), {}),
             ("tool", pick("task_add"), {"title": "Written by the agent"}),
             ("tool", pick("Write"), {"file_path": str(repo / ".workbench" / "board.json"), "content": "{}"}),
             ("tool", pick("Write"), {"file_path": str(repo / "secrets" / "key.txt"), "content": "x"}),
             ("tool", pick("note"), {"text": "Scripted session: the calls are made"}),
             ("text", "Done.")]
    with ScriptedModel(turns) as model:
        # -p has no screen to approve on: allow exactly the tools the script calls, so what stops a call
        # is wb's hook and nothing else (an allowed Write that wb did not deny would be written).
        proc = run_claude(clients_bin, repo, tmp_path, model, "mcp__wb__status mcp__wb__task_add mcp__wb__note Write")
        assert not model.errors, model.errors
        requests = model.requests
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert json.loads(proc.stdout)["result"] == "Done."

    # Recorded: the session from its start to its end, every tool call, wb's own writes by the agent over MCP.
    log = events(repo)
    types = [e["type"] for e in log]
    for kind in ("agent.session_start", "agent.prompt", "agent.stop", "agent.session_end"):
        assert kind in types, types
    calls = [e["payload"] for e in log if e["type"] == "agent.tool_call"]
    assert [c["tool"] for c in calls] == ["mcp__wb__status", "mcp__wb__task_add", "Write", "Write",
                                          "mcp__wb__note"], calls
    assert all(c["agent"] == "claude-code" for c in calls)
    added = [e for e in log if e["type"] == "task.add" and e["payload"]["task"]["title"] == "Written by the agent"]
    assert len(added) == 1 and added[0]["via"] == "mcp" and added[0]["actor"] == "agent", added
    notes = [e for e in log if e["type"] == "note.add"]
    assert [(n["payload"]["text"], n["via"]) for n in notes] == [("Scripted session: the calls are made", "mcp")]

    # Denied: the board edit and the forbidden path, each with wb's reason, which the model was shown.
    assert "denied" not in calls[0] and "denied" not in calls[1] and "denied" not in calls[4]
    assert "written by wb alone" in calls[2]["denied"], calls[2]
    assert "forbids secrets/**" in calls[3]["denied"] and "T-001" in calls[3]["denied"], calls[3]
    results = tool_results(requests)
    assert len(results) == 5, results
    assert '"T-001"' in results[0]  # status over MCP: the active task
    assert "written by wb alone" in results[2] and "forbids secrets/**" in results[3], results
    assert not (repo / "secrets").exists()
    board = json.loads((repo / ".workbench" / "board.json").read_text())
    assert board != {} and [t["id"] for t in board["tasks"]] == ["T-001", "T-002"]
    assert (repo / ".workbench" / "board.json").read_bytes() != board_before  # changed by wb's task_add only

    # Committed: every event is in git, the work tree holds nothing of wb's uncommitted, the log is whole.
    new = int(run_git(repo, "rev-list", "--count", "HEAD")) - commits_before
    subjects = run_git(repo, "log", "--format=%s", f"HEAD~{new}..HEAD").splitlines()
    assert "wb: add T-002 Written by the agent" in subjects, subjects
    assert any(s.startswith("wb: note Scripted session") for s in subjects), subjects
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""
    wb(repo, "validate")
