"""The first write without `<git dir>/wb/cache` (a fresh clone, a lost cache) finds exactly the hand edits a write
with the cache finds (issue 33). The cache says which bytes wb last wrote here; without it, the write folds the
log (taking the events no reducer reads by their stamp, unparsed) and compares. A hand edit that was committed —
with plain git, or in another clone and pulled — is a hand edit all the same, with the cache or without it.

Each case is made once, then copied: one copy keeps the cache, the other loses it, and both make the same write."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import about_files, make_repo, run_git, run_wb
from workbench.model import reducer
from workbench.store.workbench import Workbench

pytestmark = about_files  # hand edits of .workbench/'s files, and the sealed segments of events.jsonl


def sealed_workbench(path: Path) -> Path:
    """A workbench whose log is sealed into segments that hold tasks, notes and many agent tool calls (the events
    no reducer reads), with edits by hand allowed at once (human_guard_seconds: 0)."""
    from workbench.api import Bench

    repo = make_repo(path)
    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("human_guard_seconds: 5", "human_guard_seconds: 0")
                      + "log:\n  segment_events: 20\n")
    run_git(repo, "commit", "-qam", "config")
    bench = Bench.open(repo)
    for i in range(3):
        bench.add_task(f"task {i}")
        bench.note(f"note {i}")
        bench.record_events([{"type": "agent.tool_call",
                              "payload": {"tool": "Bash", "agent": "test", "agent_session": "s-1",
                                          "input": {"command": f"pytest -q tests/test_{i}_{k}.py"},
                                          "output": {"exit": 0, "tail": f"{k} passed"}}} for k in range(15)])
    assert len(list((repo / ".workbench" / "log").glob("*.jsonl"))) >= 2
    assert run_git(repo, "status", "--porcelain") == ""
    return repo


def edit_board(repo: Path, title: str) -> None:
    board = repo / ".workbench" / "board.json"
    data = json.loads(board.read_text())
    data["tasks"][0]["title"] = title
    board.write_text(json.dumps(data, indent=2) + "\n")


def verdicts(repo: Path) -> list[tuple[str, str, object]]:
    """The hand edits the next write records: (type, file, payload without the file name)."""
    before = Workbench(repo).log.tail().seq
    out = run_wb(repo, "note", "--actor", "agent", "the next write")
    assert out.returncode == 0, out.stderr
    events = [e for _line, e in Workbench(repo).log.iter_all() if e["seq"] > before]
    return [(e["type"], e["payload"]["file"], {k: v for k, v in e["payload"].items() if k != "file"})
            for e in events if e["type"] in ("human.edit", "agent.edit")]


def warm_and_cold(tmp_path: Path, repo: Path) -> tuple[list, list]:
    warm, cold = tmp_path / "warm", tmp_path / "cold"
    shutil.copytree(repo, warm, symlinks=True)
    shutil.copytree(repo, cold, symlinks=True)
    assert (cold / ".git" / "wb" / "cache").is_dir()
    shutil.rmtree(cold / ".git" / "wb" / "cache")
    return verdicts(warm), verdicts(cold)


def clean(tmp_path: Path, repo: Path) -> None:
    pass


def uncommitted_edit(tmp_path: Path, repo: Path) -> None:
    edit_board(repo, "renamed in the editor")


def committed_edit(tmp_path: Path, repo: Path) -> None:
    edit_board(repo, "renamed and committed with plain git")
    run_git(repo, "commit", "-qam", "rename a task")


def pulled_write(tmp_path: Path, repo: Path) -> None:
    """Another clone's wb writes (sealed segments among them), pulled."""
    other = tmp_path / "other"
    run_git(tmp_path, "clone", "-q", str(repo), str(other))
    for i in range(3):
        assert run_wb(other, "task", "add", f"from the other clone {i}").returncode == 0
        assert run_wb(other, "note", f"other note {i}").returncode == 0
    run_git(repo, "pull", "-q", "--no-rebase", str(other), "HEAD")


def pulled_edit(tmp_path: Path, repo: Path) -> None:
    """Another clone's hand edit, committed there with plain git, pulled."""
    other = tmp_path / "other"
    run_git(tmp_path, "clone", "-q", str(repo), str(other))
    assert run_wb(other, "task", "add", "from the other clone").returncode == 0
    edit_board(other, "renamed in the other clone")
    run_git(other, "commit", "-qam", "rename a task there")
    run_git(repo, "pull", "-q", "--no-rebase", str(other), "HEAD")


def pulled_edit_after_a_pull(tmp_path: Path, repo: Path) -> None:
    """As pulled_edit, after an earlier pull whose first write folded the log and kept the sealed chain's fold
    (store/keptfold.py): the second pull's sealed segments are folded on top of the kept one."""
    other = tmp_path / "other"
    run_git(tmp_path, "clone", "-q", str(repo), str(other))
    for i in range(2):
        assert run_wb(other, "task", "add", f"from the other clone {i}").returncode == 0
    run_git(repo, "pull", "-q", "--ff-only", str(other), "HEAD")
    assert run_wb(repo, "note", "between the pulls").returncode == 0
    assert (repo / ".git" / "wb" / "cache" / "fold.json").is_file()
    run_git(other, "pull", "-q", "--ff-only", str(repo), "HEAD")
    from workbench.api import Bench

    Bench.open(other).record_events([{"type": "agent.tool_call",
                                      "payload": {"tool": "Bash", "agent": "test", "agent_session": "s-2",
                                                  "input": {"command": f"pytest -q tests/test_{k}.py"},
                                                  "output": {"exit": 0, "tail": "ok"}}} for k in range(45)])
    assert run_wb(other, "task", "add", "later from the other clone").returncode == 0
    edit_board(other, "renamed in the other clone, after a pull")
    run_git(other, "commit", "-qam", "rename a task there")
    run_git(repo, "pull", "-q", "--ff-only", str(other), "HEAD")


CASES: dict[str, tuple[Callable[[Path, Path], None], str | None]] = {
    "a clean board": (clean, None),
    "an uncommitted hand edit": (uncommitted_edit, "renamed in the editor"),
    "a hand edit committed with plain git": (committed_edit, "renamed and committed with plain git"),
    "a pulled commit of another clone's wb": (pulled_write, None),
    "a pulled commit of another clone's hand edit": (pulled_edit, "renamed in the other clone"),
    "another clone's hand edit, pulled after a pull": (pulled_edit_after_a_pull,
                                                       "renamed in the other clone, after a pull"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_warm_and_cold_find_the_same_hand_edits(tmp_path: Path, case: str) -> None:
    make, title = CASES[case]
    repo = sealed_workbench(tmp_path / "repo")
    make(tmp_path, repo)
    warm, cold = warm_and_cold(tmp_path, repo)
    assert warm == cold
    if title is None:
        assert warm == []
    else:
        assert [(t, f) for t, f, _ in warm] == [("human.edit", "board.json")]
        assert [task["title"] for task in warm[0][2]["upsert"]] == [title]  # type: ignore[index]
    for copy in (tmp_path / "warm", tmp_path / "cold"):
        verify = run_wb(copy, "replay", "--verify")
        assert verify.returncode == 0, verify.stdout + verify.stderr


def test_the_fold_by_stamps_is_the_whole_fold(tmp_path: Path) -> None:
    """At every seq, the fold that takes the events no reducer reads by their stamp is the fold that parses them
    all; a line not in wb's own spelling is parsed, whatever its type."""
    repo = sealed_workbench(tmp_path / "repo")
    wb = Workbench(repo)
    events = [event for _line, event in wb.log.iter_all()]
    assert sum(reducer.stamp_only(e["type"]) for e in events) > len(events) // 2
    for last in range(1, len(events) + 1):
        whole = reducer.fold((e for e in events if e["seq"] <= last), empty_ts="1970-01-01T00:00:00Z")
        lazy = reducer.fold(wb.log.iter_for_fold(reducer.stamp_only, last), empty_ts="1970-01-01T00:00:00Z")
        assert whole is not None and lazy is not None
        assert (lazy.state, lazy.body, lazy.board, lazy.sealed) == (whole.state, whole.body, whole.board,
                                                                    whole.sealed), last
