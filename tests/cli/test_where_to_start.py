""""Where do I start?" in one call (issue 13 §6): `wb status` names the active task, or else the ready tasks
(todo, every dependency done, in board order) with the command that starts one; `wb task next [--start]`
picks the first; next_action is derived from the board until someone sets it."""

from __future__ import annotations

import json

from workbench.ops.init import NEXT_ACTION
from workbench.ops.status import INIT_NEXT_ACTION, ready_tasks


def status(wb, repo) -> dict:  # type: ignore[no-untyped-def]
    r = wb(repo, "status", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_placeholder_is_what_wb_init_records() -> None:
    assert INIT_NEXT_ACTION == NEXT_ACTION


def test_status_names_the_ready_tasks_in_board_order(bench, repo, wb) -> None:
    bench.add_task("Parse the config")                       # T-001
    bench.add_task("Print it", depends_on=["T-001"])          # T-002: waits on T-001
    bench.add_task("Write the docs")                          # T-003
    bench.add_task("Release", depends_on=["T-002", "T-003"])  # T-004
    bench.add_task("Blocked one")                             # T-005
    bench.block_task("T-005", "no API key")
    bench.add_task("Lint")                                    # T-006
    bench.add_task("Format")                                  # T-007

    data = status(wb, repo)
    assert data["active_task"] is None
    assert data["ready"] == {"tasks": [{"id": "T-001", "title": "Parse the config"},
                                       {"id": "T-003", "title": "Write the docs"},
                                       {"id": "T-006", "title": "Lint"}],
                             "total": 4, "command": "wb task start T-001"}
    assert data["next_action_source"] == "derived"
    assert data["next_action"] == "Start T-001 Parse the config: `wb task start T-001`"

    text = wb(repo, "status").stdout
    assert "ready        T-001 Parse the config · T-003 Write the docs · T-006 Lint (+1 more) — start: " \
           "wb task start T-001" in text
    assert "next action  Start T-001 Parse the config: `wb task start T-001`" in text

    bench.start_task("T-001")
    bench.done_task("T-001")  # no acceptance: done at once; T-002 is ready now
    data = status(wb, repo)
    assert [t["id"] for t in data["ready"]["tasks"]] == ["T-002", "T-003", "T-006"]
    assert data["ready"]["total"] == 4


def test_the_active_task_comes_first_and_a_set_next_action_wins(bench, repo, wb) -> None:
    bench.add_task("Parse the config")
    bench.add_task("Print it")
    bench.start_task("T-001")
    data = status(wb, repo)
    assert data["active_task"]["id"] == "T-001"
    assert data["next_action"] == "Finish T-001 Parse the config: `wb task done T-001` runs its acceptance"
    text = wb(repo, "status").stdout
    assert "active task  T-001 Parse the config (in_progress)" in text
    assert "ready " not in text  # the active task is where to start; the ready ones are in the JSON

    bench.set_state({"next_action": "Ask about the TOML dialect"})
    data = status(wb, repo)
    assert data["next_action"] == "Ask about the TOML dialect" and data["next_action_source"] == "set"
    bench.set_state({"next_action": ""})  # cleared: derived again
    assert status(wb, repo)["next_action_source"] == "derived"


def test_no_ready_task_says_what_it_waits_on(bench, repo, wb) -> None:
    assert status(wb, repo)["next_action"] == INIT_NEXT_ACTION  # the empty board
    bench.add_task("Parse the config")
    bench.add_task("Print it", depends_on=["T-001"])
    bench.block_task("T-001", "no grammar yet")
    data = status(wb, repo)
    assert data["ready"] == {"tasks": [], "total": 0, "command": None}
    assert data["next_action"] == "No task is ready: T-002 waits on T-001 (blocked)"
    nxt = wb(repo, "task", "next")
    assert nxt.returncode == 1 and nxt.stderr.strip() == "wb: no task is ready: T-002 waits on T-001 (blocked)"


def test_task_next_picks_and_starts_the_first_ready_task(bench, repo, wb, git) -> None:
    bench.add_task("Parse the config", depends_on=[])
    bench.add_task("Print it", depends_on=["T-001"])
    bench.add_task("Write the docs")

    r = wb(repo, "task", "next")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["T-001 Parse the config",
                                     "start it: wb task start T-001   (or wb task next --start)"]
    commits = git(repo, "rev-list", "--count", "HEAD")
    picked = json.loads(wb(repo, "task", "next", "--json").stdout)
    assert picked["task"]["id"] == "T-001" and picked["started"] is False and picked["active"] is None
    assert git(repo, "rev-list", "--count", "HEAD") == commits  # picking reads only

    r = wb(repo, "task", "next", "--start")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "T-001 todo → in_progress"
    assert bench.show_task("T-001")["status"] == "in_progress"

    again = wb(repo, "task", "next", "--start")  # one task at a time: a second --start starts nothing
    assert again.returncode == 5
    assert again.stderr.startswith("wb: T-001 is in progress: finish it (`wb task done T-001`)")
    assert bench.show_task("T-003")["status"] == "todo"

    shown = wb(repo, "task", "next")
    assert shown.stdout.splitlines()[:2] == ["T-003 Write the docs",
                                             "(T-001 is in progress: finish it first with `wb task done T-001`)"]


def test_task_next_on_an_empty_board(bench, repo, wb) -> None:
    r = wb(repo, "task", "next")
    assert r.returncode == 1 and r.stderr.strip() == "wb: the board is empty: add a task with `wb task add TITLE`"
    assert json.loads(wb(repo, "task", "next", "--json").stdout)["task"] is None


def test_status_json_stays_under_2_kb_at_100_tasks(bench, repo, wb) -> None:
    for i in range(1, 101):
        bench.add_task(f"Task number {i:03d}: implement the parser stage for config section {i}",
                       acceptance=[f"pytest -q tests/test_stage_{i}.py"], description="x" * 200,
                       depends_on=[f"T-{i - 1:03d}"] if i % 2 == 0 else [])
    bench.start_task("T-001")
    size = len(wb(repo, "status", "--json").stdout.encode())
    print(f"wb status --json at 100 tasks: {size} bytes")
    assert size < 2048


def test_ready_tasks_keeps_board_order_and_needs_every_dependency_done() -> None:
    tasks = [{"id": "T-001", "status": "done"}, {"id": "T-002", "status": "todo", "depends_on": ["T-001"]},
             {"id": "T-003", "status": "todo", "depends_on": ["T-001", "T-004"]},
             {"id": "T-004", "status": "cancelled"}, {"id": "T-005", "status": "todo", "depends_on": ["T-009"]},
             {"id": "T-006", "status": "in_progress"}, {"id": "T-007", "status": "todo"}]
    assert [t["id"] for t in ready_tasks(tasks)] == ["T-002", "T-007"]


def test_a_waiting_harness_session_comes_before_the_board(bench, repo, wb) -> None:
    bench.add_task("Parse the config")
    outcome = bench.run("Ship it", steps=[{"description": "Deploy", "tool": "deploy"}])
    assert not outcome.done and outcome.kind == "tool_result"
    data = status(wb, repo)
    assert data["next_action"].startswith("Answer the waiting harness session (")
    assert data["next_action"].endswith(f"`{data['pending']['command']}`")
    bench.abort("not now")
    assert status(wb, repo)["next_action"] == "Start T-001 Parse the config: `wb task start T-001`"
