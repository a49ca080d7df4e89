"""What a user checks after their own git commands ran beside wb: the four points of the guarantee.

1. nothing wb acknowledged is lost (each acknowledged note is in the committed event log of its branch);
2. the workbench loads and validates, and replay reproduces the snapshots;
3. wb committed none of the user's files and left nothing under .workbench/ for `git status` to show;
4. (tool calls: checked by the scenarios that run tools).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_git, run_wb


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
