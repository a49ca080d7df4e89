"""The environment variables coding agents set in the commands they run: who is acting, as far as the
environment says.

A marker is evidence, not proof: any process may set or unset it (a person can export `CLAUDECODE=1`, an agent
can run `env -u CLAUDECODE wb …`). wb uses it to label provenance, never to grant anything.

What each marker is, and where it was verified (December 2026):

- `CLAUDECODE=1` — Claude Code sets it in the shell its Bash tool runs (anthropics/claude-code issue #531,
  "set a CLAUDECODE environment variable inside of the claude code bash environment": shipped in v0.2.47).
- `CLAUDE_CODE_ENTRYPOINT` — Claude Code's launcher (`cli`, `sdk-cli`, `sdk-py`, `sdk-ts`…), exported to every
  child; the Claude Agent SDK's own tests assert `CLAUDE_CODE_ENTRYPOINT == "sdk-py"` in the spawned CLI's
  environment, and tools that spawn a clean `claude` strip it together with `CLAUDECODE`.
- `CODEX_SANDBOX_NETWORK_DISABLED=1` — Codex CLI sets it whenever its `shell` tool runs a command in the
  sandbox (openai/codex AGENTS.md: "You operate in a sandbox where `CODEX_SANDBOX_NETWORK_DISABLED=1` will be
  set whenever you use the `shell` tool").
- `CODEX_SANDBOX` — Codex CLI sets it for processes spawned under its sandbox (`seatbelt` on macOS; openai/codex
  `CODEX_SANDBOX_ENV_VAR` in codex-rs/core `spawn`).
- `CODEX_THREAD_ID` — Codex CLI exports the thread (session) id into the shells it spawns (seen in public
  scripts that detect "running under Codex"; openai/codex#19937 notes it is not passed to MCP servers).
- `CODEX_SESSION_ID`, `CODEX_TOOL_CALL_ID`, `CODEX_CI` — Codex's `exec_command` sets them too.

Verified with the real clients (tests/clients/test_agent_is_no_person.py, which prints what each sets): Claude
Code 2.1.332's Bash tool sets `CLAUDECODE` and `CLAUDE_CODE_ENTRYPOINT`; Codex 0.171.0's `exec_command` (`codex
exec`, no sandbox) sets `CODEX_CI`, `CODEX_SESSION_ID`, `CODEX_THREAD_ID` and `CODEX_TOOL_CALL_ID` (and
`CODEX_HOME`, `CODEX_VERSION`, which a person's shell may hold too: not markers).

The order is the order `agent_marker` tries them: the most specific first.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the hook path may import this module
if TYPE_CHECKING:
    from collections.abc import Mapping

AGENT_ENV_MARKERS: tuple[tuple[str, str], ...] = (
    ("CLAUDECODE", "claude-code"),
    ("CLAUDE_CODE_ENTRYPOINT", "claude-code"),
    ("CODEX_SANDBOX_NETWORK_DISABLED", "codex"),
    ("CODEX_SANDBOX", "codex"),
    ("CODEX_THREAD_ID", "codex"),
    ("CODEX_SESSION_ID", "codex"),
    ("CODEX_TOOL_CALL_ID", "codex"),
    ("CODEX_CI", "codex"),
)
"""(variable, client) pairs: a command whose environment holds the variable (non-empty) runs under that client."""


def agent_marker(environ: Mapping[str, str]) -> str | None:
    """The name of the first agent marker set (non-empty) in `environ`, or None."""
    for name, _client in AGENT_ENV_MARKERS:
        if environ.get(name):
            return name
    return None


def agent_client(environ: Mapping[str, str]) -> str | None:
    """The client (`claude-code`, `codex`) the first marker set in `environ` names, or None."""
    for name, client in AGENT_ENV_MARKERS:
        if environ.get(name):
            return client
    return None
