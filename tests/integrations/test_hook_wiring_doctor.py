"""`wb doctor` notices an agent that acted while its client's hooks, wired to wb, recorded nothing (issue 19):
Codex runs no project hook until it is trusted, and `codex exec` says nothing, so the workbench was changed with
no record and no guard. The finding names the client's trust step."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.conftest import run_wb
from tests.integrations.hookfixtures import fixture, hook, ok


def doctor(repo: Path) -> tuple[int, list[dict]]:
    proc = run_wb(repo, "doctor", "--json")
    return proc.returncode, json.loads(proc.stdout)["findings"]


def agent_acts(repo: Path) -> None:
    """What an agent does through wb's command line with no hook of its client running (no terminal: agent)."""
    proc = run_wb(repo, "task", "add", "Parse the config", "--actor", "agent")
    assert proc.returncode == 0, proc.stderr


def backdate(path: Path) -> None:
    old = time.time() - 600
    os.utime(path, (old, old))


def test_codex_wired_but_untrusted_is_named_with_its_trust_step(bench, repo: Path) -> None:
    assert run_wb(repo, "init", "--codex").returncode == 0
    backdate(repo / ".codex" / "hooks.json")
    assert doctor(repo) == (0, [])  # wired, nothing happened since: nothing to say
    agent_acts(repo)
    code, findings = doctor(repo)
    assert code == 1 and [f["code"] for f in findings] == ["agent_hooks_silent"]
    message = findings[0]["message"]
    assert ".codex/hooks.json wires codex" in message and "only once they are trusted" in message
    assert "run `codex` in this repository" in message and findings[0]["fixable"] is False
    # once Codex's hooks run (trusted), their events are heard: the finding goes
    ok(hook(repo, fixture("codex", "UserPromptSubmit", repo), "codex"))
    assert doctor(repo) == (0, [])


def test_claude_code_wired_with_hooks_heard_is_healthy(bench, repo: Path) -> None:
    assert run_wb(repo, "init", "--claude-code").returncode == 0
    backdate(repo / ".claude" / "settings.json")
    ok(hook(repo, fixture("claude-code", "SessionStart", repo)))
    agent_acts(repo)
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    assert doctor(repo) == (0, [])


def test_an_mcp_only_claude_code_session_is_named(bench, repo: Path) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"wb": {"command": "wb", "args": ["mcp"]}}}))
    backdate(repo / ".mcp.json")
    agent_acts(repo)
    code, findings = doctor(repo)
    assert code == 1 and "claude-code" in findings[0]["message"] and "/hooks" in findings[0]["message"]


def test_no_wiring_no_finding(bench, repo: Path) -> None:
    agent_acts(repo)
    assert doctor(repo) == (0, [])
