"""`workbench.migrate.apply.migrate()` in-process: the paths the version-0 fixture does not take."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import files_only, head_count, run_git
from workbench.api import init, replay, validate_workbench
from workbench.errors import Refused
from workbench.migrate.apply import INTENT, migrate
from workbench.store.workbench import Workbench


def sound(repo: Path) -> None:
    wb = Workbench(repo)
    assert validate_workbench(wb) == []
    assert replay(wb).mismatches == []


@files_only  # config.yaml and state.md as files committed with git; SQLite: test_migrate_sqlite.py
def test_only_an_old_config_keeps_state_and_board_and_records_a_pending_hand_edit(repo):
    bench, _created, _last = init(repo)
    bench.add_task("Parse the config", acceptance=["true"])
    wbdir = repo / ".workbench"
    config = wbdir / "config.yaml"
    config.write_text(config.read_text().replace("schema_version: 1\n", ""))
    run_git(repo, "commit", "-qam", "a config without its version")
    state = wbdir / "state.md"
    text = state.read_text()
    assert "next_action: 'Add the first task: wb task add TITLE'\n" in text
    state.write_text(text.replace("next_action: 'Add the first task: wb task add TITLE'\n",
                                  "next_action: Edited by hand  # mine\n"))
    count = head_count(repo)

    report = migrate(repo)
    assert [(f["file"], f["from"], f["to"]) for f in report.files] == [("config.yaml", 0, 1), ("state.md", 2, 2),
                                                                        ("events.jsonl", 1, 1)]
    log = [json.loads(line) for line in (wbdir / "events.jsonl").read_text().splitlines()]
    assert [e["type"] for e in log] == ["workbench.init", "task.add", "human.edit", "migration.apply"]
    assert log[-1]["payload"] == {"from": {"config.yaml": 0}, "to": {"config.yaml": 1}}  # no documents to carry
    assert "next_action: Edited by hand  # mine" in state.read_text()  # the human's comment survives
    assert report.commit and head_count(repo) == count + 1
    sound(repo)
    assert migrate(repo).changed is False


@files_only  # a wb 0.0.x state.md file beside a log: version 0 was only ever files
def test_a_version_0_state_beside_a_later_log_is_refused(v0_repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    run_git(other, "init", "-q")
    init(other)
    log = (other / ".workbench" / "events.jsonl").read_bytes()
    (v0_repo / ".workbench" / "events.jsonl").write_bytes(log)
    with pytest.raises(Refused, match="state.md is a wb 0.0.x file but events.jsonl already holds 1 events"):
        migrate(v0_repo)


def test_a_damaged_intent_is_refused(v0_repo):
    (v0_repo / ".workbench" / INTENT).write_text("{")
    with pytest.raises(Refused, match=r"\.migrate\.json: damaged \(not JSON\)"):
        migrate(v0_repo)


def test_dry_run_and_run_agree(v0_repo):
    now = "2026-11-30T12:00:00.000Z"
    planned = migrate(v0_repo, dry_run=True, now=now)
    done = migrate(v0_repo, now=now)
    assert planned.files == done.files
    assert [e["type"] for e in planned.events] == [e["type"] for e in done.events]
    sound(v0_repo)
