"""Concurrent `wb` processes (CONTRACT.md §3): they serialize on the workbench lock, no update is lost, task
ids stay unique and consecutive, every mutation is in a commit that names it; a held lock ends in exit 6 (busy)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from .wbhelpers import (
    WB,
    assert_every_writers_adds_landed,
    assert_init_left_user_alone,
    assert_log_sound,
    base_env,
    board,
    commit_count,
    git,
    head,
    make_repo,
    status_outside,
    status_workbench,
    wait_for_line,
    wb,
    wb_ok,
    wb_parallel,
    workbench_bytes,
)

AFTER_TITLE = "after the kills"

# One writer: waits for "go" on stdin, then runs `wb task add` N times in a row, reporting every failure.
WORKER = textwrap.dedent("""
    import subprocess, sys
    wb, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.stdin.readline()
    failures = []
    for i in range(n):
        title = f"{tag}-{i:02d}"
        p = subprocess.run([wb, "task", "add", title], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        waits = "wb: waiting for the workbench lock"  # a wait past a second is said, in one line
        if p.returncode != 0 or [line for line in p.stderr.splitlines() if not line.startswith(waits)]:
            failures.append(f"{title}: exit {p.returncode}: {p.stderr.strip()}")
        elif not p.stdout.endswith(f" added: {title}\\n"):
            failures.append(f"{title}: unexpected output {p.stdout!r}")
    print("\\n".join(failures))
    sys.exit(1 if failures else 0)
""")


@pytest.mark.parametrize(("writers", "each"), [
    (4, 5),
    pytest.param(4, 25, marks=pytest.mark.slow),
])
def test_concurrent_task_adds_serialize(tmp_path: Path, writers: int, each: int) -> None:
    repo = make_repo(tmp_path / "repo")
    before_init = status_outside(repo)
    wb_ok(repo, "init")
    user_status = status_outside(repo)
    assert_init_left_user_alone(before_init, user_status)
    head0 = head(repo)
    commits0 = commit_count(repo)
    total = writers * each

    env = base_env(WB_LOCK_TIMEOUT="120")  # under load a writer may wait behind all the others
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, WB, f"w{w}", str(each)], cwd=repo, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(writers)]
    for proc in procs:  # start them all at once
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for w, proc in enumerate(procs):
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"writer w{w} failed:\n{out}{err}"

    assert_every_writers_adds_landed(repo, writers, each, "w{w}")

    # every mutation in a commit that names its event, in order, touching only .workbench/; a writer with
    # others queued behind it leaves its commit to them (group commit), so a commit may carry several
    assert commits0 < commit_count(repo) <= commits0 + total
    trailers = git(repo, "log", "--reverse", "--format=%(trailers:key=Wb-Event,valueonly)", f"{head0}..HEAD")
    assert trailers.split() == [str(seq) for seq in range(2, total + 2)]
    touched = set(git(repo, "log", "--format=", "--name-only", f"{head0}..HEAD").split())
    assert touched and all(p.startswith(".workbench/") for p in touched), touched
    assert status_workbench(repo) == ""
    assert status_outside(repo) == user_status


# Like WORKER, but every `wb task add` is SIGKILLed at a fault point after its event is in the log.
KILLER = textwrap.dedent("""
    import os, subprocess, sys
    wb, points = sys.argv[1], sys.argv[2].split(",")
    sys.stdin.readline()
    failures = []
    for i, point in enumerate(points):
        env = dict(os.environ, WB_FAULT=point)
        p = subprocess.run([wb, "task", "add", f"killed-{i:02d}"], capture_output=True, text=True, env=env,
                           stdin=subprocess.DEVNULL)
        # a git point is not reached by a write that leaves its commit to a writer queued behind it (group
        # commit): it exits 0, acknowledged, and the checks below find it committed by another
        if p.returncode != -9 and not (p.returncode == 0 and point.startswith("after_git")):
            failures.append(f"killed-{i:02d} at {point}: exit {p.returncode}: {p.stderr.strip()}")
    print("\\n".join(failures))
    sys.exit(1 if failures else 0)
""")
KILL_POINTS = ["after_event_append", "after_board_write", "after_state_write", "after_git_ref"]


def test_writers_survive_a_writer_killed_mid_transaction(tmp_path: Path) -> None:
    """Three writers run while a fourth is SIGKILLed inside its transactions, holding the lock: the kernel
    frees the lock, the next writer folds the killed one's logged event in, nothing is lost or doubled."""
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    user_status = status_outside(repo)
    head0 = head(repo)
    writers, each = 3, 4
    env = base_env(WB_LOCK_TIMEOUT="120")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, WB, f"w{w}", str(each)], cwd=repo, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(writers)]
    procs.append(subprocess.Popen([sys.executable, "-c", KILLER, WB, ",".join(KILL_POINTS)], cwd=repo, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{proc.args[-3:]} failed:\n{out}{err}"
    wb_ok(repo, "task", "add", AFTER_TITLE)  # commits whatever the last kill left uncommitted

    expected = [f"w{w}-{i:02d}" for w in range(writers) for i in range(each)]
    expected += [f"killed-{i:02d}" for i in range(len(KILL_POINTS))] + [AFTER_TITLE]
    tasks = board(repo)["tasks"]
    assert sorted(t["title"] for t in tasks) == sorted(expected)
    assert [t["id"] for t in tasks] == [f"T-{i:03d}" for i in range(1, len(expected) + 1)]
    validate, verify = wb_parallel(repo, ["validate"], ["replay", "--verify"])
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert verify.returncode == 0, verify.stderr + verify.stdout
    events = assert_log_sound(repo)
    assert [e["type"] for e in events] == ["workbench.init"] + ["task.add"] * len(expected)
    touched = set(git(repo, "log", "--format=", "--name-only", f"{head0}..HEAD").split())
    assert touched and all(p.startswith(".workbench/") for p in touched), touched
    assert status_workbench(repo) == ""
    assert status_outside(repo) == user_status


# Holds the workbench lock (flock, as wb takes it) until its stdin closes.
HOLDER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.read()
""")


def test_held_lock_means_busy(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    wb_ok(repo, "task", "add", "before the lock")
    user_status = status_outside(repo)
    head0 = head(repo)
    files0 = workbench_bytes(repo)

    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(repo / ".workbench" / ".lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_line(holder, "locked")
        start = time.monotonic()
        busy = wb(repo, "task", "add", "x", WB_LOCK_TIMEOUT="0.5")
        elapsed = time.monotonic() - start
        assert busy.returncode == 6, busy.stderr + busy.stdout
        lines = busy.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("wb: ") and "lock" in lines[0], busy.stderr
        assert "Traceback" not in busy.stderr
        assert busy.stdout == ""
        assert 0.5 <= elapsed < 5, f"took {elapsed:.2f}s"
        assert workbench_bytes(repo) == files0, "a refused write changed .workbench/"
        assert head(repo) == head0
        assert status_workbench(repo) == ""
        assert status_outside(repo) == user_status

        # reads take no lock
        status = wb(repo, "status", "--json")
        assert status.returncode == 0, status.stderr
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)

    added = wb_ok(repo, "task", "add", "x")  # the lock is free again
    assert added.stdout.startswith("T-002 added")
    assert head(repo) != head0
    assert status_workbench(repo) == ""
    assert status_outside(repo) == user_status
