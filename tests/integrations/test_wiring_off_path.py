"""Issue 31 item 10: wiring an agent as the docs say works with wb off PATH — the client starts `wb mcp` from
its own environment, and the agent's shell (Codex's login shell) drops the virtual environment wb is in.

Each check runs what was written or documented from a shell whose PATH is the system's alone (no venv); the
real `claude mcp add` / `claude mcp list` round trip is tests/clients/test_claude_mcp_add.py."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import run_wb

ROOT = Path(__file__).resolve().parents[2]
MINIMAL_PATH = "/usr/bin:/bin"  # a login shell's, or a client's own: no virtual environment on it
WB = Path(sys.executable).parent / "wb"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


def minimal_env(repo: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME", "WB_", "NO_COLOR", "COLUMNS"))}
    env["PATH"] = MINIMAL_PATH
    return env


def answers_initialize(argv: list[str], repo: Path) -> dict:
    """Start the MCP server as a client would (argv, from `repo`, PATH without wb) and read its first answer."""
    proc = subprocess.run(argv, cwd=repo, input=json.dumps(INIT) + "\n", capture_output=True, text=True,
                          timeout=60, env=minimal_env(repo))
    first = proc.stdout.splitlines()[:1]
    assert first, (argv, proc.returncode, proc.stderr)
    answer: dict = json.loads(first[0])
    return answer


def test_wb_is_off_the_minimal_path() -> None:
    probe = subprocess.run(["sh", "-c", "command -v wb"], capture_output=True, text=True,
                           env={"PATH": MINIMAL_PATH})
    if probe.returncode == 0:
        pytest.skip(f"wb is installed system-wide here ({probe.stdout.strip()}): nothing is off PATH")
    assert WB.is_file(), f"no wb script beside {sys.executable}"


def _doc_lines(pattern: str) -> list[tuple[str, str]]:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in path.read_text().splitlines():
            if re.search(pattern, line):
                found.append((path.name, line))
    return found


def test_every_documented_claude_mcp_add_names_wb_by_its_absolute_path() -> None:
    lines = _doc_lines(r"^\s*claude mcp add\b")
    assert lines, "the docs show no `claude mcp add`"
    for name, line in lines:
        command = line.split("#")[0].split(" -- ", 1)[1].strip()
        assert command == '"$(command -v wb)" mcp', f"{name}: {line}"


def test_no_documented_client_entry_starts_a_bare_wb() -> None:
    bare = _doc_lines(r'"command":\s*"wb"|^\s*command\s*=\s*"wb"|mcp add [^#]*-- wb mcp')
    assert bare == []


def test_the_documented_claude_mcp_add_command_expands_to_a_wb_that_runs_off_path(repo: Path) -> None:
    """What `"$(command -v wb)" mcp` expands to where the docs say to type it (wb's venv active), started from a
    shell without the venv: an MCP server that answers."""
    expanded = subprocess.run(["sh", "-c", 'printf "%s\\n" "$(command -v wb)" mcp'], capture_output=True,
                              text=True, env={**os.environ, "PATH": f"{WB.parent}:{MINIMAL_PATH}"}).stdout.split()
    assert expanded == [str(WB), "mcp"]
    answer = answers_initialize(expanded, repo)
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"], answer


def test_wb_init_writes_servers_that_start_off_path(repo: Path) -> None:
    r = run_wb(repo, "init", "--claude-code", "--codex", process=True)
    assert r.returncode == 0, r.stderr
    server = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["wb"]
    assert os.path.isabs(server["command"]), server
    assert answers_initialize([server["command"], *server["args"]], repo)["id"] == 1
    codex = tomllib.loads((repo / ".codex" / "config.toml").read_text())["mcp_servers"]["wb"]
    assert os.path.isabs(codex["command"]), codex
    assert answers_initialize([codex["command"], *codex["args"]], repo)["id"] == 1


def test_the_agents_shell_is_told_where_wb_is_and_reaches_it(repo: Path) -> None:
    """The SessionStart context (`wb prime`) of a wb in a virtual environment names its absolute path; the
    command it names runs from a login-like shell whose PATH has no venv (Codex's: `wb: command not found`)."""
    assert run_wb(repo, "init", process=True).returncode == 0
    assert run_wb(repo, "task", "add", "First", process=True).returncode == 0
    prime = subprocess.run([str(WB), "prime"], cwd=repo, capture_output=True, text=True, timeout=60,
                           env=minimal_env(repo))
    assert prime.returncode == 0, prime.stderr
    named = re.search(r"^`wb` here is (.+?): where your shell says `wb: command not found`", prime.stdout, re.M)
    assert named, prime.stdout
    assert shlex.split(named.group(1)) == [str(WB)]
    shell = minimal_env(repo)
    missing = subprocess.run(["sh", "-c", "wb task next"], cwd=repo, capture_output=True, text=True, env=shell)
    assert missing.returncode == 127  # the failure the agent saw
    ran = subprocess.run(["sh", "-c", f"{named.group(1)} task next"], cwd=repo, capture_output=True, text=True,
                         env=shell, timeout=60)
    assert ran.returncode == 0 and "T-001" in ran.stdout, ran.stderr
    data = json.loads(subprocess.run([str(WB), "prime", "--json"], cwd=repo, capture_output=True, text=True,
                                     env=shell, timeout=60).stdout)
    assert data["wb"] == named.group(1)


def test_a_wb_linked_onto_path_for_good_needs_no_path_in_the_context(repo: Path, tmp_path: Path) -> None:
    """`pipx install` / `uv tool install` link wb into a directory on PATH (~/.local/bin): `wb` is found from any
    shell, and the context does not spend a line on its path."""
    assert run_wb(repo, "init", process=True).returncode == 0
    linked = tmp_path / "local-bin"
    linked.mkdir()
    (linked / "wb").symlink_to(WB)
    env = {**minimal_env(repo), "PATH": f"{linked}:{MINIMAL_PATH}"}
    prime = subprocess.run(["sh", "-c", "wb prime --json"], cwd=repo, capture_output=True, text=True, env=env,
                           timeout=60)
    assert prime.returncode == 0, prime.stderr
    assert json.loads(prime.stdout)["wb"] is None
