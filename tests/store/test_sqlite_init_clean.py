"""Issue 31 item 7: `wb init --backend sqlite` in a git repository leaves `git status` as clean as the files
backend does, touching nothing of the user's; and `wb diff HEAD~1` there says first what to type instead."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_git, spawn_wb


def test_sqlite_init_leaves_git_status_clean_and_the_users_work_alone(repo: Path) -> None:
    (repo / "app.py").write_text("print('changed, unstaged')\n")
    (repo / "staged.py").write_text("x = 1\n")
    run_git(repo, "add", "staged.py")
    (repo / "notes.txt").write_text("untracked\n")
    before = run_git(repo, "status", "--porcelain")
    proc = spawn_wb(repo, "init", "--backend", "sqlite")
    assert proc.returncode == 0, proc.stderr
    assert run_git(repo, "status", "--porcelain") == before  # no `?? .workbench/`
    assert run_git(repo, "diff", "--cached", "--name-only") == "staged.py\n"
    committed = run_git(repo, "show", "--name-only", "--format=%s", "HEAD").split()
    assert committed[:3] == ["wb:", "init", "(SQLite)"]
    assert sorted(committed[3:]) == [".workbench/.gitignore", ".workbench/config.yaml"]
    again = spawn_wb(repo, "init", "--backend", "sqlite")  # idempotent: nothing more committed
    assert again.returncode == 0, again.stderr
    assert run_git(repo, "rev-list", "--count", "HEAD") == "2\n"
    assert spawn_wb(repo, "task", "add", "first").returncode == 0
    assert run_git(repo, "status", "--porcelain") == before  # the state is in the database, not the tree


def test_diff_of_a_git_revision_on_sqlite_names_the_log_point_first(repo: Path) -> None:
    assert spawn_wb(repo, "init", "--backend", "sqlite").returncode == 0
    assert spawn_wb(repo, "task", "add", "first").returncode == 0
    assert spawn_wb(repo, "task", "add", "second").returncode == 0
    for rev, point in (("HEAD~1", "@-1"), ("HEAD~2", "@-2"), ("HEAD^", "@-1"), ("main", "@-1")):
        proc = spawn_wb(repo, "diff", rev)
        assert proc.returncode == 2
        [line] = proc.stderr.strip().splitlines()
        assert line.startswith(f"wb: '{rev}': use `wb diff {point}`"), line
        assert spawn_wb(repo, "diff", point).returncode == 0
