"""Issue 22 §2: a task whose dependencies are not done cannot be started or finished — refused (exit 5) naming
them — unless a person at a terminal forces it (recorded). A dependency on a cancelled task counts only when
a person says so."""

from __future__ import annotations

from tests import stored
from tests.person import as_person


def board(repo):
    return stored.tasks(repo)


def events(repo, type_):
    return [e for e in stored.events(repo) if e["type"] == type_]


def test_start_and_done_refuse_undone_dependencies_until_a_person_forces(bench, repo, wb, wb_hashes, error_line):
    bench.add_task("Lexer")
    bench.add_task("Parser", depends_on=["T-001"])
    files = wb_hashes(repo)

    r = wb(repo, "task", "start", "T-002")
    assert r.returncode == 5, r.stderr
    line = error_line(r.stderr)
    assert "T-001 (todo)" in line and "wb task start T-002 --force" in line, line
    r = wb(repo, "task", "done", "T-002")
    assert r.returncode == 5 and "T-001 (todo)" in error_line(r.stderr), r.stderr
    assert wb_hashes(repo) == files  # refused: nothing written

    r = wb(repo, "task", "start", "T-002", "--force")  # a script's --force is not a person's
    assert r.returncode == 5 and "ask a person to run: wb task start T-002 --force" in r.stderr, r.stderr
    assert wb_hashes(repo) == files

    term = as_person(repo, "task", "start", "T-002", "--force")
    assert term.returncode == 0 and term.asked == 1, term.output
    assert board(repo)["T-002"]["status"] == "in_progress"
    start = events(repo, "task.start")[-1]
    assert start["actor"] == "human" and start["payload"]["unmet"] == ["T-001"], start

    # in order, nothing is refused
    assert wb(repo, "task", "start", "T-001").returncode == 0
    assert wb(repo, "task", "done", "T-001").returncode == 0
    r = wb(repo, "task", "done", "T-002")
    assert r.returncode == 0, r.stderr
    assert board(repo)["T-002"]["status"] == "done"


def test_a_cancelled_dependency_counts_only_when_a_person_says_so(bench, repo, wb, error_line):
    bench.add_task("Old approach")
    bench.add_task("Feature", depends_on=["T-001"])
    bench.set_task("T-001", {"status": "cancelled"})

    r = wb(repo, "task", "start", "T-002")
    assert r.returncode == 5 and "T-001 (cancelled)" in error_line(r.stderr), r.stderr
    term = as_person(repo, "task", "start", "T-002", "--force")
    assert term.returncode == 0, term.output
    assert events(repo, "task.start")[-1]["payload"]["unmet"] == ["T-001"]
    r = wb(repo, "task", "done", "T-002")  # still cancelled: done is refused again, a person forces it again
    assert r.returncode == 5 and "T-001 (cancelled)" in error_line(r.stderr), r.stderr
    term = as_person(repo, "task", "done", "T-002", "--force")
    assert term.returncode == 0, term.output
    done = events(repo, "task.done")[-1]
    assert done["actor"] == "human" and done["payload"]["unmet"] == ["T-001"] and done["payload"]["forced"] is True
