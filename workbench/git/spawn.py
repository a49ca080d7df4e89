"""The two git processes every commit starts (git/refs.py's `git update-ref --stdin`, git/gitconfig.py's `git
config -z --list`), started with os.posix_spawnp rather than subprocess: `import subprocess` brings signal,
selectors, locale, contextlib and threading, ~3 ms of a `wb task add` that needs none of them (issue 33).

`Git` is the small part of subprocess.Popen those two use, done as Popen does it on POSIX: the child gets the
pipes (or /dev/null) on fds 0-2 and no other descriptor (Python opens every other one non-inheritable),
SIGPIPE and SIGXFSZ back at their defaults (Python ignores SIGPIPE, and an ignored signal stays ignored across
exec: Popen's restore_signals), and the working directory as `git -C DIR` (posix_spawn takes no cwd; git
changes to it before anything else, as if started there). Every other git command goes through
git/plumbing.run_git and subprocess, as before."""

from __future__ import annotations

import os
import time

from workbench.errors import GitError

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, BinaryIO

PIPE, DEVNULL = "pipe", "devnull"


class Git:
    """`git -C cwd ARGS…` running, its stdin, stdout and stderr each a pipe (a binary file object here, as
    Popen's), /dev/null or none of ours (`None`: inherited)."""

    def __init__(self, cwd: Path, args: list[str], *, stdin: str | None = None, stdout: str | None = None,
                 stderr: str | None = None) -> None:
        self.args = ["git", "-C", os.fspath(cwd), *args]
        self.returncode: int | None = None
        self.stdin: BinaryIO | None = None
        self.stdout: BinaryIO | None = None
        self.stderr: BinaryIO | None = None
        self._popen: Any = None
        if not hasattr(os, "posix_spawnp"):  # Windows: subprocess, as before
            self._start_popen(cwd, args, (stdin, stdout, stderr))
            return
        from _signal import SIGPIPE, SIGXFSZ  # the numbers alone: signal.py would wrap them in enums

        theirs: list[int] = []  # the child's ends, closed here once it started
        actions = []
        try:
            for fd, how in ((0, stdin), (1, stdout), (2, stderr)):
                if how is None:
                    continue
                if how == DEVNULL:
                    child = os.open(os.devnull, os.O_RDWR)
                    theirs.append(child)
                else:
                    read, write = os.pipe()
                    child, parent = (read, write) if fd == 0 else (write, read)
                    theirs.append(child)
                    setattr(self, ("stdin", "stdout", "stderr")[fd], os.fdopen(parent, "wb" if fd == 0 else "rb"))
                actions.append((os.POSIX_SPAWN_DUP2, child, fd))
            try:
                self.pid = os.posix_spawnp("git", self.args, os.environ, file_actions=actions,
                                           setsigdef=(SIGPIPE, SIGXFSZ))
            except FileNotFoundError:
                raise GitError("git is not installed or not on PATH") from None
        except BaseException:
            for f in (self.stdin, self.stdout, self.stderr):
                if f is not None:
                    f.close()
            raise
        finally:
            for fd in theirs:
                os.close(fd)

    def _start_popen(self, cwd: Path, args: list[str], how: tuple[str | None, str | None, str | None]) -> None:
        import subprocess

        kinds = {None: None, PIPE: subprocess.PIPE, DEVNULL: subprocess.DEVNULL}
        try:
            self._popen = subprocess.Popen(["git", *args], cwd=cwd, stdin=kinds[how[0]], stdout=kinds[how[1]],
                                           stderr=kinds[how[2]])
        except FileNotFoundError:
            raise GitError("git is not installed or not on PATH") from None
        self.pid = self._popen.pid
        self.stdin, self.stdout, self.stderr = self._popen.stdin, self._popen.stdout, self._popen.stderr

    def poll(self) -> int | None:
        """Its exit status when it has ended (reaped), else None."""
        if self._popen is not None:
            self.returncode = self._popen.poll()
        elif self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self._popen is not None:
            self.returncode = self._popen.wait()
        elif self.returncode is None:
            _pid, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        if self._popen is not None:
            self._popen.kill()
            return
        from _signal import SIGKILL

        if self.poll() is None:
            os.kill(self.pid, SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[bytes, bytes]:
        """Close its stdin, read its stdout and stderr to their ends and reap it, as Popen.communicate: (its
        stdout, its stderr), b"" for one that is not a pipe. TimeoutError when it has not ended within `timeout`
        seconds (it is left running: the caller kills it and communicates again)."""
        if self._popen is not None:
            import subprocess

            try:
                out, err = self._popen.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise TimeoutError(f"{' '.join(self.args)} did not end within {timeout} s") from None
            self.returncode = self._popen.returncode
            return out or b"", err or b""
        import select

        if self.stdin is not None and not self.stdin.closed:
            try:
                self.stdin.close()
            except BrokenPipeError:  # it exited without reading it all: what it said tells why
                pass
        streams = {f.fileno(): (name, f) for name, f in (("out", self.stdout), ("err", self.stderr))
                   if f is not None and not f.closed}
        chunks: dict[str, list[bytes]] = {"out": [], "err": []}
        poller = select.poll()
        for fd in streams:
            poller.register(fd, select.POLLIN)
        deadline = None if timeout is None else time.monotonic() + timeout
        while streams:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(f"{' '.join(self.args)} did not end within {timeout} s")
            for fd, _event in poller.poll(None if left is None else left * 1000):
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[streams[fd][0]].append(data)
                else:
                    poller.unregister(fd)
                    streams.pop(fd)[1].close()
        self.wait()
        return b"".join(chunks["out"]), b"".join(chunks["err"])
