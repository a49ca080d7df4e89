"""`git pull --rebase` (and rebase, cherry-pick) of wb's commits: a rebase applies them as patches, one by one;
the log must come out one gap-free, replayable sequence with unique task ids, the board and state agreeing.

Before: two clones each added a task and a note; after one pulled with --rebase the log held two
`task.add T-001` out of order and `wb replay --verify` failed while `wb validate` and `wb doctor` said healthy.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import about_git, make_repo, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound, committed_events, committed_notes

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _two_clones(tmp_path: Path) -> tuple[Path, Path]:
    remote = tmp_path / "remote.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a = make_repo(tmp_path / "a")
    assert run_wb(a, "init").returncode == 0
    run_git(a, "remote", "add", "origin", str(remote))
    run_git(a, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    run_git(tmp_path, "clone", "-q", str(remote), str(b))
    return a, b


def _board(repo: Path) -> dict:
    return json.loads((repo / ".workbench" / "board.json").read_text())


def test_pull_rebase_of_two_clones_that_each_added_a_task(tmp_path: Path) -> None:
    a, b = _two_clones(tmp_path)
    assert run_wb(a, "task", "add", "from A").returncode == 0
    assert run_wb(a, "note", "note A").returncode == 0
    run_git(a, "push", "-q", "origin", "main")
    assert run_wb(b, "task", "add", "from B").returncode == 0
    assert run_wb(b, "task", "start", "T-001").returncode == 0  # B's own task, by the id B was told
    assert run_wb(b, "note", "note B").returncode == 0
    run_git(b, "pull", "-q", "--rebase", "origin", "main")
    assert_sound(b, acknowledged=["note A", "note B"])
    tasks = {t["id"]: t for t in _board(b)["tasks"]}
    assert sorted(tasks) == ["T-001", "T-002"]
    assert tasks["T-001"]["title"] == "from A" and tasks["T-001"]["status"] == "todo"  # published: unchanged
    assert tasks["T-002"]["title"] == "from B" and tasks["T-002"]["status"] == "in_progress"  # followed
    events = [json.loads(x) for x in (b / ".workbench" / "events.jsonl").read_text().splitlines()]
    adds = [e["payload"]["task"]["id"] for e in events if e["type"] == "task.add"]
    assert adds == ["T-001", "T-002"]
    # upstream's events keep their place: B's come after them
    assert [e["payload"].get("text") for e in events if e["type"] == "note.add"] == ["note A", "note B"]
    assert committed_notes(b) == ["note A", "note B"]
    # and it pushes: A pulls it back and agrees
    run_git(b, "push", "-q", "origin", "main")
    run_git(a, "pull", "-q", "--rebase", "origin", "main")
    assert_sound(a, acknowledged=["note A", "note B"])
    assert _board(a) == _board(b)


def test_a_single_cherry_pick_is_found_by_validate_and_rebuilt_by_doctor(tmp_path: Path) -> None:
    a, _b = _two_clones(tmp_path)
    run_git(a, "checkout", "-q", "-b", "side")
    assert run_wb(a, "task", "add", "on side").returncode == 0
    picked = run_git(a, "rev-parse", "HEAD").strip()
    run_git(a, "checkout", "-q", "main")
    assert run_wb(a, "task", "add", "on main").returncode == 0
    run_git(a, "cherry-pick", picked)
    validate = run_wb(a, "validate")
    replay = run_wb(a, "replay", "--verify")
    # whatever git's cherry-pick produced, validate finds what replay finds
    assert (validate.returncode == 0) == (replay.returncode == 0), validate.stdout + replay.stdout
    if validate.returncode != 0:
        assert run_wb(a, "doctor", "--fix").returncode == 0
    assert_sound(a)
    listed = json.loads(run_wb(a, "task", "list", "--json").stdout)
    assert sorted(t["title"] for t in listed) == ["on main", "on side"]
    assert len({t["id"] for t in listed}) == 2
    assert run_wb(a, "note", "after the pick").returncode == 0  # which brings board.json up to the log
    assert sorted(t["title"] for t in _board(a)["tasks"]) == ["on main", "on side"]
    assert "human.edit" not in {e["type"] for e in committed_events(a)}, "the pick was taken for a person's edit"


def test_a_rebased_commit_holding_several_events_keeps_the_chain(tmp_path: Path) -> None:
    """One commit of B's carries three events (the user committed wb's files by hand after writes with
    commits off): the pick appends them after A's, each chained to the line before it as written."""
    a, b = _two_clones(tmp_path)
    assert run_wb(a, "note", "note A").returncode == 0
    run_git(a, "push", "-q", "origin", "main")
    config = b / ".workbench" / "config.yaml"
    every = config.read_text()
    assert "  commit: every" in every
    config.write_text(every.replace("  commit: every", "  commit: \"off\"", 1))
    for text in ("B one", "B two", "B three"):
        assert run_wb(b, "note", text).returncode == 0
    config.write_text(every)
    run_git(b, "add", ".workbench")
    run_git(b, "commit", "-q", "-m", "B's notes, committed by hand")
    run_git(b, "pull", "-q", "--rebase", "origin", "main")
    assert_sound(b, acknowledged=["note A", "B one", "B two", "B three"])
    assert run_wb(b, "replay", "--verify").returncode == 0
