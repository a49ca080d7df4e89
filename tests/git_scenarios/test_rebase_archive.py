"""`git rebase` of a branch on which wb archived tasks onto a main that archived and changed tasks too
(docs/git.md, "Sealed segments and merges"): the rebase runs without a conflict, every event of both branches
is in the rebased log once, `wb validate` and `wb replay --verify` pass, and the next write archives again
what a void `board.archive` left on the board.

Before: main archived T-001..T-003 while the branch commented on T-002; each pick of the branch's commits
replayed main's log and then the comment, found no T-002 on the board ("event names unknown task T-002"), and
the rebase stopped with board.json and state.md in conflict and a log `wb validate` refused.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import about_git, make_repo, run_git, run_wb
from tests.store.test_segments import committed_log, whole_log

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files

CONFIG = "archive:\n  keep: 1\n  chunk: 2\n"  # past 2 finished tasks, the oldest 2 move to an archive chunk


def _ok(repo: Path, *args: str) -> str:
    out = run_wb(repo, *args)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _finish(repo: Path, *numbers: int) -> None:
    for n in numbers:  # cancelled is finished too, and one commit per task
        _ok(repo, "task", "set", f"T-{n:03d}", "status=cancelled")


def _board(repo: Path) -> dict:
    return json.loads((repo / ".workbench" / "board.json").read_text())


def _archived(repo: Path) -> list[tuple[str, ...]]:
    """The ids of each archive chunk the board references."""
    return [tuple(f"T-{n:03d}" for lo, hi in r["ranges"] for n in range(lo, hi + 1)) for r in
            _board(repo).get("archive", [])]


def _sound(repo: Path, ids: set[str]) -> None:
    for args in (("validate",), ("replay", "--verify")):
        _ok(repo, *args)
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""
    for log in (whole_log(repo), committed_log(repo)):
        assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
        got = [e["id"] for e in log]
        assert len(got) == len(set(got)), "an event is in the log twice"
        assert ids <= set(got), f"events lost: {len(ids - set(got))}"


def test_rebase_of_a_branch_that_archived_onto_a_main_that_archived_and_changed_tasks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    _ok(repo, "init")
    with open(repo / ".workbench" / "config.yaml", "a", encoding="utf-8") as fh:
        fh.write(CONFIG)
    for n in range(1, 9):
        _ok(repo, "task", "add", f"task {n}")
    run_git(repo, "checkout", "-q", "-b", "feature")
    _ok(repo, "task", "comment", "T-002", "seen on the branch")  # main archives T-002 meanwhile
    _finish(repo, 5, 6, 7)  # the branch archives T-005, T-006
    assert _archived(repo) == [("T-005", "T-006")]
    run_git(repo, "checkout", "-q", "main")
    _finish(repo, 1, 2, 3)  # main archives T-001, T-002
    assert _archived(repo) == [("T-001", "T-002")]
    _ok(repo, "task", "set", "T-006", "title=renamed on main")  # a task the branch archived
    main_ids = {e["id"] for e in whole_log(repo)}
    run_git(repo, "checkout", "-q", "feature")
    feature_ids = {e["id"] for e in whole_log(repo)}

    rebase = run_git(repo, "rebase", "main", check=False)
    assert "CONFLICT" not in rebase, rebase
    assert not (repo / ".git" / "rebase-merge").exists(), "the rebase stopped"
    assert run_git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "feature"
    _sound(repo, main_ids | feature_ids)
    # main's archive stands; the branch's board.archive is void (main changed T-006 before it in the rebased
    # log), so T-005 and T-006 are on the board, T-006 as main renamed it; the comment on sealed T-002 is kept
    # in the log and changes nothing
    assert _archived(repo) == [("T-001", "T-002")]
    on_board = {t["id"]: t for t in _board(repo)["tasks"]}
    assert {"T-005", "T-006"} <= set(on_board) and on_board["T-006"]["title"] == "renamed on main"
    assert [e["payload"]["text"] for e in whole_log(repo) if e["type"] == "task.comment"] == ["seen on the branch"]
    assert "seen on the branch" not in _ok(repo, "task", "show", "T-002")

    _ok(repo, "task", "add", "after the rebase")  # the next write archives again what is due
    assert _archived(repo) == [("T-001", "T-002"), ("T-003", "T-005")]
    _sound(repo, main_ids | feature_ids)
    listing = _ok(repo, "task", "list", "--all")
    assert all(f"T-{n:03d}" in listing for n in range(1, 10))
