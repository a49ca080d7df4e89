"""Tool processes (issue 12 §4): each tool runs in its own process group and a timeout kills the whole
group; a tool that exits while a background child holds its stdout is judged at once by its own exit status;
output beyond `max_output_bytes` (default 16 MiB) is discarded, the artifact says how much, and wb's memory
stays bounded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import WB_ARGV

from .helpers import WbRepo, _env, py_tool

FLOOD_MB = 52  # what the flooding tool prints, in 64 KiB chunks (the tool itself stays small)
FLOOD = py_tool(f"import sys\nchunk = b'x' * 65536\nfor _ in range({FLOOD_MB * 16}):\n"
                "    sys.stdout.buffer.write(chunk)")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def wait_for(path: Path) -> int:
    deadline = time.monotonic() + 20
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.05)
    return int(path.read_text())


def test_a_background_child_holding_stdout_does_not_delay_the_verdict(wbrepo: WbRepo) -> None:
    pidfile = wbrepo.path / "server.pid"
    server = py_tool("import subprocess, sys; "
                     "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
                     f"open({str(pidfile)!r}, 'w').write(str(p.pid)); print('started')")
    wbrepo.configure(tools={"serve": {"argv": server, "mode": "safe_readonly", "timeout": 40}})
    start = time.monotonic()
    try:
        done = wbrepo.wb_json(0, "run", "g", "--plan", wbrepo.plan([{"description": "start it", "tool": "serve"}]))
        took = time.monotonic() - start
        assert took < 20, f"wb waited {took:.1f}s for a child that holds stdout"
        assert done["reason"] == "goal_met", done
        result = wbrepo.events("tool.result")[0]["payload"]["result"]
        assert result["exit_code"] == 0 and result["stdout"] == "started\n", result
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
    wbrepo.assert_consistent()


def test_a_timeout_kills_the_whole_process_group(wbrepo: WbRepo) -> None:
    pidfile = wbrepo.path / "child.pid"
    hang = py_tool("import subprocess, sys, time; "
                   "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
                   "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
                   f"open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(60)")
    wbrepo.configure(tools={"hang": {"argv": hang, "mode": "safe_readonly", "timeout": 2}})
    paused = wbrepo.wb_json(4, "run", "g", "--plan", wbrepo.plan([{"id": "h", "description": "d", "tool": "hang"}]))
    assert paused["reason"] == "step_failed:h", paused
    assert "timed out" in wbrepo.events("tool.error")[0]["payload"]["error"]
    child = wait_for(pidfile)
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive(child):
        os.kill(child, signal.SIGKILL)
        pytest.fail("the tool's child outlived the timeout: the process group was not killed")


MEASURE = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n"
           "_, status, usage = os.wait4(pid, 0)\nprint(usage.ru_maxrss, file=sys.stderr)\n"
           "sys.exit(os.waitstatus_to_exitcode(status))")


@pytest.mark.parametrize(("cap", "kept"), [(1_000_000, 1_000_000), (None, 16 * 1024 * 1024)])
def test_a_flood_of_output_is_capped_and_memory_stays_bounded(wbrepo: WbRepo, cap: int | None, kept: int) -> None:
    tool = {"argv": FLOOD, "mode": "safe_readonly", "timeout": 120}
    if cap is not None:
        tool["max_output_bytes"] = cap
    wbrepo.configure(tools={"flood": tool})
    # a real `wb run`, reaped by os.wait4 in a small process of its own: its peak and its tool's alone. (A
    # child forked from this test worker — hundreds of MB after a long run — starts with the worker's pages
    # counted in its high-water mark before it execs; RUSAGE_CHILDREN also counts every child reaped meanwhile.)
    plan = wbrepo.plan([{"description": "talk", "tool": "flood"}])
    measured = subprocess.run([sys.executable, "-c", MEASURE, *WB_ARGV, "run", "g", "--plan", plan, "--json"],
                              cwd=wbrepo.path, env=_env(), capture_output=True, text=True, timeout=180)
    assert measured.returncode == 0, measured.stderr
    peak_mb = int(measured.stderr.strip().splitlines()[-1]) / 1024  # ru_maxrss: kilobytes on Linux
    result = wbrepo.events("tool.result")[0]["payload"]["result"]
    art = result["stdout_artifact"]
    assert art["bytes"] <= kept + 200 and art["truncated_bytes"] == FLOOD_MB * 1024 * 1024 - kept, art
    data = (wbrepo.path / art["path"]).read_bytes()
    assert len(data) == art["bytes"] and b"discarded" in data[-200:], data[-200:]
    assert peak_mb < 100 + kept / 2**20, f"wb peaked at {peak_mb:.0f} MB for a {FLOOD_MB} MB flood"
    wbrepo.assert_consistent()
