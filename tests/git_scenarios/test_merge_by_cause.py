"""Merges by cause, not by clock (issue 29, item 5): merging two branches never loses a status change because a
clock was wrong.

Before: the events.jsonl driver interleaved both sides' new events by `(ts, id)`. A task finished on a branch
whose clock ran an hour behind came out of the merge `in_progress`, because the other branch's later-stamped
(re)start of it was folded after the `done`. Now each branch keeps its own order, and a `done` is placed after
the other branch's concurrent status changes of the same task (docs/git.md, "Merges by cause, not by clock").

The clocks are faked with WB_CLOCK_SKEW_S (workbench/model/ids.utc_now, test-only), the merges are real
`git merge` runs through wb's drivers, in both directions.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound

pytestmark = about_git

SLOW = {"WB_CLOCK_SKEW_S": "-3600"}  # this branch's clock runs an hour behind
FAST = {"WB_CLOCK_SKEW_S": "3600"}  # and this one's an hour ahead


def _wb(repo: Path, *args: str, env: dict[str, str] | None = None) -> None:
    proc = run_wb(repo, *args, env=None if env is None else {**os.environ, **env})
    assert proc.returncode == 0, f"wb {' '.join(args)}: {proc.stdout}{proc.stderr}"


def _statuses(repo: Path) -> dict[str, str]:
    board = json.loads((repo / ".workbench" / "board.json").read_text())
    return {t["id"]: t["status"] for t in board["tasks"]}


def _merge(repo: Path, into: str, other: str, name: str) -> subprocess.CompletedProcess[str]:
    run_git(repo, "checkout", "-q", "-b", name, into)
    return subprocess.run(["git", "merge", "--no-edit", other], cwd=repo, capture_output=True, text=True)


def _both_ways(repo: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    return {"slow-into-fast": _merge(repo, "fast", "slow", "m1"), "fast-into-slow": _merge(repo, "slow", "fast", "m2")}


def _fork(repo: Path, *tasks: str) -> None:
    _wb(repo, "init")
    for title in tasks:
        _wb(repo, "task", "add", title)
    _wb(repo, "task", "start", "T-001")
    run_git(repo, "branch", "slow")
    run_git(repo, "branch", "fast")


def test_a_done_on_the_slow_clock_branch_survives_the_merge_both_ways(repo: Path) -> None:
    _fork(repo, "ship it")
    run_git(repo, "checkout", "-q", "slow")
    _wb(repo, "task", "done", "T-001", env=SLOW)
    run_git(repo, "checkout", "-q", "fast")
    _wb(repo, "task", "block", "T-001", "--reason", "waiting on review", env=FAST)
    _wb(repo, "task", "start", "T-001", env=FAST)  # unblocked again: in_progress, as at the fork
    merges = _both_ways(repo)
    logs = {}
    for name, proc in merges.items():
        assert proc.returncode == 0, f"{name}: {proc.stdout}{proc.stderr}"
        branch = "m1" if name == "slow-into-fast" else "m2"
        run_git(repo, "checkout", "-q", branch)
        assert _statuses(repo) == {"T-001": "done"}, f"{name}: the done was lost"
        assert_sound(repo)
        logs[name] = run_git(repo, "show", f"{branch}:.workbench/events.jsonl")
    # the same merged log whichever side was merged into which
    assert logs["slow-into-fast"] == logs["fast-into-slow"]
    assert run_git(repo, "show", "m1:.workbench/board.json") == run_git(repo, "show", "m2:.workbench/board.json")


def test_each_branch_keeps_its_own_order_whatever_the_clocks(repo: Path) -> None:
    """A branch's own later change wins over its own earlier one, however its events are stamped: the slow
    branch finished T-001 and then reopened and started it again; the fast one only blocked T-002."""
    _fork(repo, "one", "two")
    run_git(repo, "checkout", "-q", "slow")
    _wb(repo, "task", "done", "T-001", env=SLOW)
    _wb(repo, "task", "set", "T-001", "status=todo", env=SLOW)  # reopened, on the same branch
    _wb(repo, "task", "start", "T-001", env=SLOW)
    run_git(repo, "checkout", "-q", "fast")
    _wb(repo, "task", "block", "T-002", "--reason", "needs a key", env=FAST)
    for name, proc in _both_ways(repo).items():
        assert proc.returncode == 0, f"{name}: {proc.stdout}{proc.stderr}"
        run_git(repo, "checkout", "-q", "m1" if name == "slow-into-fast" else "m2")
        assert _statuses(repo) == {"T-001": "in_progress", "T-002": "blocked"}, name
        assert_sound(repo)


def test_two_branches_each_finishing_what_the_other_restarted_is_a_conflict_git_reports(repo: Path) -> None:
    """No order of the two logs keeps both dones (each branch restarted, after its own done, the task the other
    finished): the board driver reports it as git reports a conflict, naming the task."""
    _fork(repo, "one", "two")
    _wb(repo, "task", "start", "T-002")
    run_git(repo, "branch", "-f", "slow")
    run_git(repo, "branch", "-f", "fast")
    run_git(repo, "checkout", "-q", "slow")
    _wb(repo, "task", "done", "T-001", env=SLOW)
    _wb(repo, "task", "block", "T-002", "--reason", "r", env=SLOW)
    _wb(repo, "task", "start", "T-002", env=SLOW)
    run_git(repo, "checkout", "-q", "fast")
    _wb(repo, "task", "done", "T-002", env=FAST)
    _wb(repo, "task", "block", "T-001", "--reason", "r", env=FAST)
    _wb(repo, "task", "start", "T-001", env=FAST)
    for name, (into, other) in {"slow-into-fast": ("fast", "slow"), "fast-into-slow": ("slow", "fast")}.items():
        proc = _merge(repo, into, other, f"m-{into}")
        assert proc.returncode != 0, f"{name}: a lost done passed silently: {proc.stdout}"
        assert "CONFLICT" in proc.stdout, proc.stdout
        assert "wb: merge conflict in .workbench/board.json: T-00" in proc.stderr, proc.stderr
        assert "done on one branch" in proc.stderr, proc.stderr
        run_git(repo, "merge", "--abort")


def test_two_different_statuses_neither_done_are_a_conflict_either_way(repo: Path) -> None:
    """Blocked on one branch, reopened to todo on the other: no rule can say which holds, so git reports it
    (the board driver names the task and the field), whichever branch is merged into which."""
    _fork(repo, "one")
    run_git(repo, "checkout", "-q", "slow")
    _wb(repo, "task", "block", "T-001", "--reason", "needs a key", env=SLOW)
    run_git(repo, "checkout", "-q", "fast")
    _wb(repo, "task", "set", "T-001", "status=todo", env=FAST)
    for into, other in (("fast", "slow"), ("slow", "fast")):
        proc = _merge(repo, into, other, f"m-{into}")
        assert proc.returncode != 0, proc.stdout
        assert "T-001.status: changed on both branches" in proc.stderr, proc.stderr
        run_git(repo, "merge", "--abort")
