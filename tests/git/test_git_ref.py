"""`wb init --ref BRANCH`: state is recorded on its own branch; the user's branches never track .workbench/."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_git, run_wb


def test_state_lives_on_its_own_branch_and_git_status_stays_clean(repo: Path) -> None:
    head = run_git(repo, "rev-parse", "HEAD")
    (repo / "app.py").write_text("print('edited, not staged')\n")
    before = run_git(repo, "status", "--porcelain")
    assert run_wb(repo, "init", "--ref", "wb-state").returncode == 0
    for args in (("task", "add", "a task"), ("note", "a note"), ("task", "start", "T-001")):
        assert run_wb(repo, *args).returncode == 0
    assert run_git(repo, "rev-parse", "HEAD") == head  # the user's branch never moved
    assert run_git(repo, "status", "--porcelain") == before
    assert run_git(repo, "rev-list", "--count", "wb-state").strip() == "4"
    names = set(run_git(repo, "ls-tree", "-r", "--name-only", "wb-state").split())
    assert names and all(n.startswith(".workbench/") for n in names)
    assert "app.py" not in names
    assert run_wb(repo, "validate").returncode == 0
    assert run_wb(repo, "replay", "--verify").returncode == 0


def test_a_bad_branch_name_is_a_usage_error(repo: Path) -> None:
    bad = run_wb(repo, "init", "--ref", "../evil")
    assert bad.returncode == 2 and "not a branch name" in bad.stderr
    assert not (repo / ".workbench").exists()
