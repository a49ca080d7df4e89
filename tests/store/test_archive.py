"""The board's archive (issue 20): finished tasks past `archive.keep` move, `archive.chunk` at a time, into
sealed segments under .workbench/archive/ that board.json references — replayed byte for byte, shown by
`wb task show` and `wb task list --all`, checked by `wb validate`, merged by the drivers, and safe across a
kill -9 in the middle of the move."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import stored
from tests.conftest import about_git, run_git, run_wb, spawn_wb
from tests.stored import FILES
from workbench.api import Bench, init

KEEP, CHUNK = 2, 3


def _configure(repo: Path, keep: int = KEEP, chunk: int = CHUNK) -> None:
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + f"archive: {{keep: {keep}, chunk: {chunk}}}\n")
    run_git(repo, "add", ".workbench/config.yaml")
    run_git(repo, "commit", "-q", "-m", "archive settings")


@pytest.fixture
def archiving(repo: Path) -> Path:
    """A workbench that archives past 2 finished tasks, 3 at a time, with T-001…T-008 added."""
    init(repo)
    _configure(repo)
    bench = Bench.open(repo)
    for i in range(1, 9):
        bench.add_task(f"task {i}")
    return repo


def _board(repo: Path) -> dict[str, Any]:
    return stored.board(repo)


def _segment_ids(repo: Path, board: dict[str, Any]) -> list[str]:
    out = []
    for ref in board.get("archive", []):
        out += [t["id"] for t in json.loads((repo / ".workbench" / ref["file"]).read_text())["tasks"]]
    return out


def _finish(repo: Path, *ids: str) -> None:
    bench = Bench.open(repo)
    for tid in ids:
        bench.done_task(tid)


def _sound(repo: Path) -> None:
    validate = run_wb(repo, "validate")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    verify = run_wb(repo, "replay", "--verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    if FILES:
        assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""


def test_finished_tasks_past_the_threshold_move_to_a_sealed_segment(archiving: Path) -> None:
    repo = archiving
    _finish(repo, "T-001", "T-002", "T-003", "T-004")
    assert "archive" not in _board(repo)  # 4 finished: under keep + chunk
    _finish(repo, "T-005")
    board = _board(repo)
    assert [t["id"] for t in board["tasks"]] == ["T-004", "T-005", "T-006", "T-007", "T-008"]
    (ref,) = board["archive"]
    assert ref["tasks"] == 3 and ref["first"] == "T-001" and ref["last"] == "T-003"
    assert _segment_ids(repo, board) == ["T-001", "T-002", "T-003"]
    log = stored.events(repo)
    archived = [e for e in log if e["type"] == "board.archive"]
    assert len(archived) == 1 and archived[0]["actor"] == "wb" and archived[0]["payload"]["file"] == ref["file"]
    if FILES:  # the segment is committed with the write that sealed it
        assert run_git(repo, "ls-files", ".workbench/archive") == f".workbench/{ref['file']}\n"
        # wb diff names the tasks that moved: archived, not removed
        diff = run_wb(repo, "diff", "HEAD~1", "HEAD")
        assert "0 removed, 3 archived" in diff.stdout and "» T-001 [done]" in diff.stdout \
            and ref["file"] in diff.stdout
        moved = json.loads(run_wb(repo, "diff", "HEAD~1", "HEAD", "--format", "json").stdout)["board"]
        assert [t["id"] for t in moved["archived"]] == ["T-001", "T-002", "T-003"] and moved["removed"] == []
    _sound(repo)  # and the whole log rebuilds it byte for byte
    segment = repo / ".workbench" / ref["file"]
    sealed = segment.read_bytes()
    segment.write_bytes(sealed.replace(b"task 1", b"task 0"))
    verify = run_wb(repo, "replay", "--verify")
    assert verify.returncode != 0 and ref["file"] in verify.stdout + verify.stderr
    segment.write_bytes(sealed)
    # a new task's id is past the archived ones, even were every one of them archived
    assert Bench.open(repo).add_task("next")["id"] == "T-009"


def test_show_and_list_all_find_archived_tasks_and_writes_refuse_them(archiving: Path) -> None:
    repo = archiving
    _finish(repo, "T-001", "T-002", "T-003", "T-004", "T-005")
    shown = run_wb(repo, "task", "show", "T-002")
    assert shown.returncode == 0, shown.stderr
    assert "task 2" in shown.stdout and "archived" in shown.stdout and "archive/T-000001_T-000003_" in shown.stdout
    as_json = json.loads(run_wb(repo, "task", "show", "T-002", "--json").stdout)
    assert as_json["status"] == "done" and as_json["archived"].startswith("archive/")
    default = run_wb(repo, "task", "list")
    assert "T-002" not in default.stdout and "3 archived task(s) not shown (wb task list --all)" in default.stdout
    everything = json.loads(run_wb(repo, "task", "list", "--all", "--json").stdout)
    assert [t["id"] for t in everything] == [f"T-{i:03d}" for i in (4, 5, 6, 7, 8, 1, 2, 3)]
    assert "(archived)" in run_wb(repo, "task", "list", "--all").stdout
    refused = run_wb(repo, "task", "set", "T-002", "title=again")
    assert refused.returncode == 5 and "archived" in refused.stderr and "T-002" in refused.stderr
    # a dependency on an archived (done) task is met
    added = run_wb(repo, "task", "add", "follow-up", "--depends-on", "T-001", "--json")
    assert added.returncode == 0, added.stderr
    Bench.open(repo).set_task("T-006", {"status": "cancelled"})
    Bench.open(repo).set_task("T-007", {"status": "cancelled"})
    Bench.open(repo).set_task("T-008", {"status": "cancelled"})
    picked = json.loads(run_wb(repo, "task", "next", "--json").stdout)
    assert picked["task"]["title"] == "follow-up"
    # wb log still names the archived task's events
    assert "T-002" in run_wb(repo, "log", "--type", "task").stdout
    _sound(repo)


def test_a_tampered_segment_is_reported_by_validate(archiving: Path) -> None:
    repo = archiving
    _finish(repo, "T-001", "T-002", "T-003", "T-004", "T-005")
    ref = _board(repo)["archive"][0]
    segment = repo / ".workbench" / ref["file"]
    segment.write_text(segment.read_text().replace('"task 2"', '"task two"'))
    validate = run_wb(repo, "validate")
    assert validate.returncode != 0
    assert ref["file"] in validate.stderr and "sha256" in validate.stderr
    segment.unlink()
    validate = run_wb(repo, "validate")
    assert validate.returncode != 0 and "missing" in validate.stderr and ref["file"] in validate.stderr


@about_git  # a git merge of two branches' boards and archives
def test_two_clones_that_both_archived_merge_valid_with_nothing_lost(archiving: Path) -> None:
    repo = archiving
    run_git(repo, "checkout", "-q", "-b", "feature")
    _finish(repo, "T-001", "T-002", "T-003")  # feature seals T-001…T-003 when T-003 is done? keep 2 + chunk 3
    _finish(repo, "T-006", "T-007")
    assert _board(repo).get("archive")
    run_git(repo, "checkout", "-q", "main")
    _finish(repo, "T-004", "T-005", "T-008")
    Bench.open(repo).add_task("main's own")
    Bench.open(repo).set_task("T-009", {"status": "cancelled"})
    Bench.open(repo).add_task("main's second")
    Bench.open(repo).set_task("T-010", {"status": "cancelled"})
    assert _board(repo).get("archive")
    merged = subprocess.run(["git", "merge", "--no-edit", "feature"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    _sound(repo)
    board = _board(repo)
    on_board = [t["id"] for t in board["tasks"]]
    archived = _segment_ids(repo, board)
    everything = on_board + archived
    assert sorted(everything) == [f"T-{i:03d}" for i in range(1, 11)]  # every task, once
    assert len(set(everything)) == len(everything)
    statuses = {t["id"]: t["status"] for t in json.loads(run_wb(repo, "task", "list", "--all", "--json").stdout)}
    assert all(statuses[f"T-{i:03d}"] == "done" for i in (1, 2, 3, 4, 5, 6, 7, 8))
    # the next write archives whatever the merge left past the threshold, and stays sound
    Bench.open(repo).add_task("after the merge")
    _sound(repo)
    assert len([t for t in _board(repo)["tasks"] if t["status"] in ("done", "cancelled")]) < KEEP + CHUNK


def test_kill_9_while_a_segment_is_written_loses_nothing(archiving: Path) -> None:
    repo = archiving
    _finish(repo, "T-001", "T-002", "T-003", "T-004")
    env = {**os.environ, "WB_FAULT": "after_archive_write"}
    killed = spawn_wb(repo, "task", "done", "T-005", env=env)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    # it loads and validates at once (the event is in the log; the board catches up on the next write)
    assert run_wb(repo, "validate").returncode == 0, run_wb(repo, "validate").stderr
    # files: the event was appended before the segment was written; SQLite: the kill came before the COMMIT,
    # nothing of the write was acknowledged, and done again it seals the same segment, byte for byte
    assert json.loads(run_wb(repo, "task", "show", "T-005", "--json").stdout)["status"] == \
        ("done" if FILES else "todo")
    if not FILES:
        Bench.open(repo).done_task("T-005")
    assert json.loads(run_wb(repo, "task", "show", "T-001", "--json").stdout)["status"] == "done"
    assert Bench.open(repo).add_task("after the crash")["id"] == "T-009"
    _sound(repo)
    board = _board(repo)
    assert _segment_ids(repo, board) == ["T-001", "T-002", "T-003"]
    assert [t["id"] for t in board["tasks"]] == ["T-004", "T-005", "T-006", "T-007", "T-008", "T-009"]


def test_status_shows_how_many_tasks_are_archived(archiving: Path) -> None:
    repo = archiving
    _finish(repo, "T-001", "T-002", "T-003", "T-004", "T-005")
    data = json.loads(run_wb(repo, "status", "--json").stdout)
    assert data["board"]["archived"] == 3 and data["board"]["total"] == 5
    assert "3 archived" in run_wb(repo, "status").stdout
