"""The end of the hash chain is anchored by git: an edit of the last committed line of events.jsonl (which no
later `prev` protects) is reported by `wb validate`, `wb doctor` and the pre-commit hook's `wb validate`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import about_git, run_git, run_wb

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _edit_last_line(repo: Path) -> None:
    log = repo / ".workbench" / "events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    event = json.loads(lines[-1])
    event["payload"]["text"] = "something else entirely"
    lines[-1] = json.dumps(event, separators=(",", ":")).encode() + b"\n"
    log.write_bytes(b"".join(lines))


def test_an_edit_of_the_last_committed_line_is_reported(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "note", "what was said").returncode == 0
    _edit_last_line(repo)
    validate = run_wb(repo, "validate")
    assert validate.returncode == 5, validate.stdout + validate.stderr
    assert "events.jsonl:2: a committed line was changed" in validate.stdout + validate.stderr
    doctor = run_wb(repo, "doctor")
    assert doctor.returncode != 0 and "committed line was changed" in doctor.stdout + doctor.stderr
    run_git(repo, "checkout", "--", ".workbench/events.jsonl")
    assert run_wb(repo, "validate").returncode == 0


def test_appended_uncommitted_lines_are_not_an_edit(repo: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert run_wb(repo, "init").returncode == 0
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)  # no identity: recorded, not committed
    note = run_wb(repo, "note", "appended, not committed")
    assert "not committed" in note.stderr
    assert run_wb(repo, "validate").returncode == 0
