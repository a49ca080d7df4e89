"""Helpers of the security tests: a repo with a workbench whose config.yaml a test writes, the real `wb`
command line (in the test's process through `main(argv)`; a real process under a `prefix`, e.g. another
user), and probes that notice when something ran that should not have."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from tests import stored
from tests.conftest import WB_ARGV, call_wb, commit_sqlite_config, hash_workbench, run_git, spawn_wb

PY = sys.executable


def wb(repo: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60,
       prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """`wb` in `repo`, `env` added to the environment: a real process under `prefix`, else in this one."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    if prefix:
        return spawn_wb(repo, *args, env=full_env, timeout=timeout, prefix=prefix)
    return call_wb(repo, *args, env=full_env, timeout=timeout)


def wb_ok(repo: Path, *args: str, code: int = 0, **kw: Any) -> subprocess.CompletedProcess[str]:
    proc = wb(repo, *args, **kw)
    assert proc.returncode == code, f"wb {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def one_line(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """The process ended with `code` and exactly one `wb: ` line on stderr, no traceback; returns the line."""
    assert proc.returncode == code, f"exit {proc.returncode} (wanted {code})\n{proc.stdout}\n{proc.stderr}"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wb: "), proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return lines[0]


def init_workbench(repo: Path, config: str | None = None) -> Path:
    """`wb init` in `repo`, then (optionally) replace config.yaml and commit it so the workbench is clean."""
    wb_ok(repo, "init")
    if config is not None:
        stored.write_config(repo / ".workbench" / "config.yaml", config)
        run_git(repo, "add", ".workbench")
        run_git(repo, "commit", "-q", "-m", "configure wb")
    elif not stored.FILES:
        commit_sqlite_config(repo)
    return repo


def config_yaml(tools: dict[str, Any] | None = None, hooks: dict[str, Any] | None = None,
                redact: list[str] | None = None, extra: str = "") -> str:
    """A config.yaml (JSON values are YAML) with a zero human-edit guard, so tests may edit files by hand."""
    return (f"schema_version: 1\nhuman_guard_seconds: 0\ntools: {json.dumps(tools or {})}\n"
            f"hooks: {json.dumps(hooks or {})}\nredact: {json.dumps(redact or [])}\n{extra}")


def marker() -> Path:
    """A path in /tmp that nothing may create: a test fails if it exists afterwards."""
    path = Path("/tmp") / f"owned_{uuid.uuid4().hex[:12]}"
    assert not path.exists()
    return path


def plan(repo: Path, steps: list[dict[str, Any]], name: str = "plan.json") -> str:
    (repo / name).write_text(json.dumps({"steps": steps}), encoding="utf-8")
    return name


def events(repo: Path) -> list[dict[str, Any]]:
    return stored.events(repo)


def argv_recorder(out: Path) -> list[str]:
    """An argv prefix for a tool that writes the arguments it received (as JSON) to `out`."""
    return [PY, "-c", f"import json, sys; open({str(out)!r}, 'w').write(json.dumps(sys.argv[1:]))"]


__all__ = ["PY", "WB_ARGV", "argv_recorder", "config_yaml", "events", "hash_workbench", "init_workbench",
           "marker", "one_line", "plan", "run_git", "wb", "wb_ok"]


def redact_configured(repo: Path, names: str, message: str) -> Path:
    """config.yaml's `redact: []` replaced by `redact: NAMES` (YAML), committed and tagged `configured`: what
    `fresh` goes back to before each hypothesis example."""
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("redact: []", f"redact: {names}"))
    run_git(repo, "add", ".workbench/config.yaml")
    run_git(repo, "commit", "-qm", message)
    run_git(repo, "tag", "configured")
    if not stored.FILES:  # the database (in the git directory) as configured, for `fresh` to put back
        shutil.copytree(repo / ".git" / "wb", repo / ".git" / "wb-configured")
    return repo


def fresh(repo: Path) -> Path:
    """The workbench as configured, before each example (what one wrote must not count against the next)."""
    run_git(repo, "reset", "-q", "--hard", "configured")
    run_git(repo, "clean", "-qfdx", ".workbench")
    # wb's records in the git directory go too: the batch the last example committed, which the reset took
    # back, is written again by the next write (as wb does for a commit the user's git took back), and it
    # holds the last example's text, where the secrets of this one may stand in plain letters
    shutil.rmtree(repo / ".git" / "wb", ignore_errors=True)
    if not stored.FILES:
        shutil.copytree(repo / ".git" / "wb-configured", repo / ".git" / "wb")
    return repo
