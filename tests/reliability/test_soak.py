"""The concurrency soak (tools/soak.py), CI-sized: 8 client streams of real `wb` processes for ~10 s — task
add/start/done, notes, one harness session after another, some streams with a short lock timeout — then no
lost update, no duplicate, no hang, every lock timeout an exit 6. The long soak is in docs/reliability.md."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = re.compile(r"^soak: procs=(\d+) seconds=(\S+) ops=(\d+) acknowledged=(\d+) lost=(\d+) duplicates=(\d+) "
                     r"lock_timeouts=(\d+) hangs=(\d+)$", re.M)


def run_soak(tmp_path: Path, seconds: int, timeout: float) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    report = tmp_path / "soak.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "soak.py"), "--seconds", str(seconds), "--procs", "8",
                           "--workdir", str(tmp_path), "--report", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    match = SUMMARY.search(proc.stdout)
    assert match, f"no summary line (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    names = ("procs", "seconds", "ops", "acknowledged", "lost", "duplicates", "lock_timeouts", "hangs")
    figures = dict(zip(names, match.groups(), strict=True))
    assert json.loads(report.read_text())["lost"] == int(figures["lost"])
    return proc, figures


@pytest.mark.slow
def test_soak_ci_sized(tmp_path: Path) -> None:
    proc, figures = run_soak(tmp_path, 10, timeout=300)
    assert figures["lost"] == "0", proc.stdout
    assert figures["duplicates"] == "0", proc.stdout
    assert figures["hangs"] == "0", proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert figures["procs"] == "8"
    assert int(figures["acknowledged"]) > 8, "the streams got almost nothing done"


@pytest.mark.slow
def test_soak_a_minute(tmp_path: Path) -> None:
    proc, figures = run_soak(tmp_path, 60, timeout=900)
    assert (figures["lost"], figures["duplicates"], figures["hangs"]) == ("0", "0", "0"), proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
