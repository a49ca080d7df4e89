"""`claim` and `sync` through the real MCP client SDK over stdio, against `wb mcp` in two clones of one bare
remote: the agent of one clone wins a task, the other's claim of it is refused naming the holder, and the
`sync` tool brings the claim to the other clone (issue 15 §5)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WB_ARGV, about_git, run_wb
from tests.integrations.test_mcp import ok, server_env, text_of
from tests.sync.helpers import board, clone, make_remote

pytest.importorskip("mcp")
jsonschema = pytest.importorskip("jsonschema")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

pytestmark = about_git  # wb sync and claims between clones, over a git remote (a SQLite workbench has no state branch)


def as_agent(repo: Path, agent: str, body: Any) -> Any:
    params = StdioServerParameters(command=sys.executable, args=[*WB_ARGV[1:], "mcp"], cwd=str(repo),
                                   env={**server_env(), "WB_AGENT": agent, "PATH": os.environ["PATH"]})

    async def main() -> Any:
        with anyio.fail_after(90):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def test_one_agent_wins_a_task_over_mcp_and_the_other_is_told_who_holds_it(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "Parse the config").returncode == 0
    assert run_wb(a, "sync").returncode == 0

    async def b_claims(session: ClientSession) -> dict[str, Any]:
        schemas = {t.name: t.output_schema for t in (await session.list_tools()).tools}
        synced, claimed = await session.call_tool("sync", {}), await session.call_tool("claim", {})  # no id: first
        for name, result in (("sync", synced), ("claim", claimed)):
            assert result.structured_content == ok(result), name
            jsonschema.validate(ok(result), schemas[name])
        assert ok(synced)["pushed"] is False  # took A's task, nothing of its own
        return ok(claimed)

    won = as_agent(b, "agent-b", b_claims)
    assert won["id"] == "T-001" and won["agent"] == "agent-b" and won["published"] is True

    async def a_claims(session: ClientSession) -> tuple[Any, dict[str, Any]]:
        refused = await session.call_tool("claim", {"id": "T-001"})
        synced = ok(await session.call_tool("sync", {}))
        return refused, synced

    refused, synced = as_agent(a, "agent-a", a_claims)
    assert refused.is_error and "agent-b" in text_of(refused), text_of(refused)
    assert "\n" not in text_of(refused)
    assert synced["pushed"] is False  # A holds nothing of its own to publish
    [task] = board(a)["tasks"]
    assert task["claim"]["agent"] == "agent-b"  # the claim reached A's clone


def test_session_start_syncs_first_when_the_config_says_so(tmp_path: Path) -> None:
    """`sync.on_session_start: true`: the agent's SessionStart hook fetches the shared board before it tells
    the agent where to start; offline, it starts from the local state with a warning."""
    import json
    import shutil

    from tests.integrations.hookfixtures import fixture, hook

    remote = make_remote(tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    config = a / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + "sync: {on_session_start: true}\n")
    assert run_wb(a, "validate").returncode == 0
    # a setting that fetches and pushes by itself applies once a person trusted it (docs/security.md)
    from tests.person import as_person

    assert as_person(a, "trust", lines=["y"]).returncode == 0
    assert run_wb(b, "task", "add", "Added on B").returncode == 0 and run_wb(b, "sync").returncode == 0
    started = hook(a, fixture("claude-code", "SessionStart", a))
    assert started.returncode == 0 and started.stderr == "", started.stderr
    assert "on_session_start" in config.read_text(), config.read_text()
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "T-001" in context or "1 todo" in context, context
    assert [t["title"] for t in board(a)["tasks"]] == ["Added on B"]
    shutil.rmtree(remote)  # offline
    again = hook(a, fixture("claude-code", "SessionStart", a))
    assert again.returncode == 0 and "sync at session start failed" in again.stderr
    assert "additionalContext" in again.stdout
