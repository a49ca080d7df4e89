"""Acknowledged writes stranded by the user's git (issue 29, items 1-4): a write while HEAD is detached, during a
rebase stop or a bisect, or cut off by a `git switch` or a `git stash` mid-write, waits in the pending journal.
It lands on the branch through the same pick rule as `wb sync` and git's merge driver (store/landing.py): the
branch's log kept byte for byte, the waiting events after it, a task id the branch took meanwhile renumbered
and recorded as `task.renumber`, so `wb task show OLD` says where it went. While it waits, `wb status` names it
and the command that lands it; `wb doctor` runs the write's checks dry and says what the next write would do.

Before: the detached write's T-003 landed on main beside main's own T-003 and every later write exited 5
("board.json: tasks[4].id: duplicate id T-003") while `wb doctor --fix` said "healthy: nothing to repair".
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import about_git, run_git, run_wb, spawn_wb
from tests.git_scenarios.helpers import assert_sound, go, paused

pytestmark = about_git  # the pending journal waits for git's operations: SQLite has neither (store/sqlitedb.py)


def _ok(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = run_wb(repo, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _board(repo: Path) -> dict[str, str]:
    board = json.loads((repo / ".workbench" / "board.json").read_text())
    return {t["id"]: t["title"] for t in board["tasks"]}


def _log(repo: Path) -> list[dict]:
    return [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]


def _status(repo: Path) -> dict:
    return json.loads(_ok(repo, "status", "--json").stdout)


def _four_tasks(repo: Path) -> None:
    _ok(repo, "init")
    for i in range(1, 5):
        _ok(repo, "task", "add", f"t{i}")


def _lands_renumbered(repo: Path, title: str, old: str, new: str) -> None:
    """The waiting task is on the branch under `new`, a task.renumber records it, and `wb task show OLD` says
    where it went."""
    board = _board(repo)
    assert board.get(new) == title, board
    assert len(board) == len(set(board)), board
    renumbers = [e["payload"] for e in _log(repo) if e["type"] == "task.renumber"]
    assert [(r["from"], r["to"]) for r in renumbers] == [(old, new)], renumbers
    show = run_wb(repo, "task", "show", old, "--json")
    assert show.returncode == 0, show.stderr
    assert new in show.stdout, show.stdout


def test_a_task_added_on_a_detached_head_lands_on_main_under_a_new_id(repo: Path) -> None:
    _four_tasks(repo)
    run_git(repo, "checkout", "-q", "HEAD~2")
    added = run_wb(repo, "task", "add", "while-detached")
    assert added.returncode == 0 and "HEAD is detached" in added.stderr, added.stderr  # gets T-003 here
    waiting = _status(repo)["not_yet_written"]
    assert waiting["events"] == 1, waiting
    assert "git switch main" in waiting["command"], waiting  # the one command that lands it
    human = _ok(repo, "status").stdout
    assert "git switch main" in human and "wait" in human, human
    assert "Not committed: 1 acknowledged change(s) wait" in _ok(repo, "prime").stdout
    packet = json.loads(_ok(repo, "handoff", "--json").stdout)
    assert any(r["kind"] == "not_committed" and "git switch main" in r["detail"] for r in packet["risks"]), packet
    detached = json.loads(run_wb(repo, "doctor", "--json").stdout)["findings"]
    assert [(f["code"], f["fixable"]) for f in detached] == [("pending", False)], detached  # the person's to end
    assert "git switch main" in detached[0]["message"]
    run_git(repo, "checkout", "-q", "main")
    validate = _ok(repo, "validate")  # valid with the waiting write folded in, and says that it waits
    assert "not committed: 2 acknowledged change(s) wait" in validate.stdout, validate.stdout  # the task, the handoff
    assert "T-003 lands as T-005" in validate.stdout, validate.stdout

    doctor = run_wb(repo, "doctor", "--json")  # the dry run of the write: what lands, and how
    findings = {f["code"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert "pending" in findings and findings["pending"]["fixable"], doctor.stdout
    assert "T-003" in findings["pending"]["message"], findings["pending"]

    back = run_wb(repo, "task", "add", "back")
    assert back.returncode == 0, back.stderr  # before: exit 5, duplicate id T-003, and every write after it
    _lands_renumbered(repo, "while-detached", "T-003", "T-005")
    assert _board(repo)["T-006"] == "back"
    assert _board(repo)["T-003"] == "t3"  # main's own task keeps its id: the branch's log is kept as it is
    assert _status(repo)["not_yet_written"] is None
    assert_sound(repo)


def test_doctor_fix_lands_what_waits_and_validate_agrees(repo: Path) -> None:
    _four_tasks(repo)
    run_git(repo, "checkout", "-q", "HEAD~2")
    _ok(repo, "task", "add", "while-detached")
    run_git(repo, "checkout", "-q", "main")
    fix = _ok(repo, "doctor", "--fix")
    assert "pending" in fix.stdout or "land" in fix.stdout, fix.stdout
    _lands_renumbered(repo, "while-detached", "T-003", "T-005")
    journal = repo / ".git" / "wb" / "pending.jsonl"
    assert not journal.exists() or not journal.read_bytes()
    assert "healthy" in _ok(repo, "doctor").stdout
    assert_sound(repo)


def test_a_start_of_a_task_the_branch_lacks_is_reported_and_the_rest_lands(repo: Path) -> None:
    _ok(repo, "init")
    _ok(repo, "task", "add", "t1")
    run_git(repo, "checkout", "-q", "-b", "feature")
    _ok(repo, "task", "add", "f2")  # T-002 on feature only
    run_git(repo, "checkout", "-q", "--detach", "feature")
    _ok(repo, "task", "start", "T-002")
    _ok(repo, "task", "add", "while-detached")  # T-003
    run_git(repo, "checkout", "-q", "main")  # main has no T-002: the start no longer applies
    back = run_wb(repo, "note", "back")
    assert back.returncode == 0, back.stderr  # reported, and the rest lands
    assert "task.start T-002" in back.stderr and "no longer apply" in back.stderr, back.stderr
    assert "refused.jsonl" in back.stderr
    waiting = _status(repo)["not_yet_written"]  # still named, until a person has read and removed it
    assert waiting["set_aside"] == 1 and "refused.jsonl" in waiting["text"], waiting
    findings = json.loads(run_wb(repo, "doctor", "--json").stdout)["findings"]
    assert [(f["code"], f["fixable"]) for f in findings] == [("set_aside", False)], findings
    (repo / ".git" / "wb" / "refused.jsonl").unlink()
    assert _board(repo) == {"T-001": "t1", "T-003": "while-detached"}  # T-003 free on main: no renumber
    assert _status(repo)["not_yet_written"] is None
    assert_sound(repo)


def test_a_start_of_a_task_the_branch_archived_lands_void_and_is_named(repo: Path) -> None:
    _four_tasks(repo)
    _ok(repo, "task", "set", "T-002", "status=cancelled")
    _ok(repo, "task", "delete", "T-002")  # main took T-002 off the board, into its archive
    run_git(repo, "checkout", "-q", "main~4")  # T-001, T-002 here
    assert set(_board(repo)) == {"T-001", "T-002"}
    _ok(repo, "task", "start", "T-002")
    _ok(repo, "task", "add", "while-detached")
    run_git(repo, "checkout", "-q", "main")
    back = run_wb(repo, "note", "back")
    assert back.returncode == 0, back.stderr
    assert "task.start T-002" in back.stderr and "void" in back.stderr, back.stderr
    assert _board(repo)["T-005"] == "while-detached"
    assert "T-002" not in _board(repo)
    assert_sound(repo)


def test_a_switch_to_another_branch_mid_write_lands_there_renumbered(repo: Path, tmp_path: Path) -> None:
    _ok(repo, "init")
    _ok(repo, "task", "add", "t1")
    run_git(repo, "checkout", "-q", "-b", "other")
    for title in ("o2", "o3"):
        _ok(repo, "task", "add", title)  # T-002, T-003 on other
    run_git(repo, "checkout", "-q", "main")
    _ok(repo, "task", "add", "t2")  # T-002 on main
    proc, marker = paused(repo, tmp_path, "after_pending_append", "task", "add", "mid-switch")  # T-003 on main
    run_git(repo, "switch", "-q", "other")
    done = go(proc, marker)
    assert done.returncode == 0, done.stderr  # acknowledged: in the pending journal
    assert _status(repo)["not_yet_written"]["events"] == 1
    _ok(repo, "task", "add", "next")
    _lands_renumbered(repo, "mid-switch", "T-003", "T-004")
    assert _board(repo)["T-005"] == "next"
    assert_sound(repo)


def test_a_write_during_a_rebase_stop_waits_is_named_and_lands(repo: Path) -> None:
    _ok(repo, "init")
    run_git(repo, "checkout", "-q", "-b", "feature")
    (repo / "app.py").write_text("print('feature')\n")
    run_git(repo, "commit", "-q", "-am", "feature change")
    _ok(repo, "task", "add", "f1")  # T-001 on feature, picked after the stop
    run_git(repo, "checkout", "-q", "main")
    (repo / "app.py").write_text("print('main')\n")
    run_git(repo, "commit", "-q", "-am", "main change")
    _ok(repo, "task", "add", "m1")  # T-001 on main
    run_git(repo, "checkout", "-q", "feature")
    stopped = subprocess.run(["git", "rebase", "main"], cwd=repo, capture_output=True, text=True)
    assert stopped.returncode != 0  # stopped on app.py's conflict, before f1's commit is picked
    added = run_wb(repo, "task", "add", "during-rebase")
    assert added.returncode == 0 and "rebase" in added.stderr, added.stderr
    assert added.stdout.startswith("T-002 "), added.stdout
    waiting = _status(repo)["not_yet_written"]
    assert waiting["events"] == 1 and waiting["command"] == "git rebase --continue", waiting
    (repo / "app.py").write_text("print('both')\n")
    run_git(repo, "add", "app.py")
    done = subprocess.run(["git", "rebase", "--continue"], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "GIT_EDITOR": "true"})
    assert done.returncode == 0, done.stdout + done.stderr  # f1's pick: the merge driver renumbers it T-002
    assert _board(repo) == {"T-001": "m1", "T-002": "f1"}
    _ok(repo, "note", "after")
    _lands_renumbered(repo, "during-rebase", "T-002", "T-003")
    assert _status(repo)["not_yet_written"] is None
    assert_sound(repo)


def test_a_write_during_bisect_lands_after_bisect_reset(repo: Path) -> None:
    _four_tasks(repo)
    run_git(repo, "bisect", "start")
    run_git(repo, "bisect", "bad")
    run_git(repo, "bisect", "good", "HEAD~3")  # checks out a commit between: T-001, T-002 there
    added = run_wb(repo, "task", "add", "during-bisect")
    assert added.returncode == 0 and "bisect" in added.stderr, added.stderr
    old = added.stdout.split()[0]  # the next free id on the commit bisect checked out: main has it already
    waiting = _status(repo)["not_yet_written"]
    assert "git bisect reset" in waiting["command"], waiting
    run_git(repo, "bisect", "reset")
    _ok(repo, "task", "add", "after")
    _lands_renumbered(repo, "during-bisect", old, "T-005")
    assert_sound(repo)


@pytest.mark.parametrize("point", ["after_event_append", "after_state_write"])
def test_a_stash_between_the_append_and_the_commit_validates_before_the_next_write(repo: Path, tmp_path: Path,
                                                                                      point: str) -> None:
    _ok(repo, "init")
    _ok(repo, "note", "before")
    proc, marker = paused(repo, tmp_path, point, "note", "in flight")
    run_git(repo, "stash", "push", "-q")
    done = go(proc, marker)
    assert done.returncode == 0, done.stderr
    for args in (["validate"], ["replay", "--verify"]):  # before: validate exit 5, "last_event 2 is beyond..."
        proc2 = spawn_wb(repo, *args)
        assert proc2.returncode == 0, proc2.stdout + proc2.stderr
    findings = json.loads(spawn_wb(repo, "doctor", "--json").stdout)["findings"]
    assert "snapshots_behind" not in {f["code"] for f in findings}, findings  # before: "miss the last -1 event(s)"
    assert "pending" in {f["code"] for f in findings}, findings
    doctor = spawn_wb(repo, "doctor", "--fix")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert_sound(repo, acknowledged=["before", "in flight"])


def test_the_files_a_waiting_write_names_land_with_it(repo: Path) -> None:
    """A write's files (the handoff packet, an acceptance output) are kept with its events in the git directory
    while git is mid-operation, and written by the write that lands them. Before: the handoff.write event landed
    and handoff.json was never written."""
    _four_tasks(repo)
    run_git(repo, "checkout", "-q", "HEAD~1")
    handoff = run_wb(repo, "handoff", "--json")
    assert handoff.returncode == 0, handoff.stderr
    assert not (repo / ".workbench" / "handoff.json").exists()  # the work tree is git's while detached
    run_git(repo, "checkout", "-q", "main")
    _ok(repo, "note", "back")
    raw = (repo / ".workbench" / "handoff.json").read_bytes()
    written = [e["payload"] for e in _log(repo) if e["type"] == "handoff.write"]
    assert len(written) == 1 and written[0]["sha256"] == __import__("hashlib").sha256(raw).hexdigest()
    assert (repo / ".workbench" / "handoff.md").exists()
    assert_sound(repo)


def test_a_task_a_person_added_to_board_json_by_hand_keeps_its_id(repo: Path) -> None:
    """The ids a landing must not reuse are the board's, not only those the log's task.add events name."""
    _ok(repo, "init")
    _ok(repo, "task", "add", "t1")
    run_git(repo, "checkout", "-q", "--detach")
    _ok(repo, "task", "add", "while-detached")  # T-002 here
    run_git(repo, "checkout", "-q", "main")
    path = repo / ".workbench" / "board.json"
    board = json.loads(path.read_text())
    board["tasks"].append({**board["tasks"][0], "id": "T-002", "title": "by hand"})  # a person's T-002
    path.write_text(json.dumps(board, indent=2) + "\n")
    back = run_wb(repo, "note", "back")
    assert back.returncode == 0, back.stderr  # before: duplicate id T-002
    assert _board(repo) == {"T-001": "t1", "T-002": "by hand", "T-003": "while-detached"}
    assert_sound(repo)
