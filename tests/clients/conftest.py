"""The `clients` tier: the real agent clients, installed by tools/clients.sh, driven by a scripted model.

Not in the default run (`-m "not slow and not clients and not race"`); `.ci/run` runs `tools/clients.sh` and then
`pytest -m clients tests/clients`. Without the clients every test here skips, saying why (what
tools/clients.sh printed: no network, no npm). The prefix is read when this module is imported, before the
suite's isolated HOME is in place: $WB_CLIENTS_PREFIX, else ${XDG_CACHE_HOME:-$HOME/.cache}/wb-clients.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WB_ARGV, make_repo

PREFIX = Path(os.environ.get("WB_CLIENTS_PREFIX")
              or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wb-clients")
BIN = PREFIX / "bin"


def clients_status() -> str | None:
    """None when tools/clients.sh installed the clients, else why not."""
    status = PREFIX / "status"
    if not status.is_file():
        return f"the clients are not installed in {PREFIX}: run tools/clients.sh"
    first = status.read_text().splitlines()[:1]
    if first != ["ready"]:
        return f"tools/clients.sh: {first[0] if first else 'no status'}"
    return None


@pytest.fixture
def clients_bin() -> Path:
    reason = clients_status()
    if reason is not None:
        pytest.skip(reason)
    return BIN


def client_env(base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The test's (isolated) environment with the clients' Node first on PATH and wb's Python after it."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join([str(BIN), str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra)
    return env


def wb(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*WB_ARGV, *args], cwd=repo, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


def events(repo: Path) -> list[dict[str, Any]]:
    return list(json.loads(wb(repo, "log", "--json", "--all").stdout))


@pytest.fixture
def guarded_repo(tmp_path: Path) -> Path:
    """A repository with a workbench and one task in progress whose scope forbids `secrets/**`."""
    repo = make_repo(tmp_path / "repo")
    wb(repo, "init")
    wb(repo, "task", "add", "Guarded", "--forbid", "secrets/**", "--accept", "true")
    wb(repo, "task", "start", "T-001")
    return repo
