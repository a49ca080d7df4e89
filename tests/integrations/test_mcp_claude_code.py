"""Claude Code's own MCP handshake against `wb mcp`: `claude mcp list` connects to each configured server (no
model is needed) and says whether it answered. Claude Code 2.1.332 sends `server/discover` first and, when the
answer is slow (the SDK loading), falls back to `initialize`, gets -32022 from a connection the discover
already opened, and probes again; with the fast path the discover is answered, and nothing else is sent. And a
whole `claude -p` session against a scripted model (a local stand-in for the Messages API) calls a wb tool.

Runs when Claude Code is installed (`claude` on PATH, or WB_CLAUDE_CODE naming its binary; e.g.
`npm install @anthropic-ai/claude-code` and WB_CLAUDE_CODE=node_modules/.bin/claude); skipped otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WB_ARGV, run_git
from tests.integrations.hookfixtures import FILES, state_text
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


def configure(repo: Path, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A private HOME whose Claude Code runs `wb mcp` behind a tap that logs the wire: (env, the wire's log)."""
    assert CLAUDE is not None
    home = tmp_path / "claude-home"
    home.mkdir()
    tap, wire = tmp_path / "tap.py", tmp_path / "wire.log"
    tap.write_text(WIRE_TAP)
    env = {**server_env(), "HOME": str(home), "PATH": os.environ.get("PATH", ""),
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    added = subprocess.run([CLAUDE, "mcp", "add", "-s", "user", "wb", "--", sys.executable, str(tap), str(wire),
                            *WB_ARGV, "mcp"], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    return env, wire


def handshake(wire: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(what Claude Code sent, what wb answered), checked: a discover first, answered, and no fallback."""
    lines = wire.read_text().splitlines()
    sent = [json.loads(line[2:]) for line in lines if line.startswith("C ")]
    answered = [json.loads(line[2:]) for line in lines if line.startswith("S ")]
    methods = [m.get("method") for m in sent]
    assert methods[0] == "server/discover", methods
    assert "initialize" not in methods, methods  # no fallback to the handshake
    assert methods.count("server/discover") == 1, methods
    assert not any(a.get("error", {}).get("code") == -32022 for a in answered), answered
    tools = [a for a in answered if "tools" in a.get("result", {})]
    assert tools and {t["name"] for t in tools[0]["result"]["tools"]} >= {"status", "note"}
    return sent, answered


def test_claude_codes_handshake_is_answered_without_a_fallback(bench, repo: Path, tmp_path: Path) -> None:
    assert CLAUDE is not None
    env, wire = configure(repo, tmp_path)
    listed = subprocess.run([CLAUDE, "mcp", "list"], cwd=repo, env=env, capture_output=True, text=True,
                            timeout=120)
    assert "wb:" in listed.stdout and "Connected" in listed.stdout, listed.stdout + listed.stderr
    handshake(wire)


class ScriptedModel(BaseHTTPRequestHandler):
    """The Messages API, scripted: the first turn calls wb's `note` tool, the next one ends the session."""

    requests: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if "count_tokens" in self.path:
            return self.answer({"input_tokens": 10})
        ScriptedModel.requests.append(body)
        results = [c for m in body.get("messages", []) if isinstance(m.get("content"), list)
                   for c in m["content"] if c.get("type") == "tool_result"]
        call = {"type": "tool_use", "id": "toolu_01", "name": "mcp__wb__note", "input": {"text": "From Claude Code."}}
        blocks = [{"type": "text", "text": "Done."}] if results else [call]
        message = {"id": "msg_01", "type": "message", "role": "assistant", "model": body.get("model", "m"),
                   "content": blocks, "stop_reason": "end_turn" if results else "tool_use", "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 5}}
        if not body.get("stream"):
            return self.answer(message)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        events = [("message_start", {"message": {**message, "content": [], "stop_reason": None}})]
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                events += [("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}}),
                           ("content_block_delta", {"index": i, "delta": {"type": "text_delta",
                                                                          "text": block["text"]}})]
            else:
                events += [("content_block_start", {"index": i, "content_block": {**block, "input": {}}}),
                           ("content_block_delta", {"index": i, "delta": {
                               "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})]
            events.append(("content_block_stop", {"index": i}))
        events += [("message_delta", {"delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                      "usage": {"output_tokens": 5}}), ("message_stop", {})]
        for kind, data in events:
            self.wfile.write(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode())
        self.wfile.flush()

    def answer(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def test_a_claude_code_session_calls_a_wb_tool(bench, repo: Path, tmp_path: Path) -> None:
    """`claude -p` against a scripted model: wb's tools reach the model's first request, the model's call of
    `note` is committed, and its result reaches the next request."""
    assert CLAUDE is not None
    env, wire = configure(repo, tmp_path)
    ScriptedModel.requests = []
    api = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    try:
        env = {**env, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{api.server_address[1]}",
               "ANTHROPIC_API_KEY": "sk-scripted-model", "ENABLE_TOOL_SEARCH": "false"}  # wb's tools listed
        run = subprocess.run([CLAUDE, "-p", "Record a note.", "--allowedTools", "mcp__wb__note", "--output-format",
                              "json"], cwd=repo, env=env, capture_output=True, text=True, timeout=180,
                             stdin=subprocess.DEVNULL)
    finally:
        api.shutdown()
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert json.loads(run.stdout)["result"] == "Done."
    first = ScriptedModel.requests[0]
    assert {"mcp__wb__status", "mcp__wb__note"} <= {t.get("name") for t in first.get("tools", [])}
    assert "From Claude Code." in state_text(repo)
    if FILES:  # SQLite commits nothing: no commit for the answer to name
        head = run_git(repo, "rev-parse", "HEAD").strip()
        assert head in json.dumps(ScriptedModel.requests[-1]["messages"])  # the tool's answer reached the model
    sent, _answered = handshake(wire)
    assert [m.get("params", {}).get("name") for m in sent if m.get("method") == "tools/call"] == ["note"]
