"""Hooks and planners given as commands in config.yaml or on the command line (CONTRACT §4): guards that block
or fail closed, a hook that asks for review, planners that misbehave, and arguments that never meet a shell."""

from __future__ import annotations

import json
import shlex
import time
import uuid
from pathlib import Path

import pytest

from .helpers import PY, WbRepo, py_tool

# a safe tool that leaves a mark, so a test can tell whether it ran
MARK = {"argv": py_tool("import pathlib; pathlib.Path('ran.txt').write_text('ran')"), "mode": "safe_readonly"}
PLAN = [{"description": "touch the mark", "tool": "mark"}, {"description": "carry on"}]

GUARDS = {
    "blocks": "import sys; sys.stdin.read(); print('no marks today', file=sys.stderr); sys.exit(2)",
    "exits_1": "import sys; sys.stdin.read(); print('guard broke', file=sys.stderr); sys.exit(1)",
    "raises": "import json, sys; json.loads(sys.stdin.read()); raise RuntimeError('guard bug')",
    "not_json": "import sys; sys.stdin.read(); print('allow, I guess')",
}


def guarded(repo: WbRepo, code: str, timeout: float = 10) -> str:
    repo.write("guard.py", code + "\n")
    repo.configure(tools={"mark": MARK},
                   hooks={"before_tool_call": [{"run": [PY, "guard.py"], "timeout": timeout}]})
    return repo.plan(PLAN)


def assert_blocked(repo: WbRepo) -> str:
    assert not (repo.path / "ran.txt").exists(), "the guarded tool ran"
    errors = repo.events("tool.error")
    assert len(errors) == 1, errors
    error: str = errors[0]["payload"]["error"]
    assert error.startswith("hook_abort:"), error
    blocks = repo.events("hook.block")
    assert len(blocks) == 1 and blocks[0]["payload"]["topic"] == "before_tool_call", blocks
    assert "tool.call" not in {e["type"] for e in repo.events()}
    steps = repo.last_session_steps()
    assert steps[0]["status"] not in ("done", "pending") and steps[1]["status"] == "done", steps
    return error


def test_guard_exit_2_blocks_with_its_reason_and_the_run_goes_on(wbrepo: WbRepo) -> None:
    plan = guarded(wbrepo, GUARDS["blocks"])
    done = wbrepo.wb_json(0, "run", "g", "--plan", plan)
    assert done["reason"] == "goal_met"
    error = assert_blocked(wbrepo)
    assert error == "hook_abort:no marks today"
    assert wbrepo.events("hook.block")[0]["payload"]["reason"] == "no marks today"
    wbrepo.assert_consistent()


@pytest.mark.parametrize("kind", ["exits_1", "raises", "not_json"])
def test_a_broken_guard_fails_closed(wbrepo: WbRepo, kind: str) -> None:
    plan = guarded(wbrepo, GUARDS[kind])
    wbrepo.wb_json(0, "run", "g", "--plan", plan)
    assert_blocked(wbrepo)


def test_a_hanging_guard_blocks_after_its_timeout(wbrepo: WbRepo) -> None:
    plan = guarded(wbrepo, "import time; time.sleep(60)", timeout=1)
    start = time.monotonic()
    wbrepo.wb_json(0, "run", "g", "--plan", plan, timeout=30)
    assert time.monotonic() - start < 15, "wb waited for the hanging guard far past its timeout"
    assert "timed out" in assert_blocked(wbrepo)


def test_a_guard_that_allows_sees_the_payload(wbrepo: WbRepo) -> None:
    plan = guarded(wbrepo, "import json, pathlib, sys; pathlib.Path('seen.json').write_text(sys.stdin.read())")
    wbrepo.wb_json(0, "run", "g", "--plan", plan)
    assert (wbrepo.path / "ran.txt").exists()
    seen = json.loads((wbrepo.path / "seen.json").read_text())
    assert seen["tool"] == "mark" and seen["step"]["description"] == "touch the mark"


def test_after_step_hook_pauses_for_review_and_resume_continues(wbrepo: WbRepo) -> None:
    wbrepo.write("review.py", "import json, sys\n"
                              "if json.load(sys.stdin)['index'] == 0:\n"
                              "    print(json.dumps({'pause': 'review'}))\n")
    wbrepo.configure(hooks={"after_step": [{"run": [PY, "review.py"], "timeout": 10}]})
    plan = wbrepo.plan([{"description": "one"}, {"description": "two"}])
    paused = wbrepo.wb_expect(4, "run", "g", "--plan", plan)
    assert "review" in paused.stdout, paused.stdout
    assert wbrepo.status()["pending"]["reason"] == "review"
    assert wbrepo.events("session.pause")[-1]["payload"]["reason"] == "review"
    assert wbrepo.uncommitted() == ""
    done = wbrepo.wb_json(0, "resume")
    assert [s["status"] for s in done["steps"]] == ["done", "done"]
    wbrepo.assert_consistent()


# -- planners -----------------------------------------------------------------------------------------------

def planner_cmd(repo: WbRepo, name: str, code: str) -> str:
    repo.write(name, code + "\n")
    return shlex.join([PY, name])


def assert_planner_paused(proc_out: str, reason: str, repo: WbRepo, label: str) -> None:
    lines = [line for line in proc_out.splitlines() if "planner" in line]
    assert lines and label in lines[0], f"no line naming the planner {label!r}: {proc_out!r}"
    assert reason.startswith("planner_error"), reason
    assert len(repo.events("planner.error")) == 1
    assert repo.status()["pending"]["kind"] == "pause"


def test_garbage_planner_pauses_then_abort(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    cmd = planner_cmd(wbrepo, "bad_planner.py", "print('here is your plan: step one, step two')")
    proc = wbrepo.wb_expect(4, "run", "g", "--planner", cmd)
    assert "Traceback" not in proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    reason = wbrepo.status()["pending"]["reason"]
    assert_planner_paused(out, reason, wbrepo, "bad_planner.py")
    assert "not JSON" in reason
    wbrepo.wb_expect(0, "abort")
    assert wbrepo.status()["session"] is None
    wbrepo.assert_consistent()


def test_garbage_planner_then_resume_with_a_good_plan(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    cmd = planner_cmd(wbrepo, "bad_planner.py", "print('{\"steps\": 3}')")
    wbrepo.wb_expect(4, "run", "g", "--planner", cmd)
    assert wbrepo.status()["pending"]["reason"].startswith("planner_error")
    good = wbrepo.plan([{"description": "good one"}, {"description": "good two"}], "good.yaml")
    done = wbrepo.wb_json(0, "resume", "--plan", good)
    assert [s["description"] for s in done["steps"]] == ["good one", "good two"]
    assert [s["status"] for s in done["steps"]] == ["done", "done"]
    wbrepo.assert_consistent()


def test_planner_exiting_non_zero_pauses(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    cmd = planner_cmd(wbrepo, "dead_planner.py", "import sys; print('model unavailable', file=sys.stderr); "
                                                  "sys.exit(3)")
    proc = wbrepo.wb_expect(4, "run", "g", "--planner", cmd)
    reason = wbrepo.status()["pending"]["reason"]
    assert_planner_paused(proc.stdout + proc.stderr, reason, wbrepo, "dead_planner.py")
    assert "exited 3" in reason and "model unavailable" in reason, reason


def test_hanging_planner_from_config_times_out(wbrepo: WbRepo) -> None:
    wbrepo.write("slow_planner.py", "import time\ntime.sleep(60)\n")
    wbrepo.configure(planner={"run": [PY, "slow_planner.py"], "timeout": 1})
    start = time.monotonic()
    proc = wbrepo.wb_expect(4, "run", "g", timeout=30)
    assert time.monotonic() - start < 15, "wb waited for the planner far past its timeout"
    reason = wbrepo.status()["pending"]["reason"]
    assert_planner_paused(proc.stdout + proc.stderr, reason, wbrepo, "slow_planner.py")
    assert "timed out" in reason
    wbrepo.wb_expect(0, "abort")


def test_command_planner_plans_and_reflects(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    cmd = planner_cmd(wbrepo, "planner.py", "import json, sys\n"
                      "req = json.load(sys.stdin)\n"
                      "if req['kind'] == 'plan':\n"
                      "    print(json.dumps({'steps': [{'description': 'a'}, {'description': 'b'}]}))\n"
                      "else:\n"
                      "    print(json.dumps({'decision': 'done'}))\n")
    done = wbrepo.wb_json(0, "run", "g", "--planner", cmd)
    assert done["reason"] == "goal_met"
    assert [s["status"] for s in done["steps"]] == ["done", "pending"], "reflection said done after step 1"


# -- no shell -----------------------------------------------------------------------------------------------

def test_step_arguments_reach_the_tool_literally(wbrepo: WbRepo, tmp_path: Path) -> None:
    owned = Path("/tmp") / f"owned_{uuid.uuid4().hex[:12]}"
    echo = py_tool("import json, pathlib, sys; pathlib.Path('argv.json').write_text(json.dumps(sys.argv[1:]))",
                   "{a}", "--name={b}", "{c}")
    wbrepo.configure(tools={"echo": {"argv": echo, "mode": "safe_readonly"}})
    args = {"a": f"; touch {owned}", "b": "$(id)", "c": f"`touch {owned}` && echo | cat > {owned}"}
    plan = wbrepo.plan([{"description": "echo", "tool": "echo", "args": args}])
    wbrepo.wb_json(0, "run", "g", "--plan", plan)
    received = json.loads((wbrepo.path / "argv.json").read_text())
    assert received == [args["a"], "--name=$(id)", args["c"]]
    assert not owned.exists(), f"a shell ran the step's argument: {owned} exists"
