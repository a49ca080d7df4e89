"""Test-only fault points: WB_FAULT=<name> makes the process SIGKILL itself when it reaches <name>.

Crash tests use this to stop a real `wb` process exactly at a dangerous step of the write path.
WB_FAULT may list several names separated by commas; WB_FAULT_SKIP=N lets the first N hits pass.

WB_PAUSE=<name> with WB_PAUSE_FILE=<path> holds the process at <name> instead: it creates `<path>.here`
and waits (at most a minute) until `<path>.go` exists, so a scenario test can run the user's own git
command exactly there — between wb's log append and its commit, say — and then let wb go on.
"""

from __future__ import annotations

import os

_ARMED = os.environ.get("WB_FAULT")
_PAUSE = os.environ.get("WB_PAUSE")
_skip = int(os.environ.get("WB_FAULT_SKIP", "0") or 0)


def point(name: str) -> None:
    global _skip
    if _PAUSE is not None and name in _PAUSE.split(","):
        _hold(name)
    if _ARMED is None or name not in _ARMED.split(","):
        return
    if _skip > 0:
        _skip -= 1
        return
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def _hold(name: str) -> None:
    import time
    from pathlib import Path

    base = os.environ.get("WB_PAUSE_FILE")
    if not base:
        return
    Path(base + ".here").write_text(name)
    deadline = time.monotonic() + 60
    while not Path(base + ".go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def no_space(name: str, filename: str) -> None:
    """WB_FAULT=<name> makes the write at <name> fail as a full disk does (OSError ENOSPC), instead of a kill."""
    if _ARMED is not None and name in _ARMED.split(","):
        import errno

        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), filename)
