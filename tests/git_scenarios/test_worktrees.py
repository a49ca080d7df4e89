"""Linked worktrees: a second agent in its own `git worktree` writes through wb like the first.

Objects go to the repository's common git directory (not the worktree's private one), branches are read
where every worktree shares them, and two agents writing at once in two worktrees each get their own
branch's commits, with nothing lost in either.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import WB_ARGV, about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound, committed_notes

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _worktree(repo: Path, name: str) -> Path:
    path = repo.parent / name
    run_git(repo, "worktree", "add", "-q", "-b", name, str(path))
    return path


def test_a_note_in_a_linked_worktree_is_committed_on_its_branch(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    run_git(repo, "add", "-A")
    wt2 = _worktree(repo, "wt2")
    out = run_wb(wt2, "note", "from the second worktree")
    assert out.returncode == 0, out.stderr
    assert "not committed" not in out.stderr, out.stderr
    assert committed_notes(wt2, "wt2") == ["from the second worktree"]
    assert committed_notes(repo, "main") == []  # main's branch is untouched
    assert_sound(wt2, acknowledged=["from the second worktree"])
    assert_sound(repo)
    # the worktree's private git dir holds no objects of its own: they are shared
    private = Path(run_git(wt2, "rev-parse", "--absolute-git-dir").strip())
    assert not (private / "objects").exists()


def test_two_agents_in_two_worktrees_writing_at_once(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    wt2 = _worktree(repo, "wt2")
    procs = []
    for where, tag in ((repo, "main"), (wt2, "wt2")):
        for writer in range(2):
            script = "; ".join(f"{' '.join(WB_ARGV)} note {tag}-{writer}-{i}" for i in range(8))
            procs.append((where, tag, writer, subprocess.Popen(["bash", "-c", f"set -e; {script}"], cwd=where,
                                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    for _where, _tag, _writer, proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err.decode()
        assert b"not committed" not in err, err.decode()
    for where, tag in ((repo, "main"), (wt2, "wt2")):
        acknowledged = [f"{tag}-{w}-{i}" for w in range(2) for i in range(8)]
        assert_sound(where, acknowledged=acknowledged)
        assert sorted(committed_notes(where)) == sorted(acknowledged)  # and nothing of the other worktree
    assert run_git(repo, "fsck", "--strict", check=False).count("missing") == 0
