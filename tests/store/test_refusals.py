"""A write that fails validation is refused before anything touches disk (CONTRACT §3): exit 5, one stderr
line naming the file, the JSON path and the rule; every file under .workbench/ byte-identical; no commit."""

from __future__ import annotations

import re

import pytest

from workbench.errors import Refused, SchemaRefused, UsageError

ENUM_STATUS = '"todo", "in_progress", "blocked", "done", "cancelled"'


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["task", "set", "T-001", "status=finished"],
         f'wb: board.json: tasks[0].status: "finished" is not one of {ENUM_STATUS}'),
        (["task", "add", "Second", "--depends-on", "T-9"],
         r'wb: board.json: tasks[1].depends_on[0]: "T-9" does not match ^T-\d{3,}$'),
        (["set", "blockers=null"], "wb: state.md: blockers: null is not of type array"),
        (["set", "foo=bar"], "wb: state.md: (top level): unknown key 'foo' (not allowed by the schema)"),
        (["task", "set", "T-001", "owner=robot"],
         'wb: board.json: tasks[0].owner: "robot" is not one of "builder", "reviewer", "human"'),
        (["set", "status=sleeping"], 'wb: state.md: status: "sleeping" is not one of '
                                     '"idle", "running", "paused", "awaiting_tool", "completed", "failed"'),
        (["set", "active_task_id=T-1"], r'wb: state.md: active_task_id: "T-1" does not match ^T-\d{3,}$'),
        (["task", "set", "T-001", "title="],
         "wb: board.json: a task's title must say something: it is empty or only whitespace"),
    ],
    ids=["bad-status", "bad-id", "null-array", "unknown-key", "bad-owner", "bad-state-status", "bad-active-id",
         "empty-title"],
)
def test_refused_write_changes_nothing(bench, repo, git, wb, wb_hashes, error_line, args, expected):
    bench.add_task("First", acceptance=["true"])
    files = wb_hashes(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    status = git(repo, "status", "--porcelain", "--untracked-files=all")

    r = wb(repo, *args)

    assert r.returncode == 5, r.stdout + r.stderr
    assert error_line(r.stderr) == expected
    assert re.match(r"^wb: (board\.json|state\.md): \S[^:]*: .+$", r.stderr.strip())
    assert r.stdout == ""
    assert wb_hashes(repo) == files
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == status


def test_refusals_through_the_api_carry_file_path_and_rule(bench, repo, wb_hashes):
    task = bench.add_task("First")
    files = wb_hashes(repo)
    with pytest.raises(SchemaRefused) as info:
        bench.set_task(task["id"], {"status": "finished"})
    err = info.value
    assert (err.file, err.path) == ("board.json", "tasks[0].status")
    assert err.rule.startswith('"finished" is not one of ')
    assert err.exit_code == 5

    with pytest.raises(SchemaRefused) as info:
        bench.set_state({"touched_files": None})
    assert (info.value.file, info.value.path) == ("state.md", "touched_files")

    with pytest.raises(SchemaRefused) as info:
        bench.set_state({"assumptions": ["fine", 7]})
    assert (info.value.file, info.value.path) == ("state.md", "assumptions[1]")

    with pytest.raises(UsageError, match="counters is kept by wb and cannot be set"):
        bench.set_state({"counters": {"tasks_completed": -1}})
    assert wb_hashes(repo) == files


def test_refused_by_board_rules(bench, repo, wb_hashes):
    done = bench.add_task("First")
    bench.done_task(done["id"])
    files = wb_hashes(repo)
    with pytest.raises(Refused, match=r"no task T-404 to depend on"):
        bench.add_task("Second", depends_on=["T-404"])
    with pytest.raises(Refused, match=r"T-001 is done; cannot start it"):
        bench.start_task("T-001")
    with pytest.raises(UsageError, match=r"cannot set id on a task"):
        bench.set_task("T-001", {"id": "T-002"})
    with pytest.raises(UsageError, match=r"needs a reason"):
        bench.block_task("T-001", "  ")
    assert wb_hashes(repo) == files


def test_usage_errors_exit_2_and_change_nothing(bench, repo, wb, wb_hashes, error_line):
    files = wb_hashes(repo)
    for args in (["set", "next_action"], ["set", "updated_at=2020-01-01T00:00:00Z"],
                 ["task", "set", "T-001", "id=T-002"], ["note", "hi", "--actor", "robot"]):
        r = wb(repo, *args)
        assert r.returncode == 2, (args, r.stderr)
        error_line(r.stderr)
    assert wb_hashes(repo) == files
