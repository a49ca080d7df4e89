"""Tool calls survive a SIGKILL of `wb` (CONTRACT §4, idempotency): a call journaled as pending whose result
was never recorded is in doubt, and re-run only if its tool is idempotent; a recorded result is never re-run."""

from __future__ import annotations

import signal

import pytest

from .helpers import WbRepo, py_tool

COUNTER = py_tool("import pathlib; p = pathlib.Path('counter.txt'); "
                  "p.write_text(str(int(p.read_text()) + 1 if p.exists() else 1))")
PLAN = [{"description": "bump the counter", "tool": "bump"}, {"description": "look at it"}]
KILLED = -signal.SIGKILL


def counter(repo: WbRepo) -> int:
    return int((repo.path / "counter.txt").read_text())


def crash_in_run(repo: WbRepo, fault: str, *, idempotent: bool = False) -> None:
    repo.configure(tools={"bump": {"argv": COUNTER, "mode": "safe_readonly", "idempotent": idempotent,
                                   "timeout": 20}})
    plan = repo.plan(PLAN)
    proc = repo.wb("run", "count", "--plan", plan, fault=fault)
    assert proc.returncode == KILLED, f"WB_FAULT={fault} did not kill wb: {proc.returncode} {proc.stderr}"
    assert counter(repo) == 1, "the tool's side effect happened once before the kill"


def finished(repo: WbRepo) -> None:
    status = repo.status()
    assert status["session"] is None and status["pending"] is None, status
    assert [s["status"] for s in repo.last_session_steps()] == ["done", "done"]
    assert repo.events()[-1]["type"] == "session.complete"
    # each recorded result is in the workbench's call records too (calls.jsonl, or SQLite's calls table)
    done = {c["key"] for c in repo.calls() if c["status"] == "done"}
    assert {e["payload"]["key"] for e in repo.events("tool.result")} <= done, repo.calls()
    repo.assert_consistent()


def test_kill_after_tool_run_is_in_doubt_and_not_rerun(wbrepo: WbRepo) -> None:
    crash_in_run(wbrepo, "after_tool_run")
    doubt = wbrepo.wb_json(3, "resume")
    assert doubt["kind"] == "in_doubt", doubt
    assert doubt["payload"]["tool"] == "bump"
    assert counter(wbrepo) == 1, "a non-idempotent call in doubt was run again"
    assert wbrepo.status()["pending"]["kind"] == "in_doubt"
    again = wbrepo.wb_expect(2, "resume")  # resuming again without an answer: a usage error, nothing runs
    assert "--result" in again.stderr and "--approve" in again.stderr, again.stderr
    assert "internal error" not in again.stderr and len(again.stderr.splitlines()) == 1, again.stderr
    assert counter(wbrepo) == 1
    assert wbrepo.status()["pending"]["yield_id"] == doubt["yield_id"]

    wbrepo.wb_expect(0, "resume", "--result", '{"ok":true}')
    assert counter(wbrepo) == 1
    results = [e["payload"] for e in wbrepo.events("tool.result")]
    assert len(results) == 1 and results[0]["result"] == {"ok": True}
    finished(wbrepo)


def test_in_doubt_approve_runs_it_again(wbrepo: WbRepo) -> None:
    crash_in_run(wbrepo, "after_tool_run")
    assert wbrepo.wb_json(3, "resume")["kind"] == "in_doubt"
    wbrepo.wb_expect(0, "resume", "--approve")
    assert counter(wbrepo) == 2
    finished(wbrepo)


def test_kill_after_tool_run_idempotent_is_rerun(wbrepo: WbRepo) -> None:
    crash_in_run(wbrepo, "after_tool_run", idempotent=True)
    wbrepo.wb_expect(0, "resume")
    assert counter(wbrepo) == 2, "an idempotent call in doubt is run again, once"
    calls = wbrepo.events("tool.call")
    assert len(calls) == 2 and calls[0]["payload"]["key"] != calls[1]["payload"]["key"]
    finished(wbrepo)


@pytest.mark.parametrize("idempotent", [False, True])
def test_kill_after_tool_result_never_reruns(wbrepo: WbRepo, idempotent: bool) -> None:
    crash_in_run(wbrepo, "after_tool_result", idempotent=idempotent)
    wbrepo.wb_expect(0, "resume")
    assert counter(wbrepo) == 1, "a call with a recorded result was run again"
    assert len(wbrepo.events("tool.call")) == 1
    assert len(wbrepo.events("tool.result")) == 1
    finished(wbrepo)


def test_kill_while_a_session_runs_leaves_it_busy_until_resumed(wbrepo: WbRepo) -> None:
    crash_in_run(wbrepo, "after_tool_result")
    busy = wbrepo.wb_expect(6, "run", "other", "--plan", "plan.json")
    assert "wb resume" in busy.stderr
    wbrepo.wb_expect(0, "resume")
    finished(wbrepo)


def test_kill_after_the_shared_result_takes_the_outcome_from_the_journal(wbrepo: WbRepo) -> None:
    # the outcome reached the repository's shared journal (store/calljournal.py), not the workbench: the resume
    # records it from there, and the tool is not run again
    crash_in_run(wbrepo, "after_shared_result")
    assert wbrepo.events()[-1]["type"] == "tool.call"
    wbrepo.wb_expect(0, "resume")
    assert counter(wbrepo) == 1
    results = [e["payload"] for e in wbrepo.events("tool.result")]
    assert len(results) == 1 and results[0]["by"] == "journal", results
    finished(wbrepo)
