"""Acceptance commands: the checks `wb task done` runs before a task may be done."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any


def run_acceptance(cmd: str, cwd: Path, timeout: float) -> dict[str, Any]:
    """Run one acceptance command through the shell (they are the user's own shell commands)."""
    start = time.monotonic()
    # its own process group, so a timeout stops everything the command started, not just the shell
    proc = subprocess.Popen(cmd, shell=True, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
        outcome = "passed" if code == 0 else f"exited {code}"
        tail = out.decode(errors="replace")[-400:]
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        code, outcome, tail = 124, f"timed out after {timeout:g}s", ""
    return {"cmd": cmd, "exit": code, "outcome": outcome, "seconds": round(time.monotonic() - start, 3),
            "output_tail": tail}
