"""git/indexfile.py: the index entries under .workbench/ written in-process are byte for byte what `git
update-index --index-info` writes for the same lines (the cache tree, version 3 entries, entries on either side);
an index it does not write is left to git untouched; and a wb killed while it held index.lock never leaves the
user's git blocked past the next wb command."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import about_git
from workbench.api import Bench, init
from workbench.git import indexfile

pytestmark = about_git  # the user's index, as wb's commits leave it


def blob(git, repo: Path, text: str) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=text).strip()


def settle(git, repo: Path) -> None:
    """Every tracked file dated a minute back and the index refreshed to that: no entry is racily clean (git
    would look at the file again before writing, and may smudge it)."""
    past = time.time() - 60
    for name in git(repo, "ls-files", "-z").split("\0"):
        if name and (repo / name).exists():
            os.utime(repo / name, (past, past))
    git(repo, "update-index", "-q", "--refresh", check=False)


def same_as_git(repo: Path, tmp_path: Path, lines: list[tuple[str, str]]) -> bytes:
    """Apply `lines` in-process to the index and with git to a copy of it; assert the bytes agree."""
    git_dir = repo / ".git"
    copy = tmp_path / "index.by-git"
    shutil.copy2(git_dir / "index", copy)
    assert indexfile.update(git_dir, lines) is None
    feed = "".join(f"{entry}\t{path}\n" for path, entry in lines)
    subprocess.run(["git", "update-index", "--index-info"], cwd=repo, input=feed.encode(), check=True,
                   env={**os.environ, "GIT_INDEX_FILE": str(copy)})
    ours = (git_dir / "index").read_bytes()
    assert ours == copy.read_bytes()
    assert not (git_dir / "index.lock").exists()
    assert not (git_dir / "wb" / "index.new").exists() and not (git_dir / "wb" / "index.old").exists()
    return ours


@pytest.fixture
def project(repo: Path, git) -> Path:
    """The repo with files sorting before and after .workbench/, committed: a full cache tree in the index."""
    (repo / ".editorconfig").write_text("root = true\n")
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print(1)\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "files on both sides")
    (repo / ".git" / "wb").mkdir(exist_ok=True)
    settle(git, repo)
    return repo


def test_new_entries_go_between_the_others_and_the_cache_tree_is_invalidated_as_git_does(project, git, tmp_path):
    a, b = blob(git, project, "a\n"), blob(git, project, "b\n")
    assert b"TREE" in (project / ".git" / "index").read_bytes()
    lines = [(".workbench/state.md", f"100644 {a}"), (".workbench/artifacts/out.txt", f"100644 {b}"),
             (".workbench/board.json", f"100755 {b}")]
    same_as_git(project, tmp_path, lines)
    listed = git(project, "ls-files", "-s").splitlines()
    assert [line.split("\t")[1] for line in listed] == [
        ".editorconfig", ".workbench/artifacts/out.txt", ".workbench/board.json", ".workbench/state.md",
        "README.md", "app.py", "src/main.py"]
    assert git(project, "fsck", "--no-dangling").strip() == ""


def test_changed_and_removed_entries_and_a_committed_cache_tree(project, git, tmp_path):
    a, b, c = blob(git, project, "a\n"), blob(git, project, "b\n"), blob(git, project, "c\n")
    (project / ".workbench" / "log").mkdir(parents=True)
    for name in ("state.md", "board.json", "log/0001.jsonl"):
        (project / ".workbench" / name).write_text(name)
    git(project, "add", ".workbench")
    git(project, "commit", "-q", "-m", "a workbench")  # the cache tree holds .workbench/ and log/ now
    settle(git, project)
    assert b"TREE" in (project / ".git" / "index").read_bytes()
    zero = "0" * 40
    lines = [(".workbench/state.md", f"100644 {a}"), (".workbench/board.json", f"100644 {b}"),
             (".workbench/log/0002.jsonl", f"100644 {c}"), (".workbench/log/0001.jsonl", f"0 {zero}")]
    same_as_git(project, tmp_path, lines)
    # the same lines again: git rewrites every entry named (its stat dropped) and invalidates again
    settle(git, project)
    same_as_git(project, tmp_path, lines)


def test_a_version_3_index_keeps_its_extended_entries(project, git, tmp_path):
    git(project, "update-index", "--skip-worktree", "app.py")
    settle(git, project)
    assert (project / ".git" / "index").read_bytes()[4:8] == (3).to_bytes(4, "big")
    same_as_git(project, tmp_path, [(".workbench/state.md", f"100644 {blob(git, project, 'a')}")])
    assert (project / ".git" / "index").read_bytes()[4:8] == (3).to_bytes(4, "big")


def test_an_index_it_does_not_write_is_left_to_git_untouched(project, git):
    git_dir = project / ".git"
    line = [(".workbench/state.md", f"100644 {blob(git, project, 'a')}")]
    git(project, "-c", "core.untrackedCache=true", "status", "--porcelain")  # an UNTR extension now
    settle(git, project)
    git(project, "-c", "core.untrackedCache=true", "status", "--porcelain")
    before = (git_dir / "index").read_bytes()
    assert b"UNTR" in before
    assert indexfile.update(git_dir, line) == "git"
    assert (git_dir / "index").read_bytes() == before
    assert not (git_dir / "index.lock").exists()


def test_a_racily_clean_entry_is_smudged_and_git_still_sees_it_as_staged(project, git):
    git_dir = project / ".git"
    (project / "app.py").write_text("print('changed')\n")
    git(project, "add", "app.py")  # staged this second: racily clean once the index is written again
    assert indexfile.update(git_dir, [(".workbench/x", f"100644 {blob(git, project, 'x')}")]) is None
    entries = git(project, "ls-files", "--debug", "app.py")
    assert "size: 0\t" in entries  # git reads app.py again before it trusts the entry
    (project / "app.py").write_text("print('CHANGED')\n")  # same size, same second: not missed
    assert git(project, "status", "--porcelain", "app.py") == "MM app.py\n"


def test_a_lock_held_by_the_users_git_is_neither_taken_nor_removed(project, git):
    git_dir = project / ".git"
    (git_dir / "index.lock").write_bytes(b"the user's git")
    before = (git_dir / "index").read_bytes()
    assert indexfile.update(git_dir, [(".workbench/x", f"100644 {blob(git, project, 'x')}")]) == "busy"
    assert (git_dir / "index.lock").read_bytes() == b"the user's git"
    assert (git_dir / "index").read_bytes() == before
    assert not indexfile.recover(git_dir)  # nothing of wb's to clear
    assert (git_dir / "index.lock").exists()


def test_recover_clears_only_a_dead_writers_lock(project):
    git_dir = project / ".git"
    mine = git_dir / "wb" / "index.new"
    mine.write_bytes(b"")
    os.link(mine, git_dir / "index.lock")
    fd = os.open(mine, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a writer still alive holds it
        assert not indexfile.recover(git_dir)
        assert (git_dir / "index.lock").exists()
    finally:
        os.close(fd)  # the writer is gone
    assert indexfile.recover(git_dir)
    assert not (git_dir / "index.lock").exists() and not mine.exists()
    # a stale index.new beside the user's own lock: the lock stays
    mine.write_bytes(b"")
    (git_dir / "index.lock").write_bytes(b"the user's git")
    assert not indexfile.recover(git_dir)
    assert (git_dir / "index.lock").exists() and not mine.exists()


@pytest.mark.parametrize("point", ["index_locked", "before_index_rename", "after_index_swap"])
def test_a_wb_killed_holding_the_index_lock_blocks_the_users_git_only_until_the_next_wb_command(
        repo, git, point):
    init(repo)
    settle(git, repo)
    script = ("import sys; from workbench.api import Bench; Bench.open(sys.argv[1]).add_task('killed')")
    proc = subprocess.run([os.sys.executable, "-c", script, str(repo)], env={**os.environ, "WB_FAULT": point},
                          capture_output=True)
    assert proc.returncode == -9
    assert (repo / ".git" / "index.lock").exists()  # what a kill at that moment leaves
    head = git(repo, "rev-parse", "HEAD").strip()
    assert "killed" in git(repo, "show", "HEAD:.workbench/board.json")  # committed before the index update
    bench = Bench.open(repo)
    bench.add_task("next")  # the next wb command clears wb's own lock, and updates the index
    assert bench.last.commit is not None and bench.last.commit != head
    assert not (repo / ".git" / "index.lock").exists()
    assert git(repo, "status", "--porcelain") == ""
    (repo / "app.py").write_text("print('the user goes on')\n")
    git(repo, "commit", "-qam", "the user's commit")  # not blocked
    assert git(repo, "status", "--porcelain") == ""


def test_a_racily_clean_workbench_entry_the_lines_replace_does_not_stop_it(project, git, tmp_path):
    (project / ".workbench").mkdir()
    (project / ".workbench" / "state.md").write_text("old\n")
    git(project, "add", ".workbench/state.md")  # racily clean, but replaced by the update all the same
    same_as_git(project, tmp_path, [(".workbench/state.md", f"100644 {blob(git, project, 'new')}")])


def test_a_git_directory_without_wb_yet(project, git, tmp_path):
    shutil.rmtree(project / ".git" / "wb")
    same_as_git(project, tmp_path, [(".workbench/state.md", f"100644 {blob(git, project, 'a')}")])
