"""`wb demo [DIR]`, the README's main job: the whole story runs, every yield is shown with the command that
resumes it, and the repository it leaves is a valid, complete workbench."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import files_only_because, run_git


@files_only_because("the demo's files and git log; the demo on SQLite: tests/store/test_sqlite_harness.py")
def test_the_demo_runs_the_whole_session_and_leaves_a_valid_workbench(tmp_path: Path, wb) -> None:
    target = tmp_path / "demo"
    r = wb(tmp_path, "demo", str(target))
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    for line in ("$ wb run 'Ship the greeting change' --plan plan.yaml", "(exit 3)",
                 "waiting for  approval_required:write-notes: wb resume --approve | wb resume --deny",
                 "$ wb resume --approve", "  wb resume --result-file RESULT.json", "$ wb task done T-001",
                 "snapshots match the event log", f"The demo repository stays at {target}"):
        assert line in out, line
    assert out.index("$ wb resume --approve") < out.index("$ wb resume --result")

    state = (target / ".workbench" / "state.md").read_text()
    assert "session: null" in state and "Shipped to staging" in state
    board = json.loads((target / ".workbench" / "board.json").read_text())
    assert [(t["id"], t["status"]) for t in board["tasks"]] == [("T-001", "done")]
    types = [json.loads(line)["type"] for line in (target / ".workbench" / "events.jsonl").read_text().splitlines()]
    for kind in ("session.start", "approval.requested", "approval.granted", "tool.result", "session.complete"):
        assert kind in types, kind
    assert types.index("session.complete") > types.index("approval.granted")
    last, handoff = run_git(target, "log", "-2", "--format=%s").splitlines()[::-1]
    assert last == "wb: note Shipped to staging; release notes in NOTES.md."
    # the demo ends with the handoff packet (issue 16), which names what the person has still to commit
    assert handoff == "wb: handoff: nothing open on the board: add the next task"
    packet = json.loads((target / ".workbench" / "handoff.json").read_text())
    assert packet["changed_files"]["uncommitted"] == ["NOTES.md", "plan.yaml"]
    assert (target / ".workbench" / "handoff.md").read_text().startswith("# Handoff\n")
    # the workbench is committed; what the plan's tool wrote, and the plan itself, are the user's to commit
    assert run_git(target, "status", "--porcelain").splitlines() == ["?? NOTES.md", "?? plan.yaml"]
    assert wb(target, "validate").returncode == 0


def test_the_demo_refuses_a_directory_that_is_not_empty(tmp_path: Path, wb, error_line) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine\n")
    r = wb(tmp_path, "demo", str(tmp_path / "full"))
    assert r.returncode == 2
    assert "is not empty" in error_line(r.stderr)
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine\n"
