"""`wb migrate` records a person's pending hand edit as a `human.edit` event redacted as every other write is
(config.yaml `redact`), and commits through the one commit policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import files_only, run_git
from workbench.api import init
from workbench.migrate.apply import migrate

SECRET = "s3cr3t-token-4711"


@files_only  # a hand edit of state.md, a file (SQLite has no hand edits)
def test_a_hand_edit_recorded_by_a_migration_is_redacted(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WB_TEST_TOKEN", SECRET)
    init(repo)
    wbdir = repo / ".workbench"
    config = wbdir / "config.yaml"
    text = config.read_text().replace("schema_version: 1\n", "").replace("redact: []", "redact: [WB_TEST_TOKEN]")
    config.write_text(text)
    run_git(repo, "commit", "-qam", "a config without its version, redacting a token")
    state = wbdir / "state.md"
    state.write_text(state.read_text().replace("next_action: 'Add the first task: wb task add TITLE'\n",
                                               f"next_action: call with {SECRET}\n"))

    report = migrate(repo)
    assert report.commit, report.warnings
    log = (wbdir / "events.jsonl").read_text()
    edits = [json.loads(line) for line in log.splitlines() if '"human.edit"' in line]
    assert edits and edits[0]["payload"]["changes"]["next_action"] == "call with [redacted]"
    assert SECRET not in log
    assert SECRET not in run_git(repo, "log", "-1", "--format=%B")
