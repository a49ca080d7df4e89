"""A failing tool fails its step (issue 12 §1): non-zero exit, timeout, missing binary or a bad argument
template record `tool.error` with the exit status and the tail of stderr, fire `on_error`, and the step's or
tool's `on_error` policy decides: `pause` (default: exit 4, `step_failed:<id>`, retry/skip/abort), `fail`
(the session ends failed, exit 1) or `continue` (goes on; the summary still names the failure). A session
with a failed step never ends `goal_met`."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import WbRepo, py_tool

# a tool that counts its runs in runs.txt, says so on stderr and exits 7
FLAKY = py_tool("import pathlib, sys; p = pathlib.Path('runs.txt'); "
                "n = int(p.read_text()) + 1 if p.exists() else 1; p.write_text(str(n)); "
                "print('working'); sys.stderr.write('boom %d\\n' % n); sys.exit(7)")
PLAN: list[dict[str, Any]] = [{"id": "build", "description": "build it", "tool": "flaky"},
                              {"id": "after", "description": "look at the result"}]


def runs(repo: WbRepo) -> int:
    path = repo.path / "runs.txt"
    return int(path.read_text()) if path.exists() else 0


def flaky(**extra: Any) -> dict[str, Any]:
    return {"argv": FLAKY, "mode": "safe_readonly", **extra}


def test_exit_7_pauses_the_session_with_retry_skip_abort(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"flaky": flaky()})
    plan = wbrepo.plan(PLAN)
    paused = wbrepo.wb_json(4, "run", "ship", "--plan", plan)
    assert paused["done"] is False and paused["kind"] == "pause", paused
    assert paused["reason"] == "step_failed:build", paused
    assert {"wb resume --retry", "wb resume --skip", "wb abort"} <= set(paused["commands"]), paused
    assert runs(wbrepo) == 1

    errors = wbrepo.events("tool.error")
    assert len(errors) == 1, errors
    err = errors[0]["payload"]
    assert err["exit_code"] == 7 and "boom 1" in err["stderr_tail"] and err["step"] == "build", err
    assert "exit" in err["error"] and "7" in err["error"], err
    assert "session.complete" not in {e["type"] for e in wbrepo.events()}
    assert wbrepo.uncommitted() == "", "the failure pause must be committed"

    # the text output, `wb status` and `wb log` name the failed step and why
    text = wbrepo.wb_expect(0, "status").stdout
    assert "step_failed:build" in text and "boom 1" in text and "wb resume --retry" in text, text
    log = wbrepo.wb_expect(0, "log", "--type", "tool.error").stdout
    assert "build" in log and "7" in log, log

    plain = wbrepo.wb_expect(2, "resume")  # a failed step needs a decision
    assert "--retry" in plain.stderr and "--skip" in plain.stderr and len(plain.stderr.splitlines()) == 1
    assert runs(wbrepo) == 1

    again = wbrepo.wb_expect(4, "resume", "--retry")
    assert runs(wbrepo) == 2, "--retry runs the failed step again"
    assert "build" in again.stdout and "boom 2" in again.stdout, again.stdout
    assert len(wbrepo.events("tool.error")) == 2

    done = wbrepo.wb_json(0, "resume", "--skip")
    assert done["done"] is True and done["reason"] != "goal_met", done
    assert [s["status"] for s in done["steps"]] == ["skipped", "done"], done
    assert runs(wbrepo) == 2
    wbrepo.assert_consistent()


def test_retry_that_succeeds_ends_goal_met(wbrepo: WbRepo) -> None:
    once = py_tool("import pathlib, sys; p = pathlib.Path('runs.txt'); "
                   "n = int(p.read_text()) + 1 if p.exists() else 1; p.write_text(str(n)); "
                   "sys.exit(7 if n == 1 else 0)")
    wbrepo.configure(tools={"flaky": {"argv": once, "mode": "safe_readonly"}})
    wbrepo.wb_json(4, "run", "ship", "--plan", wbrepo.plan(PLAN))
    done = wbrepo.wb_json(0, "resume", "--retry")
    assert done["reason"] == "goal_met" and [s["status"] for s in done["steps"]] == ["done", "done"], done
    wbrepo.assert_consistent()


def test_on_error_fail_ends_the_session_failed(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"flaky": flaky(on_error="fail")})
    proc = wbrepo.wb_expect(1, "run", "ship", "--plan", wbrepo.plan(PLAN))
    assert "step_failed:build" in proc.stdout and "boom 1" in proc.stdout, proc.stdout
    completes = wbrepo.events("session.complete")
    assert len(completes) == 1 and completes[0]["payload"]["reason"] == "step_failed:build"
    assert wbrepo.status()["session"] is None
    assert [s["status"] for s in wbrepo.last_session_steps()] == ["error", "pending"], "nothing after a failure"
    wbrepo.assert_consistent()


def test_on_error_continue_on_the_step_goes_on_and_shows_the_failure(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"flaky": flaky()})
    steps = [dict(PLAN[0], on_error="continue"), PLAN[1]]
    proc = wbrepo.wb_expect(0, "run", "ship", "--plan", wbrepo.plan(steps))
    assert "goal_met" not in proc.stdout and "[error]" in proc.stdout and "exit 7" in proc.stdout, proc.stdout
    assert [s["status"] for s in wbrepo.last_session_steps()] == ["error", "done"]
    assert wbrepo.events("session.complete")[0]["payload"]["reason"] != "goal_met"
    wbrepo.assert_consistent()


def test_on_error_hook_fires_for_a_failed_tool(wbrepo: WbRepo) -> None:
    seen = wbrepo.path / "on_error.json"
    hook = py_tool(f"import sys, pathlib; pathlib.Path({str(seen)!r}).write_text(sys.stdin.read())")
    wbrepo.configure(tools={"flaky": flaky()}, hooks={"on_error": [{"run": hook}]})
    wbrepo.wb_json(4, "run", "ship", "--plan", wbrepo.plan(PLAN))
    assert "exit" in seen.read_text() and "build" in seen.read_text(), seen.read_text()


@pytest.mark.parametrize(("tool", "args", "why"), [
    ({"argv": py_tool("import time; time.sleep(30)"), "timeout": 0.5}, {}, "timed out"),
    ({"argv": ["/nonexistent/wb-no-such-binary"]}, {}, "could not start"),
    ({"argv": py_tool("print(1)", "{missing}")}, {}, "missing argument"),
])
def test_timeout_missing_binary_and_bad_template_fail_the_step(wbrepo: WbRepo, tool: dict[str, Any],
                                                               args: dict[str, Any], why: str) -> None:
    wbrepo.configure(tools={"t": {"mode": "safe_readonly", **tool}})
    paused = wbrepo.wb_json(4, "run", "g", "--plan", wbrepo.plan([{"id": "s1", "description": "d", "tool": "t",
                                                                   "args": args}, {"description": "next"}]))
    assert paused["reason"] == "step_failed:s1", paused
    assert why in wbrepo.events("tool.error")[0]["payload"]["error"]
    assert "session.complete" not in {e["type"] for e in wbrepo.events()}
    wbrepo.assert_consistent()
