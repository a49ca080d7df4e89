"""Hook payloads as the clients document them (one JSON file per event under fixtures/hooks/CLIENT/), and the
real `wb hook` process that reads them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.conftest import run_git, spawn_wb

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"


def fixture(client: str, event: str, cwd: Path) -> dict[str, Any]:
    """The documented payload of `event`, for an agent working in `cwd`."""
    text = (FIXTURES / client / f"{event}.json").read_text()
    return json.loads(text.replace("{cwd}", str(cwd)))


def fixture_events(client: str) -> list[str]:
    return sorted(p.stem for p in (FIXTURES / client).glob("*.json"))


def hook(repo: Path, payload: Any, client: str = "claude-code", *, cwd: Path | None = None,
         env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """One hook, as the client runs it: a real process, the payload on a real stdin pipe."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return spawn_wb(cwd or repo, "hook", client, input=data, env=env, timeout=60)


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc


def events(repo: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]


def git_dir(repo: Path) -> Path:
    return Path(run_git(repo, "rev-parse", "--path-format=absolute", "--git-dir").strip())


def spool_lines(repo: Path) -> list[dict[str, Any]]:
    path = git_dir(repo) / "wb" / "spool.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def status_porcelain(repo: Path) -> str:
    return run_git(repo, "status", "--porcelain", "--untracked-files=all")
