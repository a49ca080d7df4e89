"""Interrupts leave a resumable session (issue 12 §5): Ctrl-C at `Allow? [y/N]` or during a tool, on a real
terminal, exits 130 with the command that resumes it and leaves everything committed; after a kill -9 `wb
status` still says how to go on; `wb resume` continues either way."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from .helpers import WB_ARGV, Terminal, WbRepo, _env, py_tool

WRITE = {"argv": py_tool("import pathlib; pathlib.Path('out.txt').write_text('written')"), "mode": "mutating"}


def slow_once(started: Path) -> list[str]:
    """A tool that, on its first run, says it started (its pid in `started`) and then hangs; later runs are quick."""
    return py_tool("import os, pathlib, sys, time; p = pathlib.Path(sys.argv[1]); first = not p.exists(); "
                   "p.write_text(str(os.getpid())); time.sleep(60 if first else 0); print('ok')", str(started))


def wait_for(path: Path, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return int(path.read_text())


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "\nState:\tZ" in status.read_text()


def test_ctrl_c_at_the_approval_prompt(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"write": WRITE})
    plan = wbrepo.plan([{"id": "w", "description": "write", "tool": "write"}, {"description": "after"}])
    term = Terminal(wbrepo.path, "run", "g", "--plan", plan)
    term.expect("Allow? [y/N]")
    term.ctrl_c()
    assert term.finish() == 130, term.text
    assert "wb resume" in term.text and "Traceback" not in term.text, term.text
    assert wbrepo.uncommitted() == "", "an interrupt must leave the session committed"
    assert not (wbrepo.path / "out.txt").exists()
    assert wbrepo.status()["pending"]["kind"] == "approval"
    wbrepo.assert_consistent()

    again = Terminal(wbrepo.path, "resume")  # at a terminal, a plain `wb resume` asks again
    again.expect("Allow? [y/N]")
    again.type("y\n")
    again.confirm()  # a person's yes: proven by the code wb shows on the terminal
    assert again.finish() == 0, again.text
    assert (wbrepo.path / "out.txt").read_text() == "written"
    assert wbrepo.status()["session"] is None
    wbrepo.assert_consistent()


def test_ctrl_c_during_a_tool(wbrepo: WbRepo) -> None:
    started = wbrepo.path / "started.pid"
    wbrepo.configure(tools={"slow": {"argv": slow_once(started), "mode": "safe_readonly", "timeout": 120}})
    plan = wbrepo.plan([{"id": "slow", "description": "slow work", "tool": "slow"}, {"description": "after"}])
    term = Terminal(wbrepo.path, "run", "g", "--plan", plan)
    tool = wait_for(started)
    term.ctrl_c()
    assert term.finish() == 130, term.text
    assert "wb resume" in term.text and "Traceback" not in term.text, term.text
    deadline = time.monotonic() + 10
    while not gone(tool) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone(tool), "the interrupted tool was left running"
    assert wbrepo.uncommitted() == "", "an interrupt must leave the session committed"
    assert "interrupted" in wbrepo.events("tool.error")[-1]["payload"]["error"]
    wbrepo.assert_consistent()

    failed = wbrepo.wb_json(4, "resume")
    assert failed["reason"] == "step_failed:slow" and "wb resume --retry" in failed["commands"], failed
    done = wbrepo.wb_json(0, "resume", "--retry")
    assert done["reason"] == "goal_met", done
    wbrepo.assert_consistent()


def test_kill_9_during_a_tool_leaves_a_session_status_can_resume(wbrepo: WbRepo) -> None:
    started = wbrepo.path / "started.pid"
    wbrepo.configure(tools={"slow": {"argv": slow_once(started), "mode": "safe_readonly", "timeout": 120}})
    plan = wbrepo.plan([{"id": "slow", "description": "slow work", "tool": "slow"}, {"description": "after"}])
    proc = subprocess.Popen([*WB_ARGV, "run", "g", "--plan", plan], cwd=wbrepo.path, env=_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tool = wait_for(started)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10  # the tool's guard ends it once wb is gone (issue 31)
    while not gone(tool) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(tool), "the tool kept running after wb's kill -9"
    assert wbrepo.uncommitted() == "", "what the session had done was committed before the tool ran"
    status = wbrepo.status()
    assert status["session"] is not None and status["resume"]["command"] == "wb resume", status
    text = wbrepo.wb_expect(0, "status").stdout
    assert "wb resume" in text, text
    doubt = wbrepo.wb_json(3, "resume")  # wb cannot know what the killed call did: it asks
    assert doubt["kind"] == "in_doubt", doubt
    done = wbrepo.wb_json(0, "resume", "--approve")
    assert done["reason"] == "goal_met", done
    wbrepo.assert_consistent()
