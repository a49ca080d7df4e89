"""The board's rules cannot be side-stepped (issue 12 §6): `wb task done` prints each acceptance command
before it runs it and, on failure, the tail of its output (in the error line; a forced done records it);
acceptance runs without holding the workbench lock; `task set status=done` is refused; self-dependencies,
cycles and an active_task_id that names no task are refused; `task start` on a task in progress says so and
commits nothing."""

from __future__ import annotations

import subprocess
import time

from .helpers import WB_ARGV, Terminal, WbRepo, _env


def task_ids(repo: WbRepo) -> list[str]:
    board = repo.board()
    return [t["id"] for t in board["tasks"]]


def test_done_prints_each_command_and_the_tail_of_a_failure(wbrepo: WbRepo) -> None:
    wbrepo.wb_expect(0, "task", "add", "ship", "--accept", "echo first-check",
                     "--accept", "echo line-1; echo the-reason-it-failed >&2; exit 4")
    (tid,) = task_ids(wbrepo)
    term = Terminal(wbrepo.path, "task", "done", tid)
    assert term.finish() == 5, term.text
    shown = term.text
    assert "$ echo first-check" in shown, shown
    assert shown.index("$ echo first-check") < shown.index("$ echo line-1") < shown.index("the-reason-it-failed")
    failed = wbrepo.wb_expect(5, "task", "done", tid)  # without a terminal: one line that names why
    assert len(failed.stderr.strip().splitlines()) == 1 and "the-reason-it-failed" in failed.stderr, failed.stderr
    assert wbrepo.board()["tasks"][0]["status"] != "done"
    assert wbrepo.uncommitted() == ""
    wbrepo.wb_expect(5, "task", "done", tid, "--force")  # forcing is a person's (issue 19)
    assert wbrepo.events("task.done") == []
    term = Terminal(wbrepo.path, "task", "done", tid, "--force")
    term.confirm()
    assert term.finish() == 0, term.text
    done = wbrepo.events("task.done")[-1]["payload"]
    assert done["forced"] is True and "the-reason-it-failed" in done["acceptance"][-1]["output_tail"], done
    wbrepo.assert_consistent()


def test_acceptance_does_not_hold_the_lock(wbrepo: WbRepo) -> None:
    wbrepo.wb_expect(0, "task", "add", "slow", "--accept", "sleep 6")
    (tid,) = task_ids(wbrepo)
    done = subprocess.Popen([*WB_ARGV, "task", "done", tid], cwd=wbrepo.path, env=_env(WB_LOCK_TIMEOUT="2"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    start = time.monotonic()
    wbrepo.wb_expect(0, "note", "written while the acceptance runs")
    wbrepo.wb_expect(0, "status")
    assert time.monotonic() - start < 4, "writers and status queued behind the acceptance run"
    out, err = done.communicate(timeout=60)
    assert done.returncode == 0, (out, err)
    wbrepo.assert_consistent()


def test_a_task_changed_while_its_acceptance_ran_is_not_marked_done(wbrepo: WbRepo) -> None:
    wbrepo.wb_expect(0, "task", "add", "slow", "--accept", "sleep 4")
    (tid,) = task_ids(wbrepo)
    done = subprocess.Popen([*WB_ARGV, "task", "done", tid], cwd=wbrepo.path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    wbrepo.wb_expect(0, "task", "block", tid, "--reason", "the spec changed")
    out, err = done.communicate(timeout=60)
    assert done.returncode == 5 and "changed while its acceptance ran" in err, (out, err)
    assert wbrepo.board()["tasks"][0]["status"] == "blocked"
    wbrepo.assert_consistent()


def test_set_status_done_points_to_task_done(wbrepo: WbRepo) -> None:
    wbrepo.wb_expect(0, "task", "add", "ship", "--accept", "exit 1")
    (tid,) = task_ids(wbrepo)
    refused = wbrepo.wb_expect(5, "task", "set", tid, "status=done")
    assert f"wb task done {tid}" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert not wbrepo.events("task.set")


def test_self_dependency_cycles_and_a_missing_active_task_are_refused(wbrepo: WbRepo) -> None:
    wbrepo.wb_expect(0, "task", "add", "a")
    wbrepo.wb_expect(0, "task", "add", "b")
    a, b = task_ids(wbrepo)
    refused = wbrepo.wb_expect(5, "task", "set", a, f"depends_on={a}")
    assert "itself" in refused.stderr, refused.stderr
    wbrepo.wb_expect(0, "task", "set", a, f"depends_on={b}")
    cycle = wbrepo.wb_expect(5, "task", "set", b, f"depends_on={a}")
    assert "cycle" in cycle.stderr and a in cycle.stderr and b in cycle.stderr, cycle.stderr
    missing = wbrepo.wb_expect(5, "set", "active_task_id=T-999")
    assert "T-999" in missing.stderr, missing.stderr
    wbrepo.assert_consistent()


def test_start_on_a_task_in_progress_says_so_and_commits_nothing(wbrepo: WbRepo) -> None:
    wbrepo.wb_expect(0, "task", "add", "a")
    (tid,) = task_ids(wbrepo)
    wbrepo.wb_expect(0, "task", "start", tid)
    commits = wbrepo.git_log()
    again = wbrepo.wb_expect(0, "task", "start", tid)
    assert "already in progress" in again.stdout + again.stderr, again
    assert wbrepo.git_log() == commits and len(wbrepo.events("task.start")) == 1
