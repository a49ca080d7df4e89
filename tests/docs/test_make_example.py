"""tools/make_example.py, which makes .workbench.example/, runs to the end with today's wb: the workbench it makes
validates and replays, a person approved its confirm_once step at a terminal, and it has the files the committed
example has (so a change to what wb writes shows up here, not the next time someone regenerates the example)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_git, run_wb

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_make_example_makes_a_valid_workbench(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "example"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "make_example.py"), str(target)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == f"wrote {target}"
    made = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(ROOT / ".workbench.example").as_posix()
                       for p in (ROOT / ".workbench.example").rglob("*") if p.is_file())
    assert made == committed

    shutil.copytree(target, repo / ".workbench")
    run_git(repo, "add", ".workbench")
    run_git(repo, "commit", "-q", "-m", "the example workbench")
    assert run_wb(repo, "validate").returncode == 0
    verify = run_wb(repo, "replay", "--verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    log = [json.loads(line) for line in (target / "events.jsonl").read_text().splitlines()]
    granted = [e for e in log if e["type"] == "approval.granted"]
    assert [(e["actor"], e["via"], e.get("proof")) for e in granted] == [("human", "terminal", "tty-code")]
    assert log[-1]["type"] == "note.add"
    board = json.loads((target / "board.json").read_text())
    assert [t["status"] for t in board["tasks"]] == ["done", "done", "blocked"]
