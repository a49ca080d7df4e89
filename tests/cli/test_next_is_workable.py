"""Issue 31.2–3: one rule for "the next task", and it is one you can do. `wb task next` handed out an epic whose
child was open (a leaf of the same priority was ready), and a review task (priority 0, so first) while the task
it reviews was still todo; `wb status` showed `ready … start: wb task start T-001` (board order) and, on the
next line, `next action  Start T-004` (priority). Now `wb task next`, `wb task next --claim`, status's ready
line and its derived next action, and prime all take the first of ops/status.ready_tasks: todo, dependencies
done, no open child, a review's task done; the highest priority first, then board order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import call_wb


def wb(repo: Path, *args: str) -> str:
    proc = call_wb(repo, *args)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


def next_id(repo: Path) -> str:
    return json.loads(wb(repo, "task", "next", "--json"))["task"]["id"]


def agree(repo: Path, expected: str) -> None:
    """`wb task next`, status's ready line and its next action, and prime name the same task."""
    assert next_id(repo) == expected
    status = json.loads(wb(repo, "status", "--json"))
    assert status["ready"]["command"] == f"wb task start {expected}", status["ready"]
    assert f"Start {expected} " in status["next_action"], status["next_action"]
    text = wb(repo, "status")
    ready_line = next(line for line in text.splitlines() if line.startswith("ready"))
    assert f"start: wb task start {expected}" in ready_line, text


def test_an_epic_with_an_open_child_is_not_handed_out(bench: Any, repo: Path) -> None:
    wb(repo, "task", "add", "Epic: the parser")  # T-001
    wb(repo, "task", "add", "Lexer", "--parent", "T-001", "--priority", "3")  # T-002, a lower priority
    wb(repo, "task", "add", "Docs")  # T-003: a leaf, the epic's priority
    agree(repo, "T-003")
    wb(repo, "task", "start", "T-003")
    wb(repo, "task", "done", "T-003")
    agree(repo, "T-002")  # the epic waits for its child
    wb(repo, "task", "start", "T-002")
    wb(repo, "task", "done", "T-002")
    agree(repo, "T-001")  # every child done: the epic is the work now


def test_a_review_waits_for_the_task_it_reviews(bench: Any, repo: Path) -> None:
    wb(repo, "task", "add", "Build it", "--priority", "2")  # T-001
    wb(repo, "task", "add", "Review it", "--kind", "review", "--reviews", "T-001", "--priority", "0")  # T-002
    wb(repo, "task", "add", "Other", "--priority", "1")  # T-003
    agree(repo, "T-003")  # priority 1 before 2; the priority-0 review is not workable yet
    wb(repo, "task", "start", "T-003")
    wb(repo, "task", "done", "T-003")
    agree(repo, "T-001")
    wb(repo, "task", "start", "T-001")
    wb(repo, "task", "done", "T-001")
    agree(repo, "T-002")


def test_priority_decides_the_ready_line_too(bench: Any, repo: Path) -> None:
    for title, pri in (("low", "3"), ("mid", "2"), ("urgent", "0")):
        wb(repo, "task", "add", title, "--priority", pri)
    agree(repo, "T-003")
