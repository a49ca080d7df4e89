"""MCP Inspector's CLI (npm @modelcontextprotocol/inspector) against `wb mcp`: `--strict` lints every tool schema
for portability across clients, and finds nothing to warn of (it used to warn that `resume`'s `result` was `{}`,
a schema that constrains nothing). The same run against a server that still has that `{}` shows the warning the
check looks for is one Inspector prints."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.conftest import client_env, wb
from tests.conftest import WB_ARGV

pytestmark = pytest.mark.clients

WB_TOOLS = {"status", "task_list", "task_add", "task_update", "note", "set_state", "log", "run", "resume", "abort",
            "claim", "sync"}

# A server with one tool whose `result` is `{}`: what `wb mcp` listed before, for the check to see fail.
LOOSE_SERVER = r'''
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "loose", "version": "0"}}
    elif m["method"] == "tools/list":
        r = {"tools": [{"name": "resume", "description": "x", "inputSchema": {
            "type": "object", "properties": {"result": {}}, "additionalProperties": False}}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": m["method"]}}),
              flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
'''


def inspect(clients_bin: Path, cwd: Path, *server: str, strict: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(clients_bin / "mcp-inspector"), "--cli", *(["--strict"] if strict else []), "--method", "tools/list",
         *server], cwd=cwd, env=client_env(), capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


def test_inspector_strict_finds_nothing_to_warn_of_in_wb_s_tools(clients_bin: Path, tmp_path: Path) -> None:
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "repo")
    wb(repo, "init")
    strict = inspect(clients_bin, repo, *WB_ARGV, "mcp")
    assert strict.returncode == 0, (strict.stdout[-2000:], strict.stderr[-2000:])
    assert strict.stderr == "", strict.stderr  # no warning, no error, not even the count line
    assert {t["name"] for t in json.loads(strict.stdout)["tools"]} == WB_TOOLS
    plain = inspect(clients_bin, repo, *WB_ARGV, "mcp", strict=False)
    assert plain.returncode == 0 and "Schema portability" not in plain.stderr, plain.stderr

    # The control: a `{}` schema is what --strict warns of, on stderr, with its path.
    loose = tmp_path / "loose_server.py"
    loose.write_text(LOOSE_SERVER)
    warned = inspect(clients_bin, tmp_path, sys.executable, str(loose))
    assert warned.returncode == 0, warned.stderr
    assert 'Warning: tool "resume"' in warned.stderr and "inputSchema.properties.result" in warned.stderr
    assert "0 errors, 1 warning" in warned.stderr
