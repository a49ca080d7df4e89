"""The first validate, doctor or replay where `<git dir>/wb/cache` is missing (a fresh clone, a lost cache) reads
each sealed segment once (issue 33): the check of a segment folds it on the way, that fold is recorded, and the
load that compares the snapshots with the log takes the fold the replay just made instead of folding it all
again. What they report is unchanged; a second run reads no segment in full."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import about_files, make_repo, run_wb
from workbench.model import segments
from workbench.store import eventlog, logcheck

pytestmark = about_files  # the sealed segments of events.jsonl (SQLite keeps every event in one table)


def sealed_workbench(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    assert run_wb(repo, "init").returncode == 0
    with open(repo / ".workbench" / "config.yaml", "a", encoding="utf-8") as fh:
        fh.write("log:\n  segment_events: 5\n")
    for i in range(14):
        out = run_wb(repo, "note", f"n {i}")
        assert out.returncode == 0, out.stderr
    assert len(list((repo / ".workbench" / "log").glob("*.jsonl"))) >= 2
    return repo


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each sealed segment is read and checked in full (check_body), by name."""
    counted: Counter[str] = Counter()

    def counting(raw: bytes, header: segments.Header) -> list:
        counted[header.name] += 1
        return segments.check_body(raw, header)

    monkeypatch.setattr(logcheck, "check_body", counting)
    monkeypatch.setattr(eventlog, "check_body", counting)
    return counted


@pytest.mark.parametrize("verb", ["validate", "doctor", "replay"])
def test_a_first_run_without_the_cache_reads_each_segment_once(tmp_path: Path, reads: Counter[str],
                                                               verb: str) -> None:
    from workbench.api import Bench

    repo = sealed_workbench(tmp_path)
    names = sorted(p.name for p in (repo / ".workbench" / "log").glob("*.jsonl"))
    shutil.rmtree(repo / ".git" / "wb" / "cache")
    reads.clear()  # the notes that made the workbench read some (the test runs wb in this process)
    bench = Bench.open(repo)
    if verb == "validate":
        assert bench.validate() == []
    elif verb == "doctor":
        report = bench.doctor()
        assert report.healthy, [f.message for f in report.findings]
    else:
        assert bench.replay().mismatches == []
    assert reads == Counter(names)
    if verb != "replay":  # what a check recorded: the next validate trusts every segment, and its fold
        reads.clear()
        assert Bench.open(repo).validate() == []
        assert not reads


def test_a_hand_edit_committed_with_plain_git_is_still_found_in_a_fresh_clone(tmp_path: Path) -> None:
    """The fold the replay hands to the load is the whole log's: a board.json edited and committed by hand, in a
    clone without the cache, is still told apart from what the log rebuilds."""
    from tests.conftest import run_git
    from workbench.api import Bench

    repo = sealed_workbench(tmp_path)
    run_wb(repo, "task", "add", "first")
    board = repo / ".workbench" / "board.json"
    board.write_text(board.read_text().replace('"first"', '"edited by hand"'))
    run_git(repo, "commit", "-qam", "hand edit")
    shutil.rmtree(repo / ".git" / "wb" / "cache")
    report = Bench.open(repo).replay()
    assert report.unrecorded and "board.json" in report.unrecorded[0]
