"""One figure per limit (issue 29, item 6): a write waits for git's `index.lock` at most INDEX_LOCK_WAIT_S in
all, then says in one line what to do, and `wb doctor` names the lock rather than "uncommitted" files.

Before: a held lock made a write wait 30–35 s (docs/git.md said up to 10 s) — the load, the append, the commit
and the index update each waited on their own — and so did every write while a stale lock lay there; the
warning said to wait for "another git process" that did not exist, and `wb doctor` then reported
"uncommitted 3 workbench file(s)" (exit 1) for writes that were committed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import about_git, one_error_line, run_git, spawn_wb
from workbench.git.repo import INDEX_LOCK_WAIT_S

pytestmark = about_git

SLACK = 4.0  # wb's own work beside the wait, on a loaded CI machine — or twice a plain write's time in the same run


def _timed_add(repo: Path, title: str) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    proc = spawn_wb(repo, "task", "add", title)
    return proc, time.monotonic() - began


def _slack(repo: Path) -> float:
    """What wb's own work beside the wait may take here, now: a plain write timed in the same run (twice it, for
    the write beside the wait does a little more), at least SLACK — a machine loaded by other jobs slows both
    alike, where a fixed bound failed (CI: 16.1 s against 14 s, the lock test itself unchanged)."""
    proc, took = _timed_add(repo, "a plain write, timed")
    assert proc.returncode == 0, proc.stderr
    # never below what still tells one wait from two (a second wait alone is INDEX_LOCK_WAIT_S): a load spike
    # after the plain write was timed (CI's SQLite tier beside other jobs) then fails no test, and two waits still do
    return max(SLACK, 2 * took, INDEX_LOCK_WAIT_S - 0.5)


def _stale_lock(repo: Path) -> Path:
    """What a git killed mid-command leaves: .git/index.lock, an hour old, and no git running."""
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    hour_ago = time.time() - 3600
    os.utime(lock, (hour_ago, hour_ago))
    return lock


def test_a_stale_index_lock_costs_a_write_one_wait_and_one_line(repo: Path) -> None:
    assert spawn_wb(repo, "init").returncode == 0
    slack = _slack(repo)
    _stale_lock(repo)
    for title in ("first", "second"):
        proc, took = _timed_add(repo, title)
        assert proc.returncode == 0, proc.stderr
        assert took < INDEX_LOCK_WAIT_S + slack, f"a write waited {took:.1f}s for a stale index.lock"
        line = one_error_line(proc.stderr)
        assert "rm .git/index.lock" in line and "no git command" in line, line
        assert f'"{title}"' in run_git(repo, "show", "HEAD:.workbench/board.json")  # committed all the same


def test_doctor_names_a_stale_index_lock_not_uncommitted_files(repo: Path) -> None:
    assert spawn_wb(repo, "init").returncode == 0
    lock = _stale_lock(repo)
    assert spawn_wb(repo, "task", "add", "one").returncode == 0
    doctor = spawn_wb(repo, "doctor")
    out = doctor.stdout + doctor.stderr
    assert doctor.returncode == 1, out  # git itself is stuck until a person removes it
    assert "index.lock" in out and "rm .git/index.lock" in out, out
    assert "uncommitted" not in out, out  # the write was committed: only git's index lags behind
    lock.unlink()  # the person checked that no git runs
    run_git(repo, "reset", "-q", "--", ".workbench")
    healthy = spawn_wb(repo, "doctor")
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr


def test_doctor_still_reports_truly_uncommitted_files_beside_a_stale_lock(repo: Path) -> None:
    assert spawn_wb(repo, "init").returncode == 0
    _stale_lock(repo)
    with (repo / ".workbench" / "state.md").open("a") as f:
        f.write("\n### a hand note, never committed\n")
    doctor = spawn_wb(repo, "doctor")
    out = doctor.stdout + doctor.stderr
    assert "uncommitted" in out and "index.lock" in out, out


def _users_commit_holding_the_index(repo: Path, seconds: float) -> subprocess.Popen[bytes]:
    """`git commit -a` with an editor open for `seconds`: git holds index.lock all that time (the editor then
    leaves the message empty, and git aborts the commit)."""
    (repo / "app.py").write_text("print('changed')\n")
    env = dict(os.environ, GIT_EDITOR=f"sleep {seconds};:")
    proc = subprocess.Popen(["git", "commit", "-a"], cwd=repo, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lock = repo / ".git" / "index.lock"
    deadline = time.monotonic() + 10
    while not lock.exists():
        assert time.monotonic() < deadline, "git commit never took index.lock"
        time.sleep(0.01)
    return proc


def test_a_write_waits_out_a_users_git_holding_the_index_briefly(repo: Path) -> None:
    assert spawn_wb(repo, "init").returncode == 0
    holder = _users_commit_holding_the_index(repo, 2)
    proc, took = _timed_add(repo, "after your commit")
    holder.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr  # it waited, then wrote and updated the index: nothing to say
    assert 1.0 < took < INDEX_LOCK_WAIT_S, took
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""


def test_a_users_git_holding_the_index_longer_than_the_limit_costs_one_wait(repo: Path) -> None:
    assert spawn_wb(repo, "init").returncode == 0
    slack = _slack(repo)
    holder = _users_commit_holding_the_index(repo, 120)
    try:
        proc, took = _timed_add(repo, "beside a long commit")
    finally:
        os.killpg(holder.pid, signal.SIGTERM)  # the person gives up their commit: git lets go of the lock
        holder.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert INDEX_LOCK_WAIT_S - 0.5 < took < INDEX_LOCK_WAIT_S + slack, took
    assert "rm .git/index.lock" in one_error_line(proc.stderr)
    assert '"beside a long commit"' in run_git(repo, "show", "HEAD:.workbench/board.json")
