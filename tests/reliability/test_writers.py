"""Many writers at once, at default settings (issue 20 goal 4): every `wb task add` of 20 concurrent writers
exits 0 — no lock timeout, nothing lost, no duplicate id — because the lock is a fair queue whose wait counts
from the last hand-over (store/lock.py) and a writer with others queued behind it leaves its git commit to
the last of them (group commit, store/commit.py), so the lock is held for less. The log, the board, `wb
validate`, `wb replay --verify` and git's history then hold every write; a wait shows itself on stderr."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .wbhelpers import (
    WB,
    assert_every_writers_adds_landed,
    assert_log_sound,
    base_env,
    board,
    git,
    head,
    make_repo,
    status_outside,
    status_workbench,
    wb,
    wb_ok,
    wb_parallel,
)

# One writer: waits for "go" on stdin, then runs `wb task add` N times in a row and reports every failure. A
# wait for the lock may be said on stderr (one line, "waiting for …"); anything else there is a failure.
WORKER = textwrap.dedent("""
    import subprocess, sys
    wb, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.stdin.readline()
    failures = []
    for i in range(n):
        title = f"{tag}-{i:02d}"
        p = subprocess.run([wb, "task", "add", title], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        other = [line for line in p.stderr.splitlines() if not line.startswith("wb: waiting for the workbench lock")]
        if p.returncode != 0 or other:
            failures.append(f"{title}: exit {p.returncode}: {p.stderr.strip()}")
        elif not p.stdout.endswith(f" added: {title}\\n"):
            failures.append(f"{title}: unexpected output {p.stdout!r}")
    print("\\n".join(failures))
    sys.exit(1 if failures else 0)
""")


def default_env() -> dict[str, str]:
    """base_env without its raised WB_LOCK_TIMEOUT: the figure is at the default settings."""
    env = base_env()
    env.pop("WB_LOCK_TIMEOUT", None)
    return env


def run_writers(repo: Path, writers: int, each: int) -> list[str]:
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, WB, f"w{w:02d}", str(each)], cwd=repo,
                              env=default_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for w in range(writers)]
    for proc in procs:  # start them all at once
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    failures = []
    for w, proc in enumerate(procs):
        out, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            failures.append(f"writer w{w:02d}:\n{out}{err}")
    return failures


def wb_events_in_history(repo: Path, base: str) -> list[int]:
    """Every Wb-Event trailer of the commits since `base`: one per write a commit carries."""
    out = git(repo, "log", "--format=%(trailers:key=Wb-Event,valueonly)", f"{base}..HEAD")
    return sorted(int(v) for v in out.split())


@pytest.mark.parametrize(("writers", "each"), [
    (6, 5),
    pytest.param(20, 10, marks=pytest.mark.slow),
])
def test_many_writers_at_default_settings(tmp_path: Path, writers: int, each: int) -> None:
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    user_status = status_outside(repo)
    head0 = head(repo)
    total = writers * each

    failures = run_writers(repo, writers, each)
    assert not failures, "\n".join(failures)  # no "lock held >10s", no other error

    assert_every_writers_adds_landed(repo, writers, each, "w{w:02d}")

    # git holds every write, each named by a Wb-Event trailer of the commit that carries it, once
    assert wb_events_in_history(repo, head0) == list(range(2, total + 2))
    committed = git(repo, "show", "HEAD:.workbench/board.json")
    assert committed == (repo / ".workbench" / "board.json").read_text()
    touched = set(git(repo, "log", "--format=", "--name-only", f"{head0}..HEAD").split())
    assert touched and all(p.startswith(".workbench/") for p in touched), touched
    assert status_workbench(repo) == ""
    assert status_outside(repo) == user_status


def test_a_lone_writer_still_commits_each_write(tmp_path: Path) -> None:
    """Group commit is for a queue: a write with nobody waiting behind it is its own commit, as before."""
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    head0 = head(repo)
    for title in ("one", "two", "three"):
        proc = wb(repo, "task", "add", title, WB_LOCK_TIMEOUT="")
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    log = git(repo, "log", "--format=%s%n%(trailers:key=Wb-Event,valueonly)", f"{head0}..HEAD").split("\n")
    assert [line for line in log if line] == ["wb: add T-003 three", "4", "wb: add T-002 two", "3",
                                              "wb: add T-001 one", "2"]
    assert status_workbench(repo) == ""


# -- group commit and a crash --------------------------------------------------------------------------------
def _queue(repo: Path) -> list[str]:
    queue = repo / ".git" / "wb" / "lock-queue"
    return sorted(n for n in os.listdir(queue) if n.isdigit()) if queue.is_dir() else []


def _wait_until(what: str, check: Callable[[], bool], proc: subprocess.Popen[str] | None = None) -> None:
    """Wait (a minute at most: a hang fails, it does not stall) for `check()` — not a timing assertion."""
    deadline = time.monotonic() + 60
    while not check():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the process ended first ({proc.returncode}): {proc.communicate()}")
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def _spawn(repo: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([WB, *args], cwd=repo, env={**default_env(), **env}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _a_holding_the_lock_b_queued(repo: Path, tmp_path: Path, start_b: Callable[[], subprocess.Popen[str]]
                                 ) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    """A (`task add "acked by A"`) held at a fault point with the lock, B started and queued behind it; then A
    goes on. Returns (A, B), both running."""
    pause = tmp_path / "pause-a"
    a = _spawn(repo, "task", "add", "acked by A", WB_PAUSE="before_event_append", WB_PAUSE_FILE=str(pause))
    _wait_until("A holding the lock", Path(str(pause) + ".here").exists, a)
    b = start_b()
    _wait_until("B queued behind A", lambda: len(_queue(repo)) == 2, b)
    Path(str(pause) + ".go").touch()
    return a, b


@pytest.mark.parametrize("point", ["after_git_objects", "before_git_ref", "after_git_ref"])
def test_kill_of_the_writer_holding_a_group_commit_loses_nothing(tmp_path: Path, point: str) -> None:
    """A writes while B queues behind it, so A leaves its commit to B and exits 0 (acknowledged: in the log);
    B is killed (kill -9) in the middle of the commit that carries A's write. Nothing A was told is lost: the
    log and the board hold it, and the next write commits it — `git log` then names it."""
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    head0 = head(repo)
    a, b = _a_holding_the_lock_b_queued(repo, tmp_path, lambda: _spawn(repo, "task", "add", "killed B",
                                                                      WB_FAULT=point))
    out, err = a.communicate(timeout=60)
    assert a.returncode == 0 and out == "T-001 added: acked by A\n", err
    b.communicate(timeout=60)
    assert b.returncode == -9

    seq_a = next(e["seq"] for e in assert_log_sound(repo) if e["payload"].get("task", {}).get("title") == "acked by A")
    assert [t["title"] for t in board(repo)["tasks"]][:1] == ["acked by A"]
    wb_ok(repo, "task", "add", "after the kill")  # commits what was left, with its own write
    assert seq_a in wb_events_in_history(repo, head0)
    committed = json.loads(git(repo, "show", "HEAD:.workbench/board.json"))
    titles = [t["title"] for t in committed["tasks"]]
    assert titles[0] == "acked by A" and titles[-1] == "after the kill"
    validate, verify = wb_parallel(repo, ["validate"], ["replay", "--verify"])
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert verify.returncode == 0, verify.stderr + verify.stdout
    assert status_workbench(repo) == ""


# A write through the Python API that fails inside its transaction, after taking the lock (a refusal found
# under the lock: what `wb task done` whose acceptance fails does).
FAILING = textwrap.dedent("""
    from pathlib import Path
    from workbench.git.repo import find_worktree
    from workbench.store.workbench import Workbench
    wb = Workbench(find_worktree(Path.cwd()))
    try:
        with wb.transaction() as tx:
            raise RuntimeError("refused under the lock")
    except RuntimeError as err:
        raise SystemExit(str(err))
""")


def test_a_failed_write_commits_what_was_left_to_it(tmp_path: Path) -> None:
    """B, queued behind A, fails: it writes nothing, but commits the write A left to it."""
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    head0 = head(repo)
    a, b = _a_holding_the_lock_b_queued(repo, tmp_path, lambda: subprocess.Popen(
        [sys.executable, "-c", FAILING], cwd=repo, env=default_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    assert a.communicate(timeout=60)[0] == "T-001 added: acked by A\n"
    _out, err = b.communicate(timeout=60)
    assert b.returncode == 1 and err == "refused under the lock\n"
    assert wb_events_in_history(repo, head0) == [2]
    assert git(repo, "log", "-1", "--format=%B") == "wb: add T-001 acked by A\n\nWb-Event: 2\n\n"
    assert status_workbench(repo) == ""
    assert _queue(repo) == []


# -- the wait, shown -------------------------------------------------------------------------------------------
# Holds the workbench lock (flock, as wb takes it) until its stdin closes.
HOLDER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.read()
""")


def _hold(repo: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(repo / ".workbench" / ".lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


def test_a_wait_is_one_line_on_stderr_off_a_terminal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    holder = _hold(repo)
    try:
        proc = _spawn(repo, "task", "add", "patient")
        assert proc.stderr is not None
        line = proc.stderr.readline()  # said once the wait passes a second; the holder is still there
        assert line == "wb: waiting for the workbench lock: 1 writer ahead\n", line
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out == "T-001 added: patient\n"
    assert err == "", "the wait is said once"


def test_a_wait_counts_at_a_terminal(tmp_path: Path) -> None:
    """At a terminal the wait is a line redrawn in place, wiped once the lock is taken."""
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    holder = _hold(repo)
    pid, fd = pty.fork()
    if pid == 0:  # wb at a terminal of its own
        try:
            os.chdir(repo)
            os.execvpe(WB, [WB, "task", "add", "at a terminal"], {**default_env(), "TERM": "xterm"})
        finally:
            os._exit(127)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"waiting for the workbench lock: 1 writer ahead" not in seen:
            assert time.monotonic() < deadline, seen
            if select.select([fd], [], [], 0.1)[0]:
                seen += os.read(fd, 4096)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: wb ended and the terminal closed
            break
        if not chunk:
            break
        seen += chunk
    _pid, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    text = seen.decode()
    assert text.startswith("\r\x1b[Kwb: waiting for the workbench lock: 1 writer ahead (")
    assert text.endswith("\r\x1b[KT-001 added: at a terminal\r\n"), repr(text[-80:])


# -- the queue: first come, first served; a dead writer's ticket is swept; a stuck one ends in Busy -----------
def test_writers_take_the_lock_in_the_order_they_came(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    pause = tmp_path / "pause-a"
    first = _spawn(repo, "task", "add", "first", WB_PAUSE="before_event_append", WB_PAUSE_FILE=str(pause))
    _wait_until("the first holding the lock", Path(str(pause) + ".here").exists, first)
    later = []
    for n in range(1, 5):  # each queued before the next starts
        later.append(_spawn(repo, "task", "add", f"came {n}"))
        _wait_until(f"writer {n} queued", lambda n=n: len(_queue(repo)) == n + 1, later[-1])
    Path(str(pause) + ".go").touch()
    for proc in [first, *later]:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    assert [t["title"] for t in board(repo)["tasks"]] == ["first", "came 1", "came 2", "came 3", "came 4"]
    assert _queue(repo) == []
    assert status_workbench(repo) == ""


def test_a_dead_writers_ticket_does_not_hold_the_queue(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    queue = repo / ".git" / "wb" / "lock-queue"
    queue.mkdir(parents=True, exist_ok=True)
    (queue / f"{1:012d}").write_text("999999")  # a writer killed while it waited: no flock on its ticket
    proc = wb(repo, "task", "add", "after the dead", WB_LOCK_TIMEOUT="")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert _queue(repo) == []


# Queues for the lock (a ticket, flock'ed, as wb takes one) and never takes it, until its stdin closes.
STUCK = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(os.path.join(sys.argv[1], "000000000001"), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b"4242")
    print("queued", flush=True)
    sys.stdin.read()
""")


def test_a_queue_that_does_not_move_ends_in_busy(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    queue = repo / ".git" / "wb" / "lock-queue"
    queue.mkdir(parents=True, exist_ok=True)
    stuck = subprocess.Popen([sys.executable, "-c", STUCK, str(queue)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert stuck.stdout is not None and stuck.stdout.readline() == "queued\n"
        busy = wb(repo, "task", "add", "x", WB_LOCK_TIMEOUT="0.5")
        assert busy.returncode == 6, busy.stderr
        assert busy.stderr == ("wb: another wb process holds the workbench lock (pid 4242) for more than 0.5s; "
                               "retry when it finishes (WB_LOCK_TIMEOUT raises the wait)\n")
        assert _queue(repo) == ["000000000001"], "the refused writer left its ticket behind"
    finally:
        assert stuck.stdin is not None
        stuck.stdin.close()
        stuck.wait(timeout=10)
    wb_ok(repo, "task", "add", "x")
