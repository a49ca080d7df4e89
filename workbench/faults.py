"""Test-only fault points: WB_FAULT=<name> makes the process SIGKILL itself when it reaches <name>.

Crash tests use this to stop a real `wb` process exactly at a dangerous step of the write path.
WB_FAULT may list several names separated by commas; WB_FAULT_SKIP=N lets the first N hits pass.
"""

from __future__ import annotations

import os

_ARMED = os.environ.get("WB_FAULT")
_skip = int(os.environ.get("WB_FAULT_SKIP", "0") or 0)


def point(name: str) -> None:
    global _skip
    if _ARMED is None or name not in _ARMED.split(","):
        return
    if _skip > 0:
        _skip -= 1
        return
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
