"""A bare remote on disk and clones of it, each with state on its own ref (`wb init --ref wb-state`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import WB_ARGV, run_git, run_wb

REF = "wb-state"


def make_remote(tmp: Path, config: str = "") -> Path:
    """A bare remote holding one commit of the user's on main, and its first clone with a workbench on wb-state
    pushed there (`config`: lines added to its config.yaml first, recorded by a note)."""
    remote = tmp / "remote.git"
    run_git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    seed = tmp / "seed"
    run_git(tmp, "clone", "-q", str(remote), str(seed))
    (seed / "app.py").write_text("print('hello')\n")
    run_git(seed, "add", "app.py")
    run_git(seed, "commit", "-q", "-m", "initial commit")
    run_git(seed, "push", "-q", "origin", "HEAD:main")
    assert run_wb(seed, "init", "--ref", REF).returncode == 0
    if config:
        with open(seed / ".workbench" / "config.yaml", "a", encoding="utf-8") as fh:
            fh.write(config)
        assert run_wb(seed, "note", "config set").returncode == 0
    assert run_wb(seed, "sync").returncode == 0
    return remote


def clone(remote: Path, path: Path) -> Path:
    """A fresh clone that joins the remote's workbench."""
    run_git(remote.parent, "clone", "-q", str(remote), str(path))
    joined = run_wb(path, "init", "--ref", REF)
    assert joined.returncode == 0, joined.stderr
    return path


def board(path: Path) -> dict:
    return json.loads((path / ".workbench" / "board.json").read_bytes())


def event_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (path / ".workbench" / "events.jsonl").read_bytes().splitlines()]


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out.update(extra)
    return out


def spawn(path: Path, *args: str, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*WB_ARGV, *args], cwd=path, env=env(**extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def sync_all(paths: list[Path], rounds: int = 2) -> None:
    for _ in range(rounds):
        for p in paths:
            out = run_wb(p, "sync")
            assert out.returncode == 0, out.stderr


def assert_converged(paths: list[Path]) -> None:
    first = paths[0] / ".workbench"
    names = ("events.jsonl", "board.json", "state.md")
    for p in paths:
        for name in names:
            assert (p / ".workbench" / name).read_bytes() == (first / name).read_bytes(), (p, name)
        assert run_wb(p, "replay", "--verify").returncode == 0
        out = run_wb(p, "validate")
        assert out.returncode == 0, out.stdout + out.stderr
    tips = {run_git(p, "rev-parse", REF).strip() for p in paths}
    assert len(tips) == 1
