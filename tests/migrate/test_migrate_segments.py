"""`wb migrate` moves a workbench from before sealed segments (one long events.jsonl) to segments: idempotent,
resumable after a kill -9 half-way, committed, with no schema_version change."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import WB_ARGV, files_only, make_repo, run_git, run_wb
from tests.store.test_segments import SMALL, assert_sound, segments


def _old_workbench(tmp_path: Path, notes: int) -> tuple[Path, list[str]]:
    """A workbench whose whole log is one events.jsonl (as a wb before segments kept it), threshold 5."""
    repo = make_repo(tmp_path / "repo")
    assert run_wb(repo, "init").returncode == 0
    texts = [f"old {i}" for i in range(notes)]
    for text in texts:
        assert run_wb(repo, "note", text).returncode == 0
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + SMALL)
    run_git(repo, "commit", "-qam", "a smaller segment size")
    assert segments(repo) == []
    return repo, texts


@files_only  # sealed log segments are files (SQLite keeps one table of events)
def test_migrate_seals_a_long_events_jsonl_and_a_second_run_has_nothing_to_do(tmp_path: Path) -> None:
    repo, texts = _old_workbench(tmp_path, 12)
    dry = run_wb(repo, "migrate", "--dry-run")
    assert dry.returncode == 0 and "segments" in dry.stdout and segments(repo) == []
    out = run_wb(repo, "migrate", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["changed"] and report["commit"]
    assert report["current"]["events.jsonl"] == 1  # no schema_version bump
    assert len(segments(repo)) == 2  # 13 events: two segments of five, three left in events.jsonl
    assert len((repo / ".workbench" / "events.jsonl").read_bytes().splitlines()) == 3
    assert_sound(repo, texts)
    again = run_wb(repo, "migrate")
    assert again.returncode == 0 and "nothing to migrate" in again.stdout


@files_only  # sealed log segments are files (SQLite keeps one table of events)
def test_migrate_killed_while_sealing_finishes_when_run_again(tmp_path: Path) -> None:
    repo, texts = _old_workbench(tmp_path, 12)
    env = dict(os.environ, WB_FAULT="before_tail_rewrite")
    killed = subprocess.run([*WB_ARGV, "migrate"], cwd=repo, env=env, capture_output=True, text=True)
    assert killed.returncode == -9
    assert run_wb(repo, "replay", "--verify").returncode == 0  # the segments and the old copy read as one log
    out = run_wb(repo, "migrate")
    assert out.returncode == 0, out.stderr
    assert len(segments(repo)) == 2
    assert_sound(repo, texts)
