"""Real `git merge` of two real branches: wb's drivers merge the workbench with no manual step."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import files_only, run_git, run_wb
from workbench.api import Bench, init

# git's merge driver merges .workbench/*'s files on a `git merge`: a SQLite workbench has no files in git
pytestmark = files_only


@pytest.fixture
def base_repo(repo: Path) -> Path:
    init(repo)
    assert (repo / ".workbench" / ".gitattributes").exists()  # committed by init, so every clone has it
    assert run_git(repo, "status", "--porcelain") == ""
    bench = Bench.open(repo)
    for title in ("parse config", "write docs", "ship"):
        bench.add_task(title)
    return repo


def _merge(repo: Path, branch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "merge", "--no-edit", branch], cwd=repo, capture_output=True, text=True)


def _board(repo: Path) -> dict[str, dict]:
    return {t["id"]: t for t in json.loads((repo / ".workbench" / "board.json").read_text())["tasks"]}


def _clean_and_consistent(repo: Path) -> None:
    assert run_wb(repo, "validate").returncode == 0, run_wb(repo, "validate").stderr
    verify = run_wb(repo, "replay", "--verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""


def test_disjoint_edits_merge_clean_and_validate_at_once(base_repo: Path) -> None:
    repo = base_repo
    run_git(repo, "checkout", "-q", "-b", "feature")
    feature = Bench.open(repo)
    feature.start_task("T-001")
    feature.set_task("T-002", {"owner": "human"})
    feature.note("feature: chose TOML")
    run_git(repo, "checkout", "-q", "main")
    main = Bench.open(repo)
    main.block_task("T-003", "waiting for the API key")
    main.set_task("T-002", {"title": "write the user docs"})
    main.note("main: deploy window is Friday")
    merged = _merge(repo, "feature")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    _clean_and_consistent(repo)
    board = _board(repo)
    assert board["T-001"]["status"] == "in_progress"
    assert board["T-002"]["owner"] == "human" and board["T-002"]["title"] == "write the user docs"
    assert board["T-003"]["status"] == "blocked"
    state = (repo / ".workbench" / "state.md").read_text()
    # the decision log in the merged log's order: each branch's own, one branch after the other (by cause,
    # never by clock: docs/git.md "Merges by cause, not by clock"), not interleaved by timestamp
    log = (repo / ".workbench" / "events.jsonl").read_text()
    notes = ("feature: chose TOML", "main: deploy window is Friday")
    assert sorted(notes, key=state.index) == sorted(notes, key=log.index)
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    assert status["active_task"]["id"] == "T-001"
    assert status["blockers"] == ["T-003: waiting for the API key"]
    seqs = [json.loads(line)["seq"] for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert seqs == list(range(1, len(seqs) + 1))


def test_same_field_changed_on_both_branches_is_a_real_conflict(base_repo: Path) -> None:
    repo = base_repo
    run_git(repo, "checkout", "-q", "-b", "feature")
    Bench.open(repo).set_task("T-002", {"title": "docs, the feature way"})
    run_git(repo, "checkout", "-q", "main")
    Bench.open(repo).set_task("T-002", {"title": "docs, the main way"})
    merged = _merge(repo, "feature")
    assert merged.returncode != 0
    out = merged.stdout + merged.stderr
    assert "T-002.title" in out and "changed on both branches" in out
    assert "UU .workbench/board.json" in run_git(repo, "status", "--porcelain")


def test_colliding_task_ids_both_survive_and_references_follow(base_repo: Path) -> None:
    repo = base_repo
    run_git(repo, "checkout", "-q", "-b", "feature")
    feature = Bench.open(repo)
    feature.add_task("feature's fourth task")  # T-004 on feature, added first
    run_git(repo, "checkout", "-q", "main")
    main = Bench.open(repo)
    later = main.add_task("main's fourth task")  # T-004 on main, added later: renumbered
    assert later["id"] == "T-004"
    main.add_task("review it", kind="review", reviews="T-004")
    main.add_task("after it", depends_on=["T-004"])
    main.start_task("T-004")
    merged = _merge(repo, "feature")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    _clean_and_consistent(repo)
    board = _board(repo)
    titles = {t["title"]: tid for tid, t in board.items()}
    assert titles["feature's fourth task"] == "T-004"
    renamed = titles["main's fourth task"]
    assert renamed not in ("T-004",) and renamed.startswith("T-")
    assert board[titles["review it"]]["reviews"] == renamed
    assert board[titles["after it"]]["depends_on"] == [renamed]
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    assert status["active_task"]["id"] == renamed
    assert len(set(board)) == len(board) == 7


def test_a_second_merge_after_the_first_renumbered_the_other_branchs_task(base_repo: Path) -> None:
    """Two clones pulling from each other: the first merge renumbered the other side's T-004 (added later) to
    T-005 here, while the other side goes on calling it T-004. The next merge's base is the other side's commit,
    numbered as the other side numbers: its T-004 is ours' T-005. Before, the board driver compared that base
    with ours by raw id, saw our T-004 "changed" and theirs "removed", and left a conflict in board.json."""
    repo = base_repo
    run_git(repo, "checkout", "-q", "-b", "feature")
    run_git(repo, "checkout", "-q", "main")
    Bench.open(repo).add_task("main's fourth task")  # T-004 here, first
    run_git(repo, "checkout", "-q", "feature")
    Bench.open(repo).add_task("feature's fourth task")  # T-004 there, later: renumbered by the merge
    run_git(repo, "checkout", "-q", "main")
    merged = _merge(repo, "feature")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert {t["title"]: tid for tid, t in _board(repo).items()}["feature's fourth task"] == "T-005"
    run_git(repo, "checkout", "-q", "feature")
    Bench.open(repo).add_task("feature's fifth task")  # T-005 there
    run_git(repo, "checkout", "-q", "main")
    Bench.open(repo).note("main goes on")
    merged = _merge(repo, "feature")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    _clean_and_consistent(repo)
    titles = {t["title"]: tid for tid, t in _board(repo).items()}
    assert titles["main's fourth task"] == "T-004" and titles["feature's fourth task"] == "T-005", titles
    assert titles["feature's fifth task"] not in ("T-004", "T-005"), titles
    assert len(titles) == len(set(titles.values())) == 6, titles
