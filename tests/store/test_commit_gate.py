"""The validation gate of the one commit policy (workbench/store/commit.py): nothing that fails validation is
committed, by any path — `wb init`, `wb doctor --fix`, a mutation, a harness checkpoint. The file stays on disk,
uncommitted, and the user is told so in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import about_git, run_git, run_wb
from workbench.api import Bench, init

pytestmark = about_git  # what wb lets into a git commit of .workbench/

WB = ".workbench"

BROKEN = {
    # board.json that is not JSON at all, and one whose task breaks the schema
    "board-not-json": ("board.json", lambda text: text.replace('"tasks": [', '"tasks": [[', 1), "board.json"),
    "board-schema": ("board.json", lambda text: text.replace('"status": "todo"', '"status": "bogus"', 1),
                     "board.json"),
    # state.md whose frontmatter breaks the schema, and one that is no longer YAML frontmatter
    "state-schema": ("state.md", lambda text: text.replace("status: idle", "status: bogus", 1), "state.md"),
    "state-not-yaml": ("state.md", lambda text: text.replace("---\n", "---\n: [unclosed\n", 1), "state.md"),
}


def _workbench_with_a_task(repo: Path) -> None:
    init(repo)
    Bench.open(repo).add_task("a task")


def _break(repo: Path, name: str, edit) -> bytes:  # type: ignore[no-untyped-def]
    path = repo / WB / name
    before = path.read_text(encoding="utf-8")
    after = edit(before)
    assert after != before, "the edit must change the file"
    path.write_text(after, encoding="utf-8")
    return after.encode("utf-8")


def _committed(repo: Path, name: str) -> bytes:
    return run_git(repo, "show", f"HEAD:{WB}/{name}").encode("utf-8")


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_init_never_commits_a_file_that_fails_validation(repo: Path, case: str) -> None:
    name, edit, named = BROKEN[case]
    _workbench_with_a_task(repo)
    good = _committed(repo, name)
    head = run_git(repo, "rev-parse", "HEAD")
    broken = _break(repo, name, edit)
    proc = run_wb(repo, "init")
    assert "Traceback" not in proc.stderr
    assert run_git(repo, "rev-parse", "HEAD") == head  # no commit made
    assert _committed(repo, name) == good  # "restore it with git" still restores the good file
    assert (repo / WB / name).read_bytes() == broken  # the file stays as the person left it, uncommitted
    assert f"{WB}/{name}" in run_git(repo, "status", "--porcelain", "--", WB)
    said = [line for line in proc.stderr.splitlines() if "not committed" in line]
    assert len(said) == 1 and named in said[0], proc.stderr  # said in one line, naming the file


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_doctor_fix_never_commits_a_file_that_fails_validation(repo: Path, case: str) -> None:
    name, edit, named = BROKEN[case]
    _workbench_with_a_task(repo)
    good = _committed(repo, name)
    head = run_git(repo, "rev-parse", "HEAD")
    broken = _break(repo, name, edit)
    proc = run_wb(repo, "doctor", "--fix", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert not report["healthy"]
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert _committed(repo, name) == good
    assert (repo / WB / name).read_bytes() == broken
    uncommitted = [f for f in report["findings"] if f["code"] == "uncommitted"]
    assert uncommitted and not uncommitted[0]["fixed"]
    assert "not committed" in uncommitted[0]["message"] and named in uncommitted[0]["message"]


def test_doctor_fix_still_commits_a_repair_of_valid_files(repo: Path) -> None:
    """The gate refuses only what fails validation: a repaired, valid workbench is committed as before."""
    _workbench_with_a_task(repo)
    log = repo / WB / "events.jsonl"
    good = log.read_bytes()
    with open(log, "ab") as fh:
        fh.write(b'{"schema_version":1,"seq":3')  # a torn tail: an interrupted append
    run_git(repo, "add", f"{WB}/events.jsonl")
    run_git(repo, "commit", "-q", "-m", "a torn tail committed by hand")
    proc = run_wb(repo, "doctor", "--fix", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _committed(repo, "events.jsonl") == good
    assert run_git(repo, "status", "--porcelain", "--", WB) == ""


def test_a_torn_log_tail_is_not_committed_by_init(repo: Path) -> None:
    _workbench_with_a_task(repo)
    head = run_git(repo, "rev-parse", "HEAD")
    with open(repo / WB / "events.jsonl", "ab") as fh:
        fh.write(b'{"schema_version":1,"seq":3')
    proc = run_wb(repo, "init")
    assert run_git(repo, "rev-parse", "HEAD") == head
    said = [line for line in proc.stderr.splitlines() if "not committed" in line]
    assert len(said) == 1 and "events.jsonl" in said[0] and "wb doctor --fix" in said[0], proc.stderr


def test_a_damaged_calls_journal_is_not_committed_by_a_mutation(repo: Path) -> None:
    """calls.jsonl is not read by a mutation, so a broken line there would ride along in its commit."""
    _workbench_with_a_task(repo)
    head = run_git(repo, "rev-parse", "HEAD")
    (repo / WB / "calls.jsonl").write_text("not json\n")
    proc = run_wb(repo, "note", "recorded anyway")
    assert proc.returncode == 0, proc.stderr
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert "recorded anyway" in (repo / WB / "state.md").read_text()  # written, durable, just not committed
    said = [line for line in proc.stderr.splitlines() if "not committed" in line]
    assert len(said) == 1 and "calls.jsonl" in said[0], proc.stderr
    (repo / WB / "calls.jsonl").write_text("")
    assert run_wb(repo, "note", "after the repair").returncode == 0
    assert run_git(repo, "status", "--porcelain", "--", WB) == ""  # the next write commits both


def test_a_torn_calls_line_is_refused_then_repaired_by_doctor(repo: Path) -> None:
    """An interrupted append to calls.jsonl (a torn last line, never acknowledged) is not committed; `wb doctor
    --fix` cuts it off, as it does a torn event, and commits."""
    _workbench_with_a_task(repo)
    calls = repo / WB / "calls.jsonl"
    good = calls.read_bytes()
    with open(calls, "ab") as fh:
        fh.write(b'{"schema_version":1,"key":"k')
    head = run_git(repo, "rev-parse", "HEAD")
    proc = run_wb(repo, "doctor", "--json")
    assert proc.returncode == 1 and "torn_calls" in {f["code"] for f in json.loads(proc.stdout)["findings"]}
    assert run_git(repo, "rev-parse", "HEAD") == head
    proc = run_wb(repo, "doctor", "--fix", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert calls.read_bytes() == good
    assert run_git(repo, "status", "--porcelain", "--", WB) == ""
