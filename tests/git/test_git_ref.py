"""`wb init --ref BRANCH`: state is recorded on its own branch; the user's branches never track .workbench/."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import about_git, run_git, run_wb

pytestmark = about_git  # the state kept on a git branch of its own


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


def _project_files(repo: Path, rev: str = "HEAD") -> set[str]:
    return {n for n in run_git(repo, "ls-tree", "-r", "--name-only", rev).split() if not n.startswith(".workbench/")}


def test_a_cloned_git_ref_naming_the_checked_out_branch_is_refused(repo: Path) -> None:
    """config.yaml arrives through git with `git.ref: main`: wb used to commit a tree holding only .workbench/
    onto the user's main (every project file gone from HEAD). Now every command refuses, in one line."""
    assert run_wb(repo, "init").returncode == 0
    before = _project_files(repo)
    assert before == {"README.md", "app.py"}
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("  ref: null", "  ref: main", 1))
    run_git(repo, "commit", "-q", "-am", "merged from a clone")
    head = run_git(repo, "rev-parse", "HEAD")
    for args in (("note", "hello"), ("task", "add", "x"), ("status",)):
        r = run_wb(repo, *args)
        assert r.returncode == 5, r.stdout + r.stderr
        [line] = r.stderr.splitlines()
        assert line.startswith("wb: git.ref names main, which is checked out in ") and "wb-state" in line
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert _project_files(repo) == before
    assert run_git(repo, "status", "--porcelain") == ""


def test_git_ref_naming_a_branch_checked_out_in_another_worktree_is_refused(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    run_git(repo, "worktree", "add", "-q", str(other), "-b", "feature")
    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("  ref: null", "  ref: feature", 1))
    tip = run_git(repo, "rev-parse", "feature")
    r = run_wb(repo, "note", "hello")
    assert r.returncode == 5 and f"git.ref names feature, which is checked out in {other}" in r.stderr
    assert run_git(repo, "rev-parse", "feature") == tip


def test_init_ref_naming_a_checked_out_branch_is_refused_before_anything_is_written(repo: Path,
                                                                                     tmp_path: Path) -> None:
    head = run_git(repo, "rev-parse", "HEAD")
    r = run_wb(repo, "init", "--ref", "main")
    assert r.returncode == 5 and len(r.stderr.splitlines()) == 1 and "git.ref names main" in r.stderr
    assert not (repo / ".workbench").exists()
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert run_wb(repo, "init").returncode == 0  # state on the user's branch: moving it to main is refused too
    r = run_wb(repo, "init", "--ref", "refs/heads/main")
    assert r.returncode == 5 and "git.ref names main, which is checked out" in r.stderr
    assert _project_files(repo) == {"README.md", "app.py"}
