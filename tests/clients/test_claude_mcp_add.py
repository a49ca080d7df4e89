"""Issue 31 item 10, with the real Claude Code CLI: `claude mcp add` exactly as README.md and
docs/integrations.md show it, typed where wb's virtual environment is active, then Claude Code's own health
check (`claude mcp list`, which starts every server) from a shell without the venv on PATH. The line the docs
used to give (`-- wb mcp`) fails there with ENOENT: the control that shows the check can fail."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.conftest import BIN
from tests.conftest import make_repo

pytestmark = pytest.mark.clients

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
SYSTEM_PATH = "/usr/bin:/bin"


def _documented() -> list[str]:
    lines = []
    for path in (ROOT / "README.md", ROOT / "docs" / "integrations.md"):
        lines += [ln.split("#")[0].strip() for ln in path.read_text().splitlines()
                  if re.match(r"^\s*claude mcp add\b", ln)]
    return lines


def _claude(repo: Path, line: str, path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path}
    return subprocess.run(["sh", "-c", line], cwd=repo, capture_output=True, text=True, timeout=180, env=env,
                          stdin=subprocess.DEVNULL)


def test_claude_mcp_add_as_documented_connects_with_wb_off_path(clients_bin: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    lines = _documented()
    assert len(lines) >= 2, lines  # for you, and --scope project
    typed = f"{VENV_BIN}:{BIN}:{SYSTEM_PATH}"  # where the user types it: wb's venv active
    for n, line in enumerate(lines):
        renamed = re.sub(r" wb -- ", f" wb{n} -- ", line, count=1) if n else line  # each under its own name
        r = _claude(repo, renamed, typed)
        assert r.returncode == 0, (line, r.stdout, r.stderr)
    _claude(repo, "claude mcp add bare -- wb mcp", typed)  # the line the docs used to give
    shared = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    for name, server in shared.items():
        assert os.path.isabs(server["command"]), (name, server)  # never a bare "wb" in the shared file
    # a person approves the project's .mcp.json servers once, when `claude` first starts there: recorded in
    # ~/.claude.json, as that dialog records it
    home_config = Path(os.environ["HOME"]) / ".claude.json"
    config = json.loads(home_config.read_text())
    project = config["projects"][str(repo.resolve())]
    project.update(hasTrustDialogAccepted=True, enabledMcpjsonServers=sorted(shared))
    home_config.write_text(json.dumps(config))
    listed = _claude(repo, "claude mcp list", f"{BIN}:{SYSTEM_PATH}")  # the client's own environment: no venv
    out = listed.stdout + listed.stderr
    assert re.search(r"^bare: wb mcp - .*ENOENT", out, re.M), out  # the control fails as the issue saw
    for n in range(len(lines)):
        name = "wb" if n == 0 else f"wb{n}"
        assert re.search(rf"^{name}: {re.escape(str(VENV_BIN / 'wb'))} mcp - .*Connected", out, re.M), out
