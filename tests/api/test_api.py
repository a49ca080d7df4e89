"""The Python API (workbench.api): the same operations as the CLI, in-process."""

from __future__ import annotations

import json
import os

import pytest

from tests import stored
from tests.conftest import about_files
from tests.stored import FILES
from workbench.api import Bench, init
from workbench.errors import Busy, NotFound, Refused


def test_init_is_idempotent(repo, commits):
    b, created, last = init(repo)
    assert created and last.commit is not None  # SQLite: config.yaml and .gitignore (issue 31)
    count = commits(repo)
    b2, created2, last2 = init(repo)
    assert not created2 and last2.commit is None
    assert commits(repo) == count
    assert b2.root == b.root == repo


def test_open_from_a_subdirectory_and_without_a_workbench(repo, tmp_path):
    sub = repo / "pkg"
    sub.mkdir()
    with pytest.raises(NotFound, match=r"run `wb init`"):
        Bench.open(sub)
    with pytest.raises(NotFound, match=r"not inside a git repository"):
        Bench.open(tmp_path)
    init(repo)
    assert Bench.open(sub).root == repo


def test_a_task_through_its_life(bench, repo):
    task = bench.add_task("Parser", acceptance=["true"], description="tiny grammar")
    assert task["id"] == "T-001" and task["status"] == "todo" and task["owner"] == "builder"
    assert bench.last.summary == "add T-001 Parser" and bench.last.seqs == [2]
    review = bench.add_task("Review the parser", kind="review", reviews="T-001")
    assert review["id"] == "T-002" and review["owner"] == "reviewer"

    bench.start_task("T-001")
    status = bench.status()
    assert status["active_task"]["id"] == "T-001"
    bench.block_task("T-001", "the grammar is ambiguous")
    assert bench.status()["blockers"] == ["T-001: the grammar is ambiguous"]
    bench.start_task("T-001")
    assert bench.status()["blockers"] == []
    bench.done_task("T-001")
    assert bench.show_task("T-001")["status"] == "done"
    status = bench.status()
    assert status["active_task"] is None
    assert status["counters"]["tasks_completed"] == 1
    assert status["board"]["by_status"]["done"] == 1

    with pytest.raises(Refused, match=r"T-001 is done"):
        bench.block_task("T-001", "too late")
    bench.set_task("T-001", {"status": "todo"})  # reopen
    assert bench.list_tasks("todo")[0]["id"] == "T-001"
    assert bench.validate() == []
    assert bench.replay().mismatches == []


def test_done_with_failing_acceptance(bench, repo, commits, monkeypatch):
    from workbench.errors import PersonRequired
    from workbench.model import provenance
    from workbench.model.provenance import Who

    bench.add_task("Parser", acceptance=["exit 7"])
    count = commits(repo)
    with pytest.raises(Refused, match=r"acceptance failed: `exit 7` exited 7"):
        bench.done_task("T-001")
    assert commits(repo) == count
    monkeypatch.setenv("CI", "1")  # no person can be asked here, whatever runs the tests
    with pytest.raises(PersonRequired, match=r"ask a person to run: wb task done T-001 --force"):
        bench.done_task("T-001", force=True)  # forcing is a person's (issue 19)
    assert commits(repo) == count
    # a person proven at a terminal earlier in this process (ops/person.require_person) may force it
    before = provenance.establish(Who("human", "terminal", True, "tty-code"))
    try:
        bench.done_task("T-001", force=True)
    finally:
        provenance.establish(before)
    event = bench.log(type="task.done")[-1]
    assert event["payload"]["forced"] is True
    assert event["payload"]["acceptance"][0]["cmd"] == "exit 7"
    assert bench.show_task("T-001")["forced_done"] is True
    assert commits(repo) == count + FILES


def test_acceptance_timeout(bench):
    bench.add_task("Slow", acceptance=["sleep 5"])
    with pytest.raises(Refused, match=r"timed out after 0.2s"):
        bench.done_task("T-001", timeout=0.2)


def test_task_ids_keep_increasing(bench):
    for _ in range(3):
        bench.add_task("t")
    bench.set_task("T-002", {"status": "cancelled"})
    assert bench.add_task("next")["id"] == "T-004"


def test_notes_and_state(bench, repo):
    bench.note("First decision.")
    bench.note("Second decision.")
    body = stored.state_text(repo).split("---\n", 2)[2]
    assert body.startswith("\n# Decision log\n")
    assert body.index("First decision.") < body.index("Second decision.")
    state = bench.set_state({"next_action": "write tests", "assumptions": ["py311"]})
    assert state["next_action"] == "write tests" and state["assumptions"] == ["py311"]
    seqs = bench.last.seqs
    assert bench.set_state({"next_action": "write tests"})["next_action"] == "write tests"
    assert bench.last.seqs == seqs  # nothing changed: no event, no commit


def test_log_filters(bench):
    bench.add_task("a")
    bench.start_task("T-001")
    bench.note("n")
    assert [e["type"] for e in bench.log(type="task")] == ["task.add", "task.start"]
    assert [e["seq"] for e in bench.log(limit=2)] == [3, 4]


@about_files  # older snapshot files put back by hand (SQLite writes both with the events, in one COMMIT)
def test_snapshots_catch_up_with_the_log_after_a_crash(bench, repo):
    """Events appended but snapshots not written (a crash between the two): the next load folds them in."""
    bench.add_task("Parser")
    wbdir = repo / ".workbench"
    board_before = (wbdir / "board.json").read_bytes()
    state_before = (wbdir / "state.md").read_bytes()
    bench.start_task("T-001")
    (wbdir / "board.json").write_bytes(board_before)
    (wbdir / "state.md").write_bytes(state_before)
    # .cache/ still describes the newer snapshots: an older last_event on disk is a crash, not a hand edit
    b = Bench.open(repo)
    assert b.show_task("T-001")["status"] == "in_progress"
    assert b.status()["active_task"]["id"] == "T-001"


def test_busy_lock_times_out_with_exit_6(bench, repo, wb, error_line, monkeypatch):
    monkeypatch.setenv("WB_LOCK_TIMEOUT", "0.3")
    with stored.holding_lock(repo):
        with pytest.raises(Busy, match=f"pid {os.getpid()}" if FILES else "another wb process holds"):
            Bench.open(repo).note("blocked")
        r = wb(repo, "note", "blocked")
    assert r.returncode == 6
    assert "another wb process holds the workbench lock" in error_line(r.stderr)
    bench.note("free again")


def test_status_json_matches_the_api(bench, repo, wb):
    bench.add_task("Parser")
    cli = json.loads(wb(repo, "status", "--json").stdout)
    assert cli == json.loads(json.dumps(bench.status()))
