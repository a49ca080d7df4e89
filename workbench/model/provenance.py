"""Who acts, and how wb knows: the provenance every event records (`actor`, `via`, `tty`, and `proof` when a
person proved it).

An actor is a claim; `via` and `tty` say what it rests on. `via` is the door the command came through:
`terminal` (wb run by hand at a terminal), `script` (wb run by a program: no terminal), `mcp` (the MCP
server), `hook` (a coding agent's hook), `api` (Python importing wb), `edit` (a file edited outside wb, found
on the next load), `git` (what git brought: a merge driver, a sync), `wb` (wb's own bookkeeping) and `web`
(the page of a `wb serve --act` a person started, web/acting.py). A person-only action carries `proof`: how the
person was proven (`tty-code`: a code shown on /dev/tty and typed back there; `web-token`: the page's session,
opened with the one-time token shown on that person's terminal). The process-wide default is set once per
entry point (`establish`); the API's is an agent's.

Known agent environments (the markers their clients put in the environment of the commands they run,
`model/agentenv.py`) make an actor an agent whatever it claims.
"""

from __future__ import annotations

import os

from workbench.model import agentenv

TYPE_CHECKING = False  # not typing's: this module is on the hook path, which imports no typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

VIA = ("terminal", "script", "mcp", "hook", "api", "edit", "git", "wb", "web")

# the markers coding agents' clients set in the commands they run: one list, in model/agentenv.py
AGENT_ENV_MARKERS = tuple(name for name, _client in agentenv.AGENT_ENV_MARKERS)


class Who:
    """An actor and how it was established. Immutable by convention (a plain class: no dataclasses import on
    the hook path)."""

    __slots__ = ("actor", "via", "tty", "proof")

    def __init__(self, actor: str, via: str, tty: bool = False, proof: str | None = None) -> None:
        self.actor = actor
        self.via = via
        self.tty = tty
        self.proof = proof

    @property
    def proven_person(self) -> bool:
        return self.actor == "human" and self.proof is not None

    def fields(self) -> dict[str, Any]:
        """What an event records of it, beside `actor`."""
        out: dict[str, Any] = {"via": self.via, "tty": self.tty}
        if self.proof:
            out["proof"] = self.proof
        return out

    def __repr__(self) -> str:
        return f"Who({self.actor!r}, {self.via!r}, tty={self.tty}, proof={self.proof!r})"


API = Who("agent", "api")
_current: list[Who] = [API]


def establish(who: Who) -> Who:
    """Make `who` the process's default actor (each entry point sets its own); returns the one it replaces."""
    before = _current[0]
    _current[0] = who
    return before


def current() -> Who:
    return _current[0]


def agent_marker(environ: Mapping[str, str] | None = None) -> str | None:
    """The first agent-environment marker set in `environ` (default: this process's), or None."""
    return agentenv.agent_marker(os.environ if environ is None else environ)


def ancestor_agent(max_depth: int = 64) -> str | None:
    """An agent marker in the environment of any ancestor process (Linux /proc; None where it cannot be read):
    `env -u CLAUDECODE wb …` still runs under the agent's shell, whose environment holds the marker."""
    pid = os.getppid()
    for _ in range(max_depth):
        if pid <= 1:
            return None
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                raw = fh.read()
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            return None
        env = {}
        for item in raw.split(b"\0"):
            key, sep, value = item.partition(b"=")
            if sep:
                env[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
        found = agent_marker(env)
        if found:
            return f"{found} (in the environment of process {pid})"
        try:  # the parent's pid: the field after the ")" that ends the command name, then the state
            pid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (ValueError, IndexError):
            return None
    return None
