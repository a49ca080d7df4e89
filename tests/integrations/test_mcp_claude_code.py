"""Claude Code's own MCP handshake against `wb mcp`: `claude mcp list` connects to each configured server (no
model is needed) and says whether it answered. Claude Code 2.1.332 sends `server/discover` first and, when the
answer is slow (the SDK loading), falls back to `initialize`, gets -32022 from a connection the discover
already opened, and probes again; with the fast path the discover is answered, and nothing else is sent.

Runs when Claude Code is installed (`claude` on PATH, or WB_CLAUDE_CODE naming its binary; e.g.
`npm install @anthropic-ai/claude-code` and WB_CLAUDE_CODE=node_modules/.bin/claude); skipped otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import WB_ARGV
from tests.integrations.test_mcp import server_env

CLAUDE = os.environ.get("WB_CLAUDE_CODE") or shutil.which("claude")

pytestmark = pytest.mark.skipif(not CLAUDE, reason="Claude Code is not installed (set WB_CLAUDE_CODE)")

WIRE_TAP = """\
import subprocess, sys, threading
log = open(sys.argv[1], "a")
server = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def up():
    for line in sys.stdin.buffer:
        log.write("C " + line.decode()); log.flush()
        server.stdin.write(line); server.stdin.flush()
    server.stdin.close()
threading.Thread(target=up, daemon=True).start()
for line in server.stdout:
    log.write("S " + line.decode()); log.flush()
    sys.stdout.buffer.write(line); sys.stdout.buffer.flush()
sys.exit(server.wait())
"""


def test_claude_codes_handshake_is_answered_without_a_fallback(bench, repo: Path, tmp_path: Path) -> None:
    assert CLAUDE is not None
    home = tmp_path / "claude-home"
    home.mkdir()
    tap, wire = tmp_path / "tap.py", tmp_path / "wire.log"
    tap.write_text(WIRE_TAP)
    env = {**server_env(), "HOME": str(home), "PATH": os.environ.get("PATH", "")}
    env.pop("ANTHROPIC_API_KEY", None)
    added = subprocess.run([CLAUDE, "mcp", "add", "-s", "user", "wb", "--", sys.executable, str(tap), str(wire),
                            *WB_ARGV, "mcp"], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    listed = subprocess.run([CLAUDE, "mcp", "list"], cwd=repo, env=env, capture_output=True, text=True,
                            timeout=120)
    assert "wb:" in listed.stdout and "Connected" in listed.stdout, listed.stdout + listed.stderr
    sent = [json.loads(line[2:]) for line in wire.read_text().splitlines() if line.startswith("C ")]
    answered = [json.loads(line[2:]) for line in wire.read_text().splitlines() if line.startswith("S ")]
    methods = [m.get("method") for m in sent]
    assert methods[0] == "server/discover", methods
    assert "initialize" not in methods, methods  # no fallback to the handshake
    assert not any(a.get("error", {}).get("code") == -32022 for a in answered), answered
    assert methods.count("server/discover") == 1, methods
    tools = [a for a in answered if "tools" in a.get("result", {})]
    assert tools and {t["name"] for t in tools[0]["result"]["tools"]} >= {"status", "task_add"}
