"""The inter-process workbench lock: flock on a sidecar file, with a timeout that ends in Busy (exit 6).

flock is released by the kernel when its holder dies, so a kill -9 never leaves the workbench locked;
the pid written into the file is only a hint for `wb doctor` and error messages.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from workbench.errors import Busy


class WorkbenchLock:
    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        deadline = time.monotonic() + self.timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _holder(fd)
                    os.close(fd)
                    who = f" (pid {holder})" if holder else ""
                    raise Busy(
                        f"another wb process holds the workbench lock{who} for more than {self.timeout:g}s; "
                        "retry when it finishes (WB_LOCK_TIMEOUT raises the wait)"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        os.pwrite(fd, str(os.getpid()).encode().ljust(12), 0)  # a hint for messages; no truncate: it costs ms
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WorkbenchLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(path: Path) -> str | None:
    """Who holds the lock at `path` now: None when nobody does, else its pid hint ("" when it left none). A
    probe: the lock is taken and given back at once when free."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    except BlockingIOError:
        return _holder(fd)
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
