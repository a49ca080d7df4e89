"""The environment markers coding agents set in the commands they run (model/agentenv): the first one set
names the agent; an empty value is not a marker."""

from __future__ import annotations

import os
import subprocess
import sys

from workbench.model.agentenv import AGENT_ENV_MARKERS, agent_client, agent_marker


def test_the_first_marker_set_is_named() -> None:
    assert agent_marker({}) is None and agent_client({"PATH": "/bin"}) is None
    assert agent_marker({"CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli"}) == "CLAUDECODE"
    assert agent_marker({"CLAUDE_CODE_ENTRYPOINT": "sdk-py"}) == "CLAUDE_CODE_ENTRYPOINT"
    assert agent_marker({"CODEX_SANDBOX": "seatbelt", "CODEX_THREAD_ID": "t"}) == "CODEX_SANDBOX"
    assert agent_client({"CODEX_SANDBOX_NETWORK_DISABLED": "1"}) == "codex"
    assert agent_marker({"CLAUDECODE": ""}) is None  # unset by `env CLAUDECODE= …`: no marker


def test_every_marker_names_a_known_client_once() -> None:
    names = [name for name, _ in AGENT_ENV_MARKERS]
    assert len(names) == len(set(names))
    assert {client for _, client in AGENT_ENV_MARKERS} == {"claude-code", "codex"}


def test_a_child_process_inherits_the_marker() -> None:
    """What Claude Code's Bash tool does: the marker in the environment of the commands it runs, and theirs."""
    env = {k: v for k, v in os.environ.items() if k not in dict(AGENT_ENV_MARKERS)}
    probe = "import os; from workbench.model.agentenv import agent_marker; print(agent_marker(os.environ))"
    out = subprocess.run([sys.executable, "-c", probe], env={**env, "CLAUDECODE": "1"}, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "CLAUDECODE"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "None"
