"""A person at a real terminal, for the tests: wb runs on a pseudo-terminal that is its controlling terminal
(`pty.fork`: a new session, the pty as stdin, stdout, stderr and /dev/tty), and the test reads what wb shows
there and types back the code it asks for — what a person at the keyboard does. `answer` types something else
(a person who does not confirm), `None` types nothing and closes the terminal.

The environment is the test's, without CI and without any agent client's markers: a person's own shell."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.model.provenance import AGENT_ENV_MARKERS

WB_ARGV = [sys.executable, "-m", "workbench.cli.main"]
CODE = re.compile(rb"confirms by typing (\d{4}): ")


@dataclass
class Terminal:
    returncode: int
    output: str  # everything wb wrote to the terminal (stdout and stderr are the same device)
    asked: int  # how many times wb asked for a code


def person_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    out = dict(os.environ if env is None else env)
    for name in ("CI", *AGENT_ENV_MARKERS):
        out.pop(name, None)
    out.setdefault("TERM", "dumb")
    return out


def _spawn(cwd: Path, args: Sequence[str], env: Mapping[str, str] | None, argv: Sequence[str]) -> tuple[int, int]:
    environment = person_env(env)
    pid, fd = pty.fork()
    if pid == 0:  # the child: its own session, the pty its controlling terminal
        try:
            os.chdir(cwd)
            os.execvpe(argv[0], [*argv, *args], environment)
        finally:
            os._exit(127)
    return pid, fd


def as_person(cwd: Path, *args: str, answer: str | None = "code", env: Mapping[str, str] | None = None,
              timeout: float = 60, argv: Sequence[str] = WB_ARGV, lines: Sequence[str] = ()) -> Terminal:
    """Run `wb ARGS…` at a terminal of its own as a person would; `answer="code"` types the code wb shows.
    `lines`: typed in order at any other prompt (`Allow? [y/N]`)."""
    pid, fd = _spawn(cwd, args, env, argv)
    out = b""
    asked = 0
    typed = 0
    pending = list(lines)
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                raise TimeoutError(f"wb {' '.join(args)} did not finish in {timeout}s at the terminal:\n"
                                   + out.decode(errors="replace"))
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal (it exited)
                break
            if not chunk:
                break
            out += chunk
            codes = CODE.findall(out)
            if len(codes) > asked:
                asked = len(codes)
                if answer is None:
                    os.write(fd, b"\x04")
                else:
                    typed_answer = codes[-1] if answer == "code" else answer.encode()
                    os.write(fd, typed_answer + b"\n")
            elif pending and out.count(b"[y/N]") > typed:
                typed += 1
                os.write(fd, pending.pop(0).encode() + b"\n")
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return Terminal(code, out.decode("utf-8", "replace").replace("\r\n", "\n"), asked)


class PersonAtTerminal:
    """A long-running `wb ARGS…` (`wb serve --act`) at a terminal of its own, as `as_person` runs one that
    ends: the person types the code wb asks for, and the test reads what the terminal shows as it comes."""

    def __init__(self, cwd: Path, *args: str, env: Mapping[str, str] | None = None,
                 argv: Sequence[str] = WB_ARGV) -> None:
        self.args = args
        self.pid, self.fd = _spawn(cwd, args, env, argv)
        self.out = b""
        self.returncode: int | None = None

    def _read(self, left: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        self.out += chunk
        return bool(chunk)

    def expect(self, pattern: bytes, timeout: float = 60) -> re.Match[bytes]:
        """The first match of `pattern` on the terminal, typing the code wb asks for on the way."""
        deadline = time.monotonic() + timeout
        typed = 0
        while True:
            codes = CODE.findall(self.out)
            if len(codes) > typed:
                typed = len(codes)
                os.write(self.fd, codes[-1] + b"\n")
            found = re.search(pattern, self.out)
            if found:
                return found
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"wb {' '.join(self.args)}: no {pattern!r} on the terminal:\n"
                                     + self.text)

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "replace").replace("\r\n", "\n")

    def stop(self) -> int:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:  # pragma: no cover - it ended already
                pass
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self._read(deadline - time.monotonic()):
                pass
            os.close(self.fd)
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode
