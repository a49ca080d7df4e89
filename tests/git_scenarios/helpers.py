"""What a user checks after their own git commands ran beside wb: the four points of the guarantee.

1. nothing wb acknowledged is lost (each acknowledged note is in the committed event log of its branch);
2. the workbench loads and validates, and replay reproduces the snapshots;
3. wb committed none of the user's files and left nothing under .workbench/ for `git status` to show;
4. (tool calls: checked by the scenarios that run tools).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.conftest import WB_ARGV, run_git, run_wb


def committed_events(repo: Path, ref: str = "HEAD") -> list[dict]:
    raw = run_git(repo, "show", f"{ref}:.workbench/events.jsonl")
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def committed_notes(repo: Path, ref: str = "HEAD") -> list[str]:
    return [e["payload"]["text"] for e in committed_events(repo, ref) if e["type"] == "note.add"]


def assert_sound(repo: Path, *, acknowledged: list[str] = (), ref: str = "HEAD") -> None:  # type: ignore[assignment]
    validate = run_wb(repo, "validate")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    replay = run_wb(repo, "replay", "--verify")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    fsck = run_git(repo, "fsck", "--no-dangling", check=False)
    assert "missing" not in fsck, fsck
    status = run_git(repo, "status", "--porcelain", "--", ".workbench")
    assert status == "", f"git status shows wb's files:\n{status}"
    notes = committed_notes(repo, ref)
    lost = [n for n in acknowledged if n not in notes]
    assert not lost, f"acknowledged but not committed: {lost}"
    seqs = [e["seq"] for e in committed_events(repo, ref)]
    assert seqs == list(range(1, len(seqs) + 1)), f"the committed log has gaps or repeats: {seqs}"


def paused(repo: Path, tmp_path: Path, point: str, *args: str) -> tuple[subprocess.Popen[str], Path]:
    """Start `wb ARGS` held at fault point `point` (workbench/faults.py: WB_PAUSE); returns once it is there."""
    marker = tmp_path / f"pause-{point}"
    env = dict(os.environ, WB_PAUSE=point, WB_PAUSE_FILE=str(marker))
    proc = subprocess.Popen([*WB_ARGV, *args], cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while not Path(str(marker) + ".here").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "wb never reached the fault point"
        time.sleep(0.02)
    return proc, marker


def go(proc: subprocess.Popen[str], marker: Path) -> subprocess.CompletedProcess[str]:
    """Let a `paused` wb go on, and wait for it."""
    Path(str(marker) + ".go").write_text("")
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
