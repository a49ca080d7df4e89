"""Issue 30.6 (a first-round case still open): a 100,000-digit integer in a committed state.md gave `wb diff` an
internal error (Python refuses to read an integer of over 4,300 digits), and `wb status` a line quoting
Python's advice to call sys.set_int_max_str_digits(). Now every reader says it in one line, in wb's words: the
diff compares that side as absent with a warning, and status, validate and doctor name the file and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import about_files, call_wb, run_git

pytestmark = about_files  # a hand-written state.md


def test_a_number_of_100000_digits(bench: Any, repo: Path) -> None:
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("tokens_consumed: 0", "tokens_consumed: " + "9" * 100_000))
    run_git(repo, "commit", "-qam", "a clone's state.md")
    diff = call_wb(repo, "diff", "HEAD~1", "HEAD")
    assert diff.returncode == 0, diff.stderr[-300:]
    assert "100,000 digits" in diff.stderr and "internal error" not in diff.stderr
    for args in (["status"], ["validate"], ["doctor"]):
        proc = call_wb(repo, *args)
        out = proc.stdout + proc.stderr
        assert proc.returncode in (1, 5), (args, out[-300:])
        assert "internal error" not in out and "set_int_max_str_digits" not in out, (args, out[-300:])
        assert "4,000 digits" in out and "restore it with git" in out, (args, out[-300:])
