"""A write killed after its events reached the pending journal and before events.jsonl (fault point
`after_pending_append`). The journal is fsynced before the log append, so the change is kept: the next load
folds it into the snapshots, and the next write appends it to the log. faultrun's longer run once killed
`wb resume` there at random, and `wb validate` then exited 5 ("state.md: last_event: snapshot has 20, the log
gives 19"), because replay compared the log alone with snapshots that hold the journal's events too."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import files_only, run_wb, spawn_wb


def log_seqs(repo: Path) -> list[int]:
    return [json.loads(line)["seq"] for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]


@files_only  # the pending journal and events.jsonl are the files backend's (SQLite: one database transaction)
def test_a_write_killed_after_the_pending_journal_validates_and_lands_once(bench, repo: Path) -> None:
    assert run_wb(repo, "note", "first").returncode == 0
    before = log_seqs(repo)

    killed = spawn_wb(repo, "note", "killed in flight", env={"WB_FAULT": "after_pending_append"})
    assert killed.returncode == -9, killed.stderr
    assert log_seqs(repo) == before  # not in events.jsonl: in the pending journal alone

    for args in (["validate"], ["replay", "--verify"]):
        proc = spawn_wb(repo, *args)
        assert proc.returncode == 0, proc.stderr + proc.stdout
    status = json.loads(spawn_wb(repo, "status", "--json").stdout)
    assert status["not_yet_written"]["events"] == 1, status["not_yet_written"]  # kept, waiting for the next write

    assert run_wb(repo, "note", "next").returncode == 0  # the next write appends it, then its own
    assert log_seqs(repo) == [*before, before[-1] + 1, before[-1] + 2]
    texts = [json.loads(line)["payload"].get("text") for line in
             (repo / ".workbench" / "events.jsonl").read_text().splitlines()[-2:]]
    assert texts == ["killed in flight", "next"]
    for args in (["validate"], ["replay", "--verify"]):
        assert spawn_wb(repo, *args).returncode == 0
