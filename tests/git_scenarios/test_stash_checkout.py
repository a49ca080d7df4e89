"""The user's git while wb's files are modified or a write is in flight: stash, merge --abort, bisect, a
detached checkout, a checkout of wb's files. Nothing wb acknowledged is lost, the user's command succeeds,
and the workbench loads.

Before: a `git stash` between wb's event append and its commit made every later command exit 5 ("last_event
2 is beyond the event log's last seq 1"); a wb write during a conflicted merge made `git merge --abort` fail
("Entry '.workbench/events.jsonl' not uptodate"); `git bisect reset` failed on wb's files.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound, committed_notes, go, paused

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


@pytest.mark.parametrize("point", ["after_event_append", "after_state_write"])
def test_a_stash_between_the_append_and_the_commit(repo: Path, tmp_path: Path, point: str) -> None:
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "note", "before").returncode == 0
    (repo / "app.py").write_text("print('work in progress')\n")  # the user's own change, stashed with wb's
    proc, marker = paused(repo, tmp_path, point, "note", "in flight")
    run_git(repo, "stash", "push", "-q")
    done = go(proc, marker)
    assert done.returncode == 0, done.stderr  # acknowledged
    after = run_wb(repo, "note", "after")
    assert after.returncode == 0, after.stderr  # the workbench still loads
    assert_sound(repo, acknowledged=["before", "in flight", "after"])
    pop = subprocess.run(["git", "stash", "pop"], cwd=repo, capture_output=True, text=True)
    assert pop.returncode == 0, pop.stdout + pop.stderr  # the user's stash comes back
    assert (repo / "app.py").read_text() == "print('work in progress')\n"
    assert_sound(repo, acknowledged=["before", "in flight", "after"])


def _conflicting_branch(repo: Path) -> None:
    run_git(repo, "checkout", "-q", "-b", "other")
    (repo / "app.py").write_text("print('other')\n")
    run_git(repo, "commit", "-q", "-am", "other")
    run_git(repo, "checkout", "-q", "main")
    (repo / "app.py").write_text("print('main')\n")
    run_git(repo, "commit", "-q", "-am", "main")


def test_a_write_during_a_conflicted_merge_leaves_merge_abort_working(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    _conflicting_branch(repo)
    merge = subprocess.run(["git", "merge", "other"], cwd=repo, capture_output=True, text=True)
    assert merge.returncode != 0  # the user's own conflict
    note = run_wb(repo, "note", "during the merge")
    assert note.returncode == 0
    assert "recorded, not yet committed" in note.stderr and "merge" in note.stderr
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    waiting = status["not_yet_written"]
    assert (waiting["events"], waiting["why"], waiting["command"]) == (1, "a merge is in progress",
                                                                       "git merge --continue")
    assert "1 acknowledged change(s) wait" in run_wb(repo, "status").stdout
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""  # nothing written in the tree
    abort = subprocess.run(["git", "merge", "--abort"], cwd=repo, capture_output=True, text=True)
    assert abort.returncode == 0, abort.stderr
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""
    assert run_wb(repo, "note", "after the merge").returncode == 0
    assert_sound(repo, acknowledged=["during the merge", "after the merge"])


def test_bisect_reset_after_a_write_during_bisect(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    first = run_git(repo, "rev-parse", "HEAD").strip()
    for i in range(3):
        (repo / "app.py").write_text(f"print({i})\n")
        run_git(repo, "commit", "-q", "-am", f"change {i}")
    run_git(repo, "bisect", "start", "HEAD", first)
    note = run_wb(repo, "note", "found while bisecting")
    assert note.returncode == 0
    reset = subprocess.run(["git", "bisect", "reset"], cwd=repo, capture_output=True, text=True)
    assert reset.returncode == 0, reset.stderr
    assert run_wb(repo, "status").returncode == 0
    assert run_wb(repo, "note", "after bisect").returncode == 0
    assert_sound(repo, acknowledged=["found while bisecting", "after bisect"])


def test_a_write_on_a_detached_head_then_back_to_the_branch(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    (repo / "app.py").write_text("print(2)\n")
    run_git(repo, "commit", "-q", "-am", "two")
    run_git(repo, "checkout", "-q", "--detach", "HEAD~1")
    note = run_wb(repo, "note", "while detached")
    assert note.returncode == 0 and "HEAD is detached" in note.stderr
    back = subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, capture_output=True, text=True)
    assert back.returncode == 0, back.stderr
    assert run_wb(repo, "note", "on main again").returncode == 0
    assert_sound(repo, acknowledged=["while detached", "on main again"])
    assert committed_notes(repo, "main") == ["while detached", "on main again"]


def test_a_recorded_but_uncommitted_write_survives_checkout_of_wbs_files(repo: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert run_wb(repo, "init").returncode == 0
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    assert run_wb(repo, "note", "no identity yet").returncode == 0  # recorded, not committed
    run_git(repo, "checkout", "--", ".workbench")  # the user throws away "their" changes
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Back")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "back@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Back")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "back@example.invalid")
    assert run_wb(repo, "note", "identity set").returncode == 0
    assert_sound(repo, acknowledged=["no identity yet", "identity set"])


def _take_back_wbs_last_commit(repo: Path) -> None:
    """Note "before", then "acknowledged" (exit 0); then the last step of a user's `git stash push` that read
    HEAD before wb's commit: the branch, the index and the work tree moved back to that HEAD."""
    assert run_wb(repo, "note", "before").returncode == 0
    read_by_stash = run_git(repo, "rev-parse", "HEAD").strip()
    acked = run_wb(repo, "note", "acknowledged")
    assert acked.returncode == 0 and "noted" in acked.stdout
    wb_commit = run_git(repo, "rev-parse", "HEAD").strip()
    run_git(repo, "update-ref", "-m", "reset: moving to HEAD", "refs/heads/main", read_by_stash, wb_commit)
    run_git(repo, "read-tree", "-u", "--reset", read_by_stash)  # the work tree and index, as reset --hard
    assert committed_notes(repo)[-1] == "before"


def test_a_stash_that_moves_the_branch_back_over_wbs_commit_loses_nothing(bench, repo: Path) -> None:
    """`git stash push` (and `merge --abort`) read HEAD, then reset the branch and the work tree to it: when
    wb commits in between, the branch goes back over wb's commit ("reset: moving to HEAD" at the older sha in
    the reflog) and the acknowledged note is on no branch. Seen in tools/gitrace.py; here the user's git's
    last step is done by hand, exactly as it lands. The next wb write writes the note again."""
    _take_back_wbs_last_commit(repo)
    after = run_wb(repo, "note", "after")
    assert after.returncode == 0, after.stderr
    assert "wrote again 1 acknowledged event" in after.stderr
    assert_sound(repo, acknowledged=["before", "acknowledged", "after"])
    assert committed_notes(repo)[-2:] == ["acknowledged", "after"]
    again = run_wb(repo, "note", "later")  # once written again, never twice
    assert again.returncode == 0 and "wrote again" not in again.stderr
    assert committed_notes(repo).count("acknowledged") == 1


def test_doctor_finds_and_repairs_a_commit_the_users_git_took_back(bench, repo: Path) -> None:
    _take_back_wbs_last_commit(repo)
    found = run_wb(repo, "doctor", "--json")
    assert found.returncode != 0 and "taken_back" in found.stdout, found.stdout
    fixed = run_wb(repo, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert_sound(repo, acknowledged=["before", "acknowledged"])
    assert "taken_back" not in run_wb(repo, "doctor", "--json").stdout


def test_merge_abort_after_the_merge_driver_ran_is_no_hand_edit(bench, repo: Path) -> None:
    """A conflicted `git merge` runs wb's merge driver on state.md (which caches the merge it wrote); the user
    aborts: git puts back HEAD's state.md, which is then what is committed — not an edit by hand. Seen in
    tools/gitrace.py as `wb replay --verify` exit 5 while validate and doctor said healthy."""
    (repo / "src.py").write_text("print('v0')\n")
    run_git(repo, "add", "src.py")
    run_git(repo, "commit", "-q", "-m", "src")
    run_git(repo, "checkout", "-q", "-b", "other")
    assert run_wb(repo, "note", "on other").returncode == 0
    (repo / "src.py").write_text("print('other')\n")
    run_git(repo, "commit", "-q", "-am", "other's src")
    run_git(repo, "checkout", "-q", "main")
    assert run_wb(repo, "note", "on main").returncode == 0
    (repo / "src.py").write_text("print('main')\n")
    run_git(repo, "commit", "-q", "-am", "main's src")
    merged = subprocess.run(["git", "merge", "-q", "--no-edit", "other"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode != 0 and "src.py" in merged.stdout + merged.stderr  # stopped on src.py alone
    run_git(repo, "merge", "--abort")
    assert run_git(repo, "status", "--porcelain") == ""
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    assert status["unrecorded_human_edits"] == []
    assert_sound(repo, acknowledged=["on main"])
    assert run_wb(repo, "note", "after").returncode == 0
    events = [json.loads(x) for x in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert "human.edit" not in [e["type"] for e in events]


def test_a_cache_of_a_merge_never_kept_is_no_hand_edit(bench, repo: Path) -> None:
    """What the merge driver leaves when the user aborts the merge, made directly: wb's state cache names a
    merged state.md (stat unknown, as the driver writes it) while the file is HEAD's again."""
    from workbench.store import caches
    from workbench.store.workbench import Workbench

    assert run_wb(repo, "note", "on main").returncode == 0
    wb = Workbench.discover(repo)
    _node, state, body = wb.parse_state((repo / ".workbench" / "state.md").read_bytes())
    merged_body = body + "\n### 2026-01-01T00:00:00.000Z · agent\n\nfrom the branch the user did not merge\n"
    caches.write_state_cache(wb.paths, b"---\nmerged: by the driver\n---\n" + merged_body.encode(), state,
                             merged_body, stat=False)
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    assert status["unrecorded_human_edits"] == []
    assert_sound(repo, acknowledged=["on main"])
    assert run_wb(repo, "note", "after").returncode == 0
    events = [json.loads(x) for x in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert "human.edit" not in [e["type"] for e in events]


def test_a_wb_command_mid_way_through_the_users_checkout_waits_for_it(repo: Path) -> None:
    """A checkout of the user's (holding git's index.lock) may have .workbench/ half rewritten when a wb
    command starts: wb waits for the user's git to finish instead of saying the workbench is gone (CI's
    gitrace saw `wb note` exit 1 with "no workbench in the work tree" there)."""
    import shutil
    import threading

    assert run_wb(repo, "init").returncode == 0
    aside = repo.parent / "wb-aside"
    shutil.move(str(repo / ".workbench"), aside)  # git has removed the files it is about to write again
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")  # ... while it holds the index lock

    def the_checkout_ends() -> None:
        time.sleep(0.5)
        shutil.move(str(aside), repo / ".workbench")
        lock.unlink()

    ender = threading.Thread(target=the_checkout_ends)
    ender.start()
    note = run_wb(repo, "note", "during the checkout")
    ender.join()
    assert note.returncode == 0, note.stderr
    assert_sound(repo, acknowledged=["during the checkout"])


def test_a_workbench_missing_with_no_git_at_work_is_named_at_once(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    run_git(repo, "rm", "-r", "-q", "--cached", "--", ".workbench")
    run_git(repo, "reset", "-q")
    import shutil

    shutil.rmtree(repo / ".workbench")
    note = run_wb(repo, "note", "x")
    assert note.returncode != 0
    assert "missing from the work tree" in note.stderr and "git checkout HEAD -- .workbench" in note.stderr
