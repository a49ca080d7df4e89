"""Many writers at once, at default settings (issue 20 goal 4): every `wb task add` of 20 concurrent writers
exits 0 — no lock timeout, nothing lost, no duplicate id — because the lock is a fair queue whose wait counts
from the last hand-over (store/lock.py) and a writer with others queued behind it leaves its git commit to
the last of them (group commit, store/commit.py), so the lock is held for less. The log, the board, `wb
validate`, `wb replay --verify` and git's history then hold every write; a wait shows itself on stderr."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .wbhelpers import (
    WB,
    assert_ids_unique,
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

    tasks = board(repo)["tasks"]
    assert len(tasks) == total
    assert_ids_unique(tasks)
    assert [t["id"] for t in tasks] == [f"T-{i:03d}" for i in range(1, total + 1)]
    titles = [t["title"] for t in tasks]
    assert sorted(titles) == sorted(f"w{w:02d}-{i:02d}" for w in range(writers) for i in range(each)), "lost"
    for w in range(writers):  # each writer's own adds land in the order it made them
        mine = [title for title in titles if title.startswith(f"w{w:02d}-")]
        assert mine == sorted(mine)

    validate, verify = wb_parallel(repo, ["validate"], ["replay", "--verify"])
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert verify.returncode == 0, verify.stderr + verify.stdout
    events = assert_log_sound(repo)
    assert [e["type"] for e in events] == ["workbench.init"] + ["task.add"] * total
    assert [e["payload"]["task"]["title"] for e in events[1:]] == titles

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
