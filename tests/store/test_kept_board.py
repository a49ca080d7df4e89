"""Issue 33, on the files backend (store/keptboard.py): the board a write wrote is kept by its process and taken,
instead of parsed, by the next load that finds board.json holding exactly those bytes. Nothing a verb hands its
caller is shared with what is kept; a hand edit, or another process's write, between two writes is read (and a
hand edit validated) as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import files_only_because, run_git, run_wb
from workbench.api import Bench
from workbench.model import boardfile, reducer
from workbench.model.boardfile import encode_board
from workbench.store import workbench as workbench_module

pytestmark = files_only_because("board.json as a file (SQLite keeps its board in store/sqliteboard.py)")


def _no_guard(repo: Path) -> None:
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("human_guard_seconds: 5", "human_guard_seconds: 0"))
    run_git(repo, "commit", "-q", "-am", "no guard")


def _folded(bench: Bench) -> bytes:
    """board.json as the whole log folds it."""
    docs = reducer.fold(event for _line, event in bench.wb.log.iter_all())
    assert docs is not None
    return encode_board(docs.board)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    parsed: list[bytes] = []

    def parse_board(raw: bytes, *, own: bool = False) -> dict:
        parsed.append(raw)
        return boardfile.parse_board(raw, own=own)

    monkeypatch.setattr(workbench_module, "parse_board", parse_board)
    return parsed


def test_a_second_write_takes_the_board_the_first_wrote(bench: Bench, monkeypatch: pytest.MonkeyPatch) -> None:
    bench.import_tasks([{"title": f"task {i}"} for i in range(30)])
    parsed = _count_parses(monkeypatch)
    for i in range(3):
        bench.add_task(f"more {i}")
    assert parsed == []  # each load took the board the write before it kept (the import's, then each add's)
    assert (bench.root / ".workbench" / "board.json").read_bytes() == _folded(bench)
    assert bench.list_tasks()[-1]["title"] == "more 2"
    assert bench.validate() == []


def test_what_a_caller_holds_is_not_what_the_next_write_reads(bench: Bench) -> None:
    """A caller that changes the task a verb returned changes nothing wb writes next."""
    bench.import_tasks([{"title": f"task {i}"} for i in range(30)])
    task = bench.add_task("mine", acceptance=["true"], depends_on=["T-001"])
    task["acceptance"].append("rm -rf /")
    task["title"] = "changed by the caller"
    started = bench.start_task("T-002")
    started["acceptance"].append("rm -rf /")
    started["depends_on"].append("T-030")
    bench.add_task("next")  # takes the kept board
    for tid in (task["id"], "T-002"):  # takes the kept board, and re-encodes the task the caller changed
        bench.block_task(tid, "waiting")
    assert (bench.root / ".workbench" / "board.json").read_bytes() == _folded(bench)
    board = bench.wb.load().docs.board
    for tid, title, acceptance, depends in ((task["id"], "mine", ["true"], ["T-001"]), ("T-002", "task 1", [], [])):
        found = reducer.find_task(board, tid)
        assert found is not None
        assert (found["title"], found["acceptance"], found["depends_on"]) == (title, acceptance, depends)
    assert bench.validate() == []


def test_a_write_by_another_process_is_read_not_the_kept_board(bench: Bench) -> None:
    bench.import_tasks([{"title": f"task {i}"} for i in range(30)])
    bench.add_task("here")  # keeps its board
    r = run_wb(bench.root, "task", "add", "from the command line")
    assert r.returncode == 0, r.stderr
    added = bench.add_task("here again")
    assert added["id"] == "T-033"  # past the other process's T-032
    titles = [t["title"] for t in bench.wb.load().docs.board["tasks"][-3:]]
    assert titles == ["here", "from the command line", "here again"]
    assert (bench.root / ".workbench" / "board.json").read_bytes() == _folded(bench)


def test_a_hand_edit_between_two_writes_is_read_and_recorded(bench: Bench, repo: Path) -> None:
    _no_guard(repo)
    bench.import_tasks([{"title": f"task {i}"} for i in range(30)])
    bench.add_task("before the edit")  # keeps its board
    path = repo / ".workbench" / "board.json"
    path.write_bytes(path.read_bytes().replace(b'"before the edit"', b'"edited by hand"'))
    bench.add_task("after the edit")
    edits = bench.log(type="human.edit")
    assert len(edits) == 1 and edits[0]["payload"]["file"] == "board.json"
    titles = [t["title"] for t in bench.list_tasks()[-2:]]
    assert titles == ["edited by hand", "after the edit"]
    assert path.read_bytes() == _folded(bench)


def test_a_hand_edit_that_breaks_the_schema_between_two_writes_is_refused(bench: Bench, repo: Path) -> None:
    _no_guard(repo)
    bench.import_tasks([{"title": f"task {i}"} for i in range(30)])
    bench.add_task("before the edit")  # keeps its board
    path = repo / ".workbench" / "board.json"
    board = json.loads(path.read_bytes())
    board["tasks"][3]["status"] = "finished-ish"  # not a status
    path.write_text(json.dumps(board, indent=2) + "\n")
    with pytest.raises(Exception, match="status"):
        bench.add_task("refused")
    assert "refused" not in [t["title"] for t in json.loads(path.read_bytes())["tasks"]]
