"""`wb init` on a detached HEAD (or mid-merge) said "Initialized a workbench" and left one that did not load:
its writes waited for a branch, so `.workbench/` held only `.gitattributes` and `.lock`, and `wb status`,
`wb validate` and every write after failed — also after switching back to the branch. (This is the state `git
submodule update` leaves a submodule in.) Now it refuses in one line naming what to do, and writes nothing."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import about_git, call_wb, run_git

pytestmark = about_git  # the files backend commits to the branch; SQLite's init needs none


def test_init_on_a_detached_head_refuses_and_writes_nothing(repo: Path) -> None:
    run_git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    run_git(repo, "checkout", "-q", "HEAD~1")
    proc = call_wb(repo, "init")
    assert proc.returncode == 5, (proc.stdout, proc.stderr)
    line = proc.stderr.strip()
    assert "HEAD is detached" in line and "git switch" in line and "--ref" in line and "\n" not in line, line
    assert not (repo / ".workbench").exists() and run_git(repo, "status", "--porcelain") == ""
    run_git(repo, "checkout", "-q", "-")
    assert call_wb(repo, "init").returncode == 0
    assert call_wb(repo, "status").returncode == 0 and call_wb(repo, "validate").returncode == 0


def test_init_with_state_on_its_own_branch_works_detached(repo: Path) -> None:
    run_git(repo, "checkout", "-q", "--detach")
    proc = call_wb(repo, "init", "--ref", "wb-state")
    assert proc.returncode == 0, proc.stderr
    assert call_wb(repo, "status").returncode == 0
