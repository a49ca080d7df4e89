"""Recovering a paused or killed session without guessing (issue 31 item 5): a failed step's one-line refusal
names `wb resume --retry` and `wb resume --skip`; `wb status` says the session is paused where the status line
does; after a kill -9 of wb during a tool, the tool and its own children do not keep running, and `wb resume`
says what is true of a call cut short (a `safe_readonly` tool is one that runs without asking, not one declared
`idempotent: true`)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from .helpers import WB_ARGV, WbRepo, _env, py_tool

FAILING = {"argv": py_tool("import sys; sys.exit('boom')"), "mode": "safe_readonly"}


def test_a_failed_step_names_retry_and_skip_and_status_says_paused(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"failing": FAILING})
    plan = wbrepo.plan([{"id": "f", "description": "fail", "tool": "failing"}, {"description": "after"}])
    wbrepo.wb_expect(4, "run", "g", "--plan", plan)
    for args in (("resume",), ("resume", "--extend", "turns=5")):
        r = wbrepo.wb_expect(2, *args)
        [line] = r.stderr.splitlines()
        assert "`wb resume --retry`" in line and "`wb resume --skip`" in line, line
    text = wbrepo.wb_expect(0, "status").stdout
    rows = {ln.split(None, 1)[0]: ln for ln in text.splitlines() if ln.strip()}
    assert rows["status"].split()[-1] == "paused", text
    assert " PAUSED — g" in rows["session"] and "IDLE" not in rows["session"], text
    wbrepo.wb_expect(0, "resume", "--skip", "--extend", "turns=5")


def wait_for(path: Path, timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return [int(p) for p in path.read_text().split()]


def gone(pid: int, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "\nState:\tZ" in status.read_text():
            return True
        time.sleep(0.05)
    return False


def test_kill_9_of_wb_during_a_safe_readonly_tool_leaves_no_tool_running(wbrepo: WbRepo) -> None:
    pids = wbrepo.path / "pids.txt"
    # the tool starts a child of its own (a sleeper), says both pids, and waits for it
    tool = py_tool("import os, subprocess, sys, time; "
                   "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
                   f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}\\n'); child.wait()")
    wbrepo.configure(tools={"look": {"argv": tool, "mode": "safe_readonly", "timeout": 300}})
    plan = wbrepo.plan([{"id": "look", "description": "look", "tool": "look"}, {"description": "after"}])
    proc = subprocess.Popen([*WB_ARGV, "run", "g", "--plan", plan], cwd=wbrepo.path, env=_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tool_pid, child_pid = wait_for(pids)
    try:
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        assert gone(tool_pid), "the tool kept running after wb was killed"
        assert gone(child_pid), "the tool's own child kept running after wb was killed"
    finally:
        for pid in (tool_pid, child_pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    r = wbrepo.wb_expect(3, "resume")
    said = r.stdout + r.stderr
    assert "is not idempotent" not in said, said
    assert "idempotent: true" in said and "safe_readonly" in said, said
    doubt = wbrepo.status()["pending"]
    assert doubt["kind"] == "in_doubt", doubt
    again = wbrepo.wb_expect(2, "resume")
    [line] = again.stderr.splitlines()
    assert "idempotent: true" in line and "--approve" in line, line
    wbrepo.assert_consistent()
