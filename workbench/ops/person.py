"""Proving a person: a code shown on /dev/tty and typed back there.

A person is someone at a terminal who confirms on the controlling terminal — not a flag (`--actor human`), not
`isatty()` of stdin (an agent's `script -qc …` makes a pseudo-terminal), not MCP, and never a process in a coding
agent's environment (`model/provenance.AGENT_ENV_MARKERS`, in wb's environment or any ancestor's), nor CI. The
code is random and shown only on /dev/tty, so an answer piped in ahead (`echo y | script -qc …`) does not match.

What this is not: a boundary against a determined program running as the same user, which can drive a
pseudo-terminal of its own and read the code off it. It makes an agent's claim to be a person a deliberate act
that the record shows, instead of a flag it is taught (docs/security.md, the trust model).
"""

from __future__ import annotations

import os

from workbench.errors import PersonRequired
from workbench.model import provenance
from workbench.model.provenance import Who

PROOF = "tty-code"

# the command line this process runs (`wb …`), set by the entry point: what a refusal tells a person to run
_argv: list[str] = []


def set_command_line(args: list[str]) -> None:
    _argv[:] = args


def command_line(drop: tuple[str, str] | None = None) -> str:
    """`wb ARGS…` as this process was run, shell-quoted, without the option pair `drop` (`--actor human`)."""
    import shlex

    args = list(_argv)
    if drop:
        flag, value = drop
        for i in range(len(args) - 1):
            if args[i] == flag and args[i + 1] == value:
                del args[i:i + 2]
                break
        else:
            args = [a for a in args if a != f"{flag}={value}"]
    return " ".join(["wb", *(shlex.quote(a) for a in args)])


def terminal_who() -> Who:
    """Who a CLI command is by default: a person at a terminal (claimed, not proven) when stdin is a terminal
    outside an agent's environment, an agent's process tree and CI; otherwise an agent's script."""
    if provenance.agent_marker() is not None:
        return Who("agent", "script", _stdin_tty())
    if _stdin_tty() and not os.environ.get("CI"):
        # a terminal under an agent (`env -u CLAUDECODE script -qc 'wb note …'` in its shell) is the agent's:
        # the ancestry check applies to every event's actor, not only to person-only actions (issue 30)
        if provenance.ancestor_agent():
            return Who("agent", "script", True)
        return Who("human", "terminal", True)
    return Who("agent", "script", _stdin_tty())


def _stdin_tty() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def why_not_person() -> str | None:
    """Why this process cannot prove a person, or None when it may ask one on /dev/tty. The MCP server is an
    agent's door whatever terminal it was started from."""
    if provenance.current().via == "mcp":
        return "MCP is an agent's door; a person runs it at a terminal"
    marker = provenance.agent_marker()
    if marker:
        return f"wb runs in an agent's environment ({marker})"
    if not _stdin_tty():
        return "not run at a terminal"
    if os.environ.get("CI"):
        return "CI is set"
    marker = provenance.ancestor_agent()
    if marker:
        return f"wb runs under an agent ({marker})"
    return None


def require_person(action: str, command: str) -> Who:
    """The person who confirms `action` on /dev/tty (and, from then on, the process's actor); PersonRequired
    when there is none. An already proven person is not asked twice in one process."""
    who = provenance.current()
    if who.proven_person:
        return who
    why = why_not_person()
    if why is not None:
        raise PersonRequired(action, command, why)
    import secrets  # here, not at the top: 12 ms of imports every wb command would pay for a rare question

    code = f"{secrets.randbelow(9000) + 1000}"
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        raise PersonRequired(action, command, "no terminal to confirm on") from None
    try:
        os.write(tty, f"wb: {action}. A person confirms by typing {code}: ".encode())
        answer = read_line(tty)
    finally:
        os.close(tty)
    if answer.strip() != code:
        raise PersonRequired(action, command, "not confirmed")
    person = Who("human", "terminal", True, PROOF)
    provenance.establish(person)
    return person


def tell_person(text: str) -> None:
    """`text` on the controlling terminal alone (/dev/tty), where a person proved themselves: not on stdout or
    stderr, which a program that started wb may read (`wb serve --act`'s one-time link)."""
    tty = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    try:
        os.write(tty, text.encode())
    finally:
        os.close(tty)


def read_line(fd: int, limit: int = 64) -> str:
    """One line typed at the terminal `fd` (at most `limit` bytes), without its end."""
    out = b""
    while len(out) < limit:
        chunk = os.read(fd, 1)
        if not chunk or chunk in (b"\n", b"\r"):
            break
        out += chunk
    return out.decode("utf-8", "replace")
