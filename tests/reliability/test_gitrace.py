"""The user's git against wb's writers (tools/gitrace.py), CI-sized: two `wb note` streams for ~10 s beside a
user running commit, stash/pop, checkout, amend, a conflicted merge they abort, and gc — then nothing wb
acknowledged is lost and the workbench validates and replays. The long run is in docs/reliability.md."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = re.compile(r"^gitrace: seconds=\S+ writers=(\d+) user_ops=(\d+) acknowledged=(\d+) lost=(\d+) "
                     r"user_failures_wb=(\d+) user_failures=(\d+)$", re.M)


def test_gitrace_ci_sized(tmp_path: Path) -> None:
    report = tmp_path / "gitrace.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gitrace.py"), "--seconds", "10", "--writers", "2",
                           "--workdir", str(tmp_path / "run"), "--report", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=400)
    match = SUMMARY.search(proc.stdout)
    assert match, f"no summary line (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    writers, user_ops, acknowledged, lost, _wb_failures, _failures = map(int, match.groups())
    figures = json.loads(report.read_text())
    assert figures["lost"] == lost == 0, proc.stdout
    assert figures["problems"] == 0, proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert writers == 2 and user_ops > 10 and acknowledged > 2, proc.stdout  # the race really ran


@pytest.mark.slow  # the CI-sized race above runs by default; this variant in the slow step
def test_gitrace_with_state_on_its_own_ref(tmp_path: Path) -> None:
    """`wb init --ref wb-state`: the user's branches do not track `.workbench/` and wb never touches their
    branch, index or HEAD, so none of their git commands can fail because of wb (docs/git.md)."""
    report = tmp_path / "gitrace.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gitrace.py"), "--seconds", "10", "--writers", "2",
                           "--ref", "wb-state", "--workdir", str(tmp_path / "run"), "--report", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=400)
    match = SUMMARY.search(proc.stdout)
    assert match, f"no summary line (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    writers, user_ops, acknowledged, lost, wb_failures, failures = map(int, match.groups())
    figures = json.loads(report.read_text())
    assert figures["lost"] == lost == 0, proc.stdout
    assert figures["problems"] == 0, proc.stdout
    assert wb_failures == 0 and failures == 0, proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert writers == 2 and user_ops > 10 and acknowledged > 2, proc.stdout
