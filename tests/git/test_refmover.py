"""RefMover: the long-lived `git update-ref --stdin` that moves wb's branch — a real compare-and-swap, and a
process that comes back after git refuses a move or is killed."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.conftest import about_git
from workbench.api import Bench, init
from workbench.git.repo import RefMover

pytestmark = about_git  # the helper that moves the state branch's git ref


def commit(git, repo: Path, message: str) -> str:
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def test_a_move_from_a_stale_old_value_is_refused_and_the_next_move_works(repo, git):
    first = git(repo, "rev-parse", "HEAD").strip()
    second = commit(git, repo, "second")
    mover = RefMover(repo)
    try:
        why = mover.move("refs/heads/main", first, first)  # main is at `second`, not `first`
        assert why is not None and "refs/heads/main" in why
        assert git(repo, "rev-parse", "main").strip() == second
        assert mover.move("refs/heads/main", first, second) is None  # a new git process, same object
        assert git(repo, "rev-parse", "main").strip() == first
        assert mover.move("refs/heads/main", second, first) is None  # and the same process again
        assert git(repo, "rev-parse", "main").strip() == second
    finally:
        mover.close()
    assert not (repo / ".git" / "refs" / "heads" / "main.lock").exists()


def test_a_missing_branch_is_created_only_from_zero(repo, git):
    head = git(repo, "rev-parse", "HEAD").strip()
    mover = RefMover(repo)
    try:
        assert mover.move("refs/heads/wb-state", head, "0" * 40) is None
        assert git(repo, "rev-parse", "wb-state").strip() == head
        assert mover.move("refs/heads/other", head, head) is not None  # does not exist: not at `head`
        assert git(repo, "branch", "--list", "other") == ""
    finally:
        mover.close()


def test_a_killed_git_helper_is_replaced_and_no_commit_is_lost(repo, git):
    init(repo)
    bench = Bench.open(repo)
    bench.add_task("one")
    proc = bench.wb.git._refs._proc
    assert proc is not None and proc.poll() is None  # it stays up between commits
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    bench.add_task("two")  # the dead helper is noticed and replaced; the commit is made
    assert bench.last.commit == git(repo, "rev-parse", "HEAD").strip()
    log = git(repo, "log", "--format=%s", "-3").splitlines()
    assert len(log) == 3 and all(line.startswith("wb: ") for line in log)
    assert ".workbench/" not in git(repo, "status", "--porcelain")


def test_the_helper_ends_when_the_bench_closes(repo):
    init(repo)
    bench = Bench.open(repo)
    bench.note("a decision")
    proc = bench.wb.git._refs._proc
    assert proc is not None
    bench.wb.git.close()
    assert proc.poll() == 0


def test_every_live_helper_is_ended_by_the_exit_handler(repo):
    """At interpreter exit objects are torn down in no set order, and a Popen freed before its RefMover warns
    about a running subprocess; the atexit handler ends every helper first. Here it is called directly."""
    from workbench.git import refs as gitstore

    init(repo)
    bench = Bench.open(repo)
    bench.note("a decision")
    mover = bench.wb.git._refs
    proc = mover._proc
    assert proc is not None and proc.poll() is None and mover in gitstore._LIVE
    gitstore._close_all()
    assert proc.poll() == 0 and mover._proc is None
    bench.note("after the handler ran")  # a later commit starts a new helper
    assert bench.last.commit is not None and mover._proc is not None
