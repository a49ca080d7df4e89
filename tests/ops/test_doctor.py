"""wb doctor finds and, with --fix, repairs: torn tail, snapshots behind the log, uncommitted changes, temp
files; a broken hash chain is reported with its seq and never rewritten."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import files_only, run_git, run_wb, spawn_wb
from workbench.api import Bench, init


def _doctor(repo: Path, *args: str) -> tuple[int, dict]:
    proc = run_wb(repo, "doctor", "--json", *args)
    return proc.returncode, json.loads(proc.stdout)


def _codes(report: dict) -> set[str]:
    return {f["code"] for f in report["findings"]}


def test_healthy_workbench(repo: Path) -> None:
    init(repo)
    Bench.open(repo).add_task("x")
    code, report = _doctor(repo)
    assert code == 0 and report == {"healthy": True, "findings": []}


@files_only  # the temp files of atomic writes: SQLite writes none
def test_a_crashs_temp_file_alone_is_harmless_and_doctor_healthy_as_validate_says(repo: Path) -> None:
    """A write killed between its temp file and the rename leaves `.tmp-…` beside the file: wb never reads it,
    so `wb doctor` says healthy (as `wb validate` does: found by tests/reliability/gitfuzz.py, whose invariant is
    that they agree), lists it as harmless, and `--fix` removes it."""
    init(repo)
    Bench.open(repo).note("kept")
    temp = repo / ".workbench" / ".tmp-0123456789ab-state.md"
    temp.write_text("half a state.md")
    assert run_wb(repo, "validate").returncode == 0
    code, report = _doctor(repo)
    assert code == 0 and "temp_files" in _codes(report), report
    shown = run_wb(repo, "doctor")
    assert shown.returncode == 0 and "harmless; wb doctor --fix removes it" in shown.stdout
    assert run_wb(repo, "note", "next").returncode == 0  # the next write succeeds beside it
    code, report = _doctor(repo, "--fix")
    assert code == 0 and not temp.exists()


@files_only  # events.jsonl's torn tail and temp files: SQLite appends in a transaction (test_doctor_sqlite.py)
def test_torn_tail_and_temp_files_are_repaired(repo: Path) -> None:
    init(repo)
    Bench.open(repo).note("kept")
    log = repo / ".workbench" / "events.jsonl"
    good = log.read_bytes()
    with open(log, "ab") as fh:
        fh.write(b'{"schema_version":1,"seq":3,"id":"01')
    (repo / ".workbench" / ".tmp-x-state.md").write_text("half")
    code, report = _doctor(repo)
    assert code == 1 and {"torn_tail", "temp_files"} <= _codes(report)
    code, report = _doctor(repo, "--fix")
    assert code == 0, report
    assert log.read_bytes() == good
    assert not (repo / ".workbench" / ".tmp-x-state.md").exists()
    assert run_wb(repo, "validate").returncode == 0
    assert _doctor(repo)[0] == 0


@files_only  # a kill between the append and the snapshots' rename, and git; on SQLite: test_doctor_sqlite.py
def test_snapshots_behind_the_log_are_caught_up_and_committed(repo: Path) -> None:
    init(repo)
    Bench.open(repo).add_task("first")
    env = {**os.environ, "WB_FAULT": "after_event_append"}
    killed = spawn_wb(repo, "task", "add", "second", env=env)
    assert killed.returncode == -9
    code, report = _doctor(repo)
    # issue 29: healthy — the next write succeeds and catches up by itself — with what waits listed
    assert code == 0 and {"snapshots_behind", "uncommitted"} <= _codes(report)
    assert all(f["waits"] for f in report["findings"]), report
    code, report = _doctor(repo, "--fix")
    assert code == 0, report
    titles = [t["title"] for t in json.loads((repo / ".workbench" / "board.json").read_text())["tasks"]]
    assert titles == ["first", "second"]  # the appended event was the truth: replayed into the snapshot
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""
    assert run_wb(repo, "replay", "--verify").returncode == 0


@files_only  # a line of events.jsonl; on SQLite a row is a record or none
def test_a_damaged_line_is_a_finding_of_the_doctor_not_its_refusal(repo: Path) -> None:
    """A whole line that is not an event (no seq) stopped `wb doctor` itself: exit 5, nothing on stdout, and the
    one line said "run `wb doctor`". It is a finding, with what to do, like a broken chain."""
    init(repo)
    Bench.open(repo).note("one")
    log = repo / ".workbench" / "events.jsonl"
    log.write_bytes(log.read_bytes() + b'{"not": "an event"}\n')
    for args in ((), ("--fix",)):
        code, report = _doctor(repo, *args)
        assert code == 1, report
        messages = [f["message"] for f in report["findings"] if f["code"] == "log_damaged"]
        assert messages and "damaged line" in messages[0] and "run `wb doctor`" not in messages[0], report


@files_only  # edits events.jsonl; the SQLite one: test_doctor_sqlite.py (an event row damaged with sqlite3)
def test_broken_hash_chain_is_reported_not_fixed(repo: Path) -> None:
    init(repo)
    bench = Bench.open(repo)
    for text in ("one", "two", "three"):
        bench.note(text)
    log = repo / ".workbench" / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"one"', '"ONE"')  # seq 2; seq 3's prev no longer matches
    log.write_text("".join(lines))
    damaged = log.read_bytes()
    code, report = _doctor(repo, "--fix")
    assert code == 1
    messages = [f["message"] for f in report["findings"] if f["code"] == "log_damaged"]
    assert messages and "seq 3" in messages[0]
    assert log.read_bytes() == damaged


def test_doctor_outside_a_workbench_is_one_line(tmp_path: Path) -> None:
    proc = run_wb(tmp_path, "doctor")
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1


@files_only  # a hand edit of board.json committed with git; SQLite has no hand edits: test_doctor_sqlite.py
def test_a_snapshot_the_log_disagrees_with_is_recorded_not_reverted(repo: Path) -> None:
    """board.json holds a title no event gave it, and wb's cache was made to hold the same bytes (so no load
    sees a hand edit): `doctor --fix` records the difference as human.edit and keeps the file; before, it
    wrote the log's board over it."""
    init(repo)
    Bench.open(repo).add_task("Parser")
    board_path = repo / ".workbench" / "board.json"
    board = json.loads(board_path.read_text())
    board["tasks"][0]["title"] = "Not what the log says"
    data = (json.dumps(board, indent=2) + "\n").encode()
    board_path.write_bytes(data)
    cache = repo / ".workbench" / ".cache" / "board.json"
    if cache.exists():
        cache.write_bytes(data)
    run_git(repo, "commit", "-qam", "a title by hand")
    code, report = _doctor(repo)  # what the next write records by itself: named, and healthy as validate says
    assert code == 0 and _codes(report) & {"snapshots_disagree", "hand_edit"}, report
    assert run_wb(repo, "validate").returncode == 0
    code, report = _doctor(repo, "--fix")
    assert code == 0, report
    assert json.loads(board_path.read_text())["tasks"][0]["title"] == "Not what the log says"
    events = [json.loads(x) for x in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert [e["payload"]["file"] for e in events if e["type"] == "human.edit"] == ["board.json"]
    assert run_wb(repo, "replay", "--verify").returncode == 0
    assert _doctor(repo) == (0, {"healthy": True, "findings": []})
