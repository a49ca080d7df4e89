"""The inter-process workbench lock: flock on a sidecar file, taken in turn through a queue of tickets, with a
timeout that ends in Busy (exit 6).

flock is released by the kernel when its holder dies, so a kill -9 never leaves the workbench locked; the pid
written into the file is only a hint for `wb doctor` and error messages.

**Fair.** flock alone is a scramble: every release wakes the waiters, and a process that has just arrived
wins as often as one that has waited ten seconds — with twenty writers, some waited out the timeout while
the lock changed hands a hundred times. So a writer first takes a ticket: a file in `queue/` (in the
worktree's git directory, out of `git status`'s view) named by a number one above the highest there, made
under a temporary name and flock'ed before it is linked into place, and flock'ed as long as its writer lives.
It then waits for the ticket just ahead of its own to go away — the writer ahead released the lock and
removed it, or died and the kernel let go of its flock, and the ticket is swept — and takes the flock once no
ticket is ahead of it. The flock still gives mutual exclusion (a writer without a queue — `wb migrate` — and
`wb doctor`'s probe take it too); the queue only orders the writers, first come, first served.

**The timeout counts from the last hand-over**, not from the arrival: a writer gives up (Busy) when the
queue ahead of it has not moved for `timeout` seconds — the writer holding the lock has held it that long —
not when it has waited that long behind others who each took their turn. Its wait therefore scales with the
writers ahead of it when it came, a number that is fixed then (later writers queue behind it): the queue can
grow, but no writer's wait grows with it, and no writer starves.

**A wait is reported**: `report_waits(fn)` (the CLI registers one) is called with the number of writers
ahead and the seconds waited, a few times a second while a writer waits, and once more with `done=True`.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from workbench.errors import Busy

# (writers ahead, holder's pid hint, seconds waited, done) -> None: how a wait is shown (the CLI's)
WaitReport = Callable[[int, str, float, bool], None]
_reporter: WaitReport | None = None
_REPORT_EVERY = 0.2  # seconds between two reports of one wait
_WIDTH = 12  # digits of a ticket's number: names sort as numbers


def report_waits(fn: WaitReport | None) -> None:
    """Register how a wait for the lock is shown, for every lock of this process (None: not at all)."""
    global _reporter
    _reporter = fn


class WorkbenchLock:
    def __init__(self, path: Path, timeout: float, queue: Path | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self.queue = queue  # the tickets' directory; None: no queue (the flock alone)
        self._fd: int | None = None
        self._ticket: tuple[int, str] | None = None  # (fd, name) of this writer's ticket while it has one

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            if self.queue is not None:
                try:
                    self._ticket = _take_ticket(self.queue)
                except OSError:  # a queue that cannot be made (no hard links here?): the flock alone
                    self._ticket = None
            self._wait_turn(fd)
        except BaseException:
            self._drop_ticket()
            os.close(fd)
            raise
        os.pwrite(fd, str(os.getpid()).encode().ljust(12), 0)  # a hint for messages; no truncate: it costs ms
        self._fd = fd

    def _wait_turn(self, fd: int) -> None:
        started = time.monotonic()
        moved = started  # when the queue ahead last moved
        reported = started
        shown = False
        ahead_fd: tuple[int, str] | None = None  # the nearest ticket ahead (fd, name), watched until it goes
        ahead_seen: list[str] = []
        delay = 0.001
        try:
            while True:
                ahead = self._ahead()
                if ahead != ahead_seen:
                    if len(ahead) < len(ahead_seen) or not ahead_seen:
                        moved = time.monotonic()
                    ahead_seen = ahead
                if ahead:
                    assert self.queue is not None
                    if ahead_fd is None or ahead_fd[1] != ahead[-1]:
                        _close(ahead_fd)
                        ahead_fd = _open_ticket(self.queue, ahead[-1])
                    if ahead_fd is not None and _gone(ahead_fd[0]):  # released or dead: its turn is over
                        _sweep(self.queue, ahead_fd)
                        _close(ahead_fd)
                        ahead_fd = None
                        moved = time.monotonic()
                        delay = 0.001
                        continue
                else:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        pass  # a writer without a queue (wb migrate) or doctor's probe holds it
                now = time.monotonic()
                if now - moved >= self.timeout:
                    holder = _ticket_pid(self.queue, ahead) or _holder(fd)
                    who = f" (pid {holder})" if holder else ""
                    raise Busy(f"another wb process holds the workbench lock{who} for more than {self.timeout:g}s; "
                               "retry when it finishes (WB_LOCK_TIMEOUT raises the wait)")
                if _reporter is not None and now - reported >= _REPORT_EVERY:
                    reported = now
                    shown = True
                    _reporter(max(1, len(ahead)), _ticket_pid(self.queue, ahead), now - started, False)
                time.sleep(delay)
                # the next in line looks often (the hand-over is its wait); the others, less
                delay = min(delay * 2, 0.005 if len(ahead) <= 1 else 0.025)
        finally:
            _close(ahead_fd)
            if shown and _reporter is not None:
                _reporter(0, "", time.monotonic() - started, True)

    def _ahead(self) -> list[str]:
        """The tickets ahead of this writer's, in order (the nearest last)."""
        if self._ticket is None or self.queue is None:
            return []
        mine = self._ticket[1]
        return sorted(n for n in _tickets(self.queue) if n < mine)

    def behind(self) -> bool:
        """Whether a live writer is queued behind this one now (asked by the holder: group commit). The tickets
        of writers that died waiting are swept on the way."""
        if self._ticket is None or self.queue is None:
            return False
        mine = self._ticket[1]
        for name in sorted(n for n in _tickets(self.queue) if n > mine):
            ticket = _open_ticket(self.queue, name)
            if ticket is None:
                continue
            try:
                if not _gone(ticket[0]):
                    return True
                _sweep(self.queue, ticket)
            finally:
                _close(ticket)
        return False

    def release(self) -> None:
        if self._fd is not None:
            self._drop_ticket()  # first: the writer behind may take the flock the moment it is let go
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def _drop_ticket(self) -> None:
        if self._ticket is None:
            return
        fd, name = self._ticket
        self._ticket = None
        assert self.queue is not None
        try:
            os.unlink(self.queue / name)
        except FileNotFoundError:
            pass
        os.close(fd)

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


# -- the tickets ---------------------------------------------------------------------------------------------
def _tickets(queue: Path) -> list[str]:
    try:
        return [n for n in os.listdir(queue) if len(n) == _WIDTH and n.isdigit()]
    except FileNotFoundError:
        return []


def _take_ticket(queue: Path) -> tuple[int, str]:
    """A ticket one above the highest in the queue: flock'ed under a temporary name first, so that no writer
    ever sees it unlocked (and sweeps it as a dead writer's) before its owner holds it."""
    queue.mkdir(parents=True, exist_ok=True)
    tmp = queue / f".new-{os.getpid()}-{time.monotonic_ns()}"
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, str(os.getpid()).encode())
        number = max((int(n) for n in _tickets(queue)), default=0) + 1
        while True:
            name = f"{number:0{_WIDTH}d}"
            try:
                os.link(tmp, queue / name)
                break
            except FileExistsError:  # another writer took it a moment ago: the next one
                number += 1
    except BaseException:
        os.close(fd)
        raise
    finally:
        os.unlink(tmp)
    return fd, name


def _ticket_pid(queue: Path | None, ahead: list[str]) -> str:
    """The pid written in the first ticket of the queue: the writer that holds the lock, or is taking it ("":
    none, as when the holder takes no ticket — the lock file's own hint may be a writer long gone)."""
    if queue is None or not ahead:
        return ""
    try:
        return (queue / ahead[0]).read_text()[:12].strip()
    except OSError:
        return ""


def _open_ticket(queue: Path, name: str) -> tuple[int, str] | None:
    try:
        return os.open(queue / name, os.O_RDONLY | os.O_NOFOLLOW), name
    except FileNotFoundError:
        return None  # gone already: the next look finds the one before it


def _gone(fd: int) -> bool:
    """Whether the writer of the ticket open at `fd` has let go of it (released the lock, or died)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def _sweep(queue: Path, ticket: tuple[int, str]) -> None:
    """Remove a ticket whose writer died (one that released removed its own first): the name, if it is still
    that file."""
    fd, name = ticket
    try:
        if os.stat(queue / name).st_ino == os.fstat(fd).st_ino:
            os.unlink(queue / name)
    except FileNotFoundError:
        pass


def _close(ticket: tuple[int, str] | None) -> None:
    if ticket is not None:
        os.close(ticket[0])
