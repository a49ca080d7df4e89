"""`core.autocrlf=true` (Git for Windows' default): git must never convert the workbench's files.

Before: such a clone failed with "hash chain broken", took its own files for hand edits, and a `wb init` there
committed CRLF bytes so that every LF clone broke as well.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def test_an_autocrlf_clone_reads_and_writes_the_workbench(repo: Path, tmp_path: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "task", "add", "one").returncode == 0
    assert run_wb(repo, "note", "first").returncode == 0
    clone = tmp_path / "crlf"
    run_git(tmp_path, "-c", "core.autocrlf=true", "clone", "-q", str(repo), str(clone))
    run_git(clone, "config", "core.autocrlf", "true")
    for name in ("events.jsonl", "state.md", "board.json"):
        assert b"\r\n" not in (clone / ".workbench" / name).read_bytes(), name
    note = run_wb(clone, "note", "from windows")
    assert note.returncode == 0, note.stderr
    assert "by hand" not in note.stderr
    assert_sound(clone, acknowledged=["first", "from windows"])
    # what it committed reads back in an LF clone
    lf = tmp_path / "lf"
    run_git(tmp_path, "clone", "-q", str(clone), str(lf))
    assert_sound(lf, acknowledged=["first", "from windows"])
    blob = run_git(clone, "cat-file", "-p", "HEAD:.workbench/events.jsonl")
    assert "\r" not in blob
