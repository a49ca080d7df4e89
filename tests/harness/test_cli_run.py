"""`wb run`, `wb resume`, `wb abort` end to end: a real git repo, tools from config.yaml, approvals, human
results, one live session per workbench, a commit per step (CONTRACT §4–§5)."""

from __future__ import annotations

import json
import re
from typing import Any

from .helpers import STEP_COMMIT, WbRepo, py_tool

SAFE = {"argv": py_tool("print('hi')"), "mode": "safe_readonly"}
WRITE = {"argv": py_tool("import pathlib; pathlib.Path('out.txt').write_text('written')"), "mode": "mutating"}

MAIN_PLAN: list[dict[str, Any]] = [
    {"description": "say hi", "tool": "hello"},
    {"description": "write the file", "tool": "write"},
    {"description": "deploy to staging", "tool": "deploy", "args": {"env": "staging"}},
    {"description": "decide what is next"},
]


def step_commits(repo: WbRepo) -> list[str]:
    return [s for s in repo.git_log() if s.startswith(STEP_COMMIT)]


def test_run_approve_result_done(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"hello": SAFE, "write": WRITE})
    plan = wbrepo.plan(MAIN_PLAN)

    first = wbrepo.wb_json(3, "run", "ship it", "--plan", plan)
    assert first["done"] is False and first["kind"] == "approval", first
    assert first["reason"] == "approval_required:write"
    assert first["payload"]["tool"] == "write" and first["payload"]["mode"] == "mutating"
    assert not (wbrepo.path / "out.txt").exists(), "a mutating tool ran before its approval"
    hello = wbrepo.events("tool.result")
    assert len(hello) == 1 and hello[0]["payload"]["result"]["stdout"] == "hi\n", "the safe tool runs unasked"

    status = wbrepo.status()
    assert status["pending"] is not None, status
    assert status["pending"]["kind"] == "approval"
    assert "wb resume" in status["pending"]["command"]
    text = wbrepo.wb_expect(0, "status").stdout
    assert "wb resume" in text, text
    assert wbrepo.uncommitted() == "", "the yield must be committed"

    busy = wbrepo.wb_expect(6, "run", "another goal", "--plan", plan)
    assert "wb resume" in busy.stderr and "wb abort" in busy.stderr, busy.stderr
    assert len(busy.stderr.strip().splitlines()) == 1, busy.stderr

    second = wbrepo.wb_json(3, "resume", "--approve")
    assert second["kind"] == "tool_result" and second["reason"] == "tool_result_required:deploy", second
    assert second["payload"]["args"] == {"env": "staging"}
    assert (wbrepo.path / "out.txt").read_text() == "written"
    assert wbrepo.status()["pending"]["kind"] == "tool_result"

    final = wbrepo.wb_expect(0, "resume", "--result", '{"ok": true}')
    assert "DONE" in final.stdout and "goal_met" in final.stdout, final.stdout
    assert [s["status"] for s in wbrepo.last_session_steps()] == ["done"] * 4
    deploy = [e["payload"] for e in wbrepo.events("tool.result") if e["payload"]["index"] == 2]
    assert deploy and deploy[-1]["result"] == {"ok": True}

    commits = step_commits(wbrepo)
    if wbrepo.sqlite:  # no git commit on SQLite: each step was durable at its database COMMIT
        assert commits == [], commits
    else:
        for n in range(1, 5):
            assert any(c.startswith(f"{STEP_COMMIT}{n}/4") for c in commits), f"no commit for step {n}: {commits}"
    assert wbrepo.status()["session"] is None
    wbrepo.assert_consistent()
    assert [e["type"] for e in wbrepo.events()][-1] == "session.complete"


def test_text_output_names_the_resume_commands(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"write": WRITE})
    plan = wbrepo.plan([{"description": "deploy", "tool": "deploy"}, {"description": "write", "tool": "write"}])
    out = wbrepo.wb_expect(3, "run", "g", "--plan", plan).stdout
    assert "wb resume --result" in out and "deploy" in out, out
    missing = wbrepo.wb_expect(2, "resume")  # a tool result is awaited: nothing given is a usage error
    assert "--result" in missing.stderr, missing.stderr
    out = wbrepo.wb_expect(3, "resume", "--result", "{}").stdout
    assert "wb resume --approve" in out and "wb resume --deny" in out, out
    missing = wbrepo.wb_expect(2, "resume", "--result", "{}")
    assert "--approve" in missing.stderr, missing.stderr
    bad = wbrepo.wb_expect(2, "resume", "--approve", "--deny")
    assert "Traceback" not in bad.stderr


def test_abort_ends_the_waiting_session(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"write": WRITE})
    plan = wbrepo.plan([{"description": "write", "tool": "write"}, {"description": "after"}])
    wbrepo.wb_expect(3, "run", "g", "--plan", plan)
    wbrepo.wb_expect(0, "abort", "--reason", "changed my mind")
    assert wbrepo.status()["session"] is None
    aborts = wbrepo.events("session.abort")
    assert len(aborts) == 1 and aborts[0]["payload"]["reason"] == "changed my mind"
    assert not (wbrepo.path / "out.txt").exists()
    wbrepo.assert_consistent()
    nothing = wbrepo.wb_expect(5, "resume", "--approve")
    assert "no session" in nothing.stderr
    wbrepo.wb_expect(3, "run", "again", "--plan", plan)  # the workbench is free again


def test_deny_ends_the_step_denied_and_continues(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"write": WRITE})
    plan = wbrepo.plan([{"description": "write", "tool": "write"}, {"description": "after"}])
    wbrepo.wb_expect(3, "run", "g", "--plan", plan)
    done = wbrepo.wb_json(1, "resume", "--deny")  # a denied step: the session did not do its work (issue 19)
    assert done["done"] is True and done["reason"] == "incomplete"
    assert [s["status"] for s in done["steps"]] == ["denied", "done"]
    assert not (wbrepo.path / "out.txt").exists(), "a denied tool ran"
    assert len(wbrepo.events("approval.denied")) == 1
    assert "tool.call" not in {e["type"] for e in wbrepo.events()}
    wbrepo.assert_consistent()


def test_confirm_once_asks_once_per_session_mutating_every_time(wbrepo: WbRepo) -> None:
    once = {"argv": py_tool("print('lint')"), "mode": "confirm_once"}
    wbrepo.configure(tools={"lint": once, "write": WRITE})
    plan = wbrepo.plan([{"description": "lint a", "tool": "lint"}, {"description": "lint b", "tool": "lint"}])
    first = wbrepo.wb_json(3, "run", "g", "--plan", plan)
    assert first["kind"] == "approval" and first["payload"]["mode"] == "confirm_once"
    done = wbrepo.wb_json(0, "resume", "--approve")
    assert [s["status"] for s in done["steps"]] == ["done", "done"]
    assert len(wbrepo.events("approval.requested")) == 1
    assert len(wbrepo.events("tool.result")) == 2

    # a new session asks again; a mutating tool asks at every call
    plan = wbrepo.plan([{"description": "lint", "tool": "lint"}, {"description": "write 1", "tool": "write"},
                        {"description": "write 2", "tool": "write"}], "plan2.json")
    assert wbrepo.wb_json(3, "run", "g2", "--plan", plan)["payload"]["tool"] == "lint"
    assert wbrepo.wb_json(3, "resume", "--approve")["payload"]["step"] == "s2"
    assert wbrepo.wb_json(3, "resume", "--approve")["payload"]["step"] == "s3"
    wbrepo.wb_json(0, "resume", "--approve")
    assert len(wbrepo.events("approval.requested")) == 1 + 3
    wbrepo.assert_consistent()


def test_step_mode_overrides_the_tool_mode(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"hello": SAFE})
    plan = wbrepo.plan([{"description": "ask first", "tool": "hello", "mode": "mutating"}])
    assert wbrepo.wb_json(3, "run", "g", "--plan", plan)["kind"] == "approval"
    wbrepo.wb_json(0, "resume", "--approve")


def test_max_turns_then_extend(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    plan = wbrepo.plan([{"description": f"step {i}"} for i in range(1, 4)])
    paused = wbrepo.wb_expect(4, "run", "g", "--plan", plan, "--max-turns", "1")
    assert "budget_exceeded:turns" in paused.stdout, paused.stdout
    assert "wb resume --extend turns=N" in paused.stdout, paused.stdout
    assert wbrepo.status()["pending"]["kind"] == "pause"
    assert len(wbrepo.events("budget.warn")) == 1
    assert wbrepo.uncommitted() == ""
    wbrepo.wb_expect(4, "resume")  # still over budget
    bad = wbrepo.wb_expect(2, "resume", "--extend", "lunch=5")
    assert "turns=N" in bad.stderr
    done = wbrepo.wb_json(0, "resume", "--extend", "turns=5")
    assert [s["status"] for s in done["steps"]] == ["done"] * 3
    if not wbrepo.sqlite:  # SQLite: nothing of a step is a git commit (test_run_approve_result_done)
        assert any(c.startswith(f"{STEP_COMMIT}3/3") for c in step_commits(wbrepo))
    wbrepo.assert_consistent()


def test_max_tool_calls_and_max_seconds(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"hello": SAFE})
    plan = wbrepo.plan([{"description": "a", "tool": "hello"}, {"description": "b", "tool": "hello"}])
    paused = wbrepo.wb_json(4, "run", "g", "--plan", plan, "--max-tool-calls", "1")
    assert paused["reason"] == "budget_exceeded:tool_calls" and paused["kind"] == "pause"
    wbrepo.wb_json(0, "resume", "--extend", "tool_calls=1")
    paused = wbrepo.wb_json(4, "run", "g2", "--plan", plan, "--max-seconds", "0")
    assert paused["reason"] == "budget_exceeded:wall_clock"
    # it paused before planning: the planner must be given again
    again = wbrepo.wb_expect(2, "resume", "--extend", "seconds=600")
    assert "--plan" in again.stderr, again.stderr
    done = wbrepo.wb_json(0, "resume", "--extend", "seconds=600", "--plan", plan)
    assert [s["status"] for s in done["steps"]] == ["done", "done"]
    wbrepo.assert_consistent()


def test_result_file_and_error(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    plan = wbrepo.plan([{"description": "a", "tool": "ext"}, {"description": "b", "tool": "ext"},
                        {"description": "c"}])
    wbrepo.wb_expect(3, "run", "g", "--plan", plan)
    wbrepo.write("result.json", json.dumps({"rows": [1, 2]}))
    wbrepo.wb_expect(3, "resume", "--result-file", "result.json")
    broken = wbrepo.wb_expect(2, "resume", "--result", "{not json")
    assert "not JSON" in broken.stderr
    done = wbrepo.wb_json(0, "resume", "--error", "the service is down")
    assert [s["status"] for s in done["steps"]] == ["done", "error", "done"]
    results = wbrepo.events("tool.result")
    assert results[0]["payload"]["result"] == {"rows": [1, 2]} and results[0]["payload"]["by"] == "human"
    errors = wbrepo.events("tool.error")
    assert len(errors) == 1 and errors[0]["payload"]["error"] == "the service is down"
    wbrepo.assert_consistent()


def test_stale_yield_is_refused_on_the_command_line(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    plan = wbrepo.plan([{"description": "a", "tool": "ext"}, {"description": "b", "tool": "ext"}])
    first = wbrepo.wb_json(3, "run", "g", "--plan", plan)
    wbrepo.wb_json(3, "resume", "--result", "{}", "--yield", first["yield_id"])
    stale = wbrepo.wb("resume", "--result", "{}", "--yield", first["yield_id"])
    assert stale.returncode not in (0, 3, 4), stale
    assert first["yield_id"] in stale.stderr or "stale" in stale.stderr.lower(), stale.stderr
    assert "Traceback" not in stale.stderr
    assert wbrepo.status()["pending"]["kind"] == "tool_result"


def test_finished_sessions_stay_in_the_log(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    plan = wbrepo.plan([{"description": "only"}])
    wbrepo.wb_expect(0, "run", "first", "--plan", plan)
    wbrepo.wb_expect(0, "run", "second", "--plan", plan)
    sessions = {e["session"] for e in wbrepo.events("session.complete")}
    assert len(sessions) == 2
    listed = wbrepo.wb_expect(0, "log", "--type", "session.complete").stdout
    assert len(re.findall(r"session\.complete", listed)) == 2, listed
    wbrepo.assert_consistent()
