"""`wb mcp`: a real MCP client session (the SDK's stdio client) against `wb mcp` started as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import WB_ARGV, head_count, run_git
from tests.integrations.hookfixtures import FILES, board, events, state_text, stored

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

TOOLS = {"status", "task_list", "task_add", "task_update", "note", "set_state", "log", "run", "resume", "abort",
         "claim", "sync"}
TOOLS_LIST_LIMIT = 6144  # bytes of the tools/list answer: what every agent session pays in context


def server_env() -> dict[str, str]:
    keep = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_NOSYSTEM",
            "HOME", "NO_COLOR", "PYTHONPATH", "WB_TRUST_REPO_COMMANDS")  # the suite trusts the commands it writes
    return {k: v for k, v in os.environ.items() if k in keep or k.startswith("COVERAGE_")}  # tools/coverage.sh


def with_client(repo: Path, body: Any) -> Any:
    """Start `wb mcp` in `repo` through the SDK's stdio client, initialize, and run `body(session)`."""
    params = StdioServerParameters(command=sys.executable, args=[*WB_ARGV[1:], "mcp"], cwd=str(repo),
                                   env=server_env())

    async def main() -> Any:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "wb"
                return await body(session)

    return anyio.run(main)


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return result.content[0].text


def ok(result: Any) -> Any:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


def test_a_session_adds_a_task_reads_status_and_refuses_bad_arguments(bench, repo: Path) -> None:
    commits_before = head_count(repo)

    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        listed = await session.list_tools()
        out["names"] = {t.name for t in listed.tools}
        out["added"] = ok(await session.call_tool("task_add", {"title": "Parse the config",
                                                               "acceptance": ["true"]}))
        out["head"] = run_git(repo, "rev-parse", "HEAD").strip() if FILES else None  # SQLite commits nothing
        out["status"] = ok(await session.call_tool("status", {}))
        out["files"] = stored(repo)
        out["commits"] = head_count(repo)
        out["missing"] = await session.call_tool("task_update", {"id": "T-999", "action": "start"})
        out["bad_status"] = await session.call_tool("task_update", {"id": "T-001", "action": "set",
                                                                    "changes": {"status": "finished"}})
        out["bad_action"] = await session.call_tool("task_update", {"id": "T-001", "action": "finish"})
        out["files_after"] = stored(repo)
        out["commits_after"] = head_count(repo)
        out["started"] = ok(await session.call_tool("task_update", {"id": "T-001", "action": "start"}))
        out["noted"] = ok(await session.call_tool("note", {"text": "Chose TOML: no implicit typing."}))
        out["tasks"] = ok(await session.call_tool("task_list", {"status": "in_progress"}))
        out["log"] = ok(await session.call_tool("log", {"limit": 2}))
        return out

    out = with_client(repo, body)
    assert out["names"] == TOOLS

    task = out["added"]["task"]
    assert task["id"] == "T-001" and task["title"] == "Parse the config" and task["acceptance"] == ["true"]
    assert [t["id"] for t in board(repo)["tasks"]] == ["T-001"]
    assert out["added"]["commit"] == out["head"] and out["added"]["summary"] == "add T-001 Parse the config"
    if FILES:
        assert run_git(repo, "show", "--name-only", "--format=", out["head"]).split() == [
            ".workbench/board.json", ".workbench/events.jsonl", ".workbench/state.md"]
    assert out["commits"] == commits_before + (1 if FILES else 0)
    assert out["status"]["board"]["total"] == 1 and out["status"]["board"]["by_status"]["todo"] == 1

    # refused: a tool error with the CLI's one-line message, and nothing written or committed
    assert out["missing"].is_error and text_of(out["missing"]) == "no task T-999 on the board (see `wb task list`)"
    bad = text_of(out["bad_status"])
    assert out["bad_status"].is_error and "\n" not in bad
    assert bad.startswith("board.json: tasks[0].status: ") and "finished" in bad
    assert out["bad_action"].is_error  # refused by the tool's schema (an enum) before wb is called
    assert out["files_after"] == out["files"] and out["commits_after"] == out["commits"]

    assert out["started"]["summary"] == "T-001 todo → in_progress"
    assert [t["id"] for t in out["tasks"]["tasks"]] == ["T-001"]
    assert "Chose TOML" in state_text(repo)
    assert [e["type"] for e in out["log"]["events"]] == ["task.start", "note.add"]
    if FILES:
        assert run_git(repo, "status", "--porcelain", "--", ".workbench").strip() == ""


def test_run_and_resume_drive_a_harness_session(bench, repo: Path) -> None:
    config = repo / ".workbench" / "config.yaml"
    steps = [{"description": "Read the issue"},
             {"description": "Say hello", "tool": "greet"},
             {"description": "Deploy to staging", "tool": "deploy", "args": {"env": "staging"}}]

    async def body(session: ClientSession) -> list[Any]:
        await session.call_tool("status", {})
        # declared while the server runs: each call reads the workbench afresh, config.yaml included
        config.write_text(config.read_text().replace(
            "tools: {}", "tools:\n  greet: {argv: [python3, -c, \"print('hi')\"], mode: mutating}").replace(
            "approvals: human", "approvals: any"))  # a pipeline's opt-in: MCP never approves as a person
        # the person who declared them trusts them (`wb trust`): MCP is an agent's door, where the CI variable
        # trusts nothing (issue 30)
        from workbench.store.config import load_config
        from workbench.store.trust import config_commands, remember

        remember(repo, config_commands(load_config(config)))
        neither = await session.call_tool("run", {"goal": "Ship it"})
        missing = await session.call_tool("run", {"goal": "Ship it", "plan": "missing.yaml"})
        assert neither.is_error and text_of(neither) == "run needs one of plan (a plan file) or steps (an inline plan)"
        assert missing.is_error and text_of(missing) == f"{repo.resolve() / 'missing.yaml'}: no such plan file"
        seen = [ok(await session.call_tool("run", {"goal": "Ship it", "steps": steps}))]
        busy = await session.call_tool("run", {"goal": "Again", "steps": steps})
        seen.append((busy.is_error, text_of(busy)))
        seen.append(ok(await session.call_tool("resume", {"decision": "approve"})))
        seen.append(ok(await session.call_tool("resume", {"result": {"ok": True}})))
        seen.append(ok(await session.call_tool("status", {})))
        return seen

    approval, busy, tool_result, done, status = with_client(repo, body)
    assert approval["done"] is False and approval["kind"] == "approval"
    assert "wb resume --approve" in approval["commands"]
    assert busy[0] and "`wb resume` continues it" in busy[1]
    assert tool_result["kind"] == "tool_result"
    assert done["done"] is True and done["reason"] == "goal_met"
    assert [s["status"] for s in done["steps"]] == ["done", "done", "done"]
    assert status["session"] is None
    assert events(repo)[-1]["type"] == "session.complete"
    if FILES:
        assert run_git(repo, "status", "--porcelain", "--", ".workbench").strip() == ""


def test_errors_before_wb_init_come_back_as_tool_errors(repo: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return await session.call_tool("status", {})

    result = with_client(repo, body)
    assert result.is_error and text_of(result) == f"no workbench in {repo.resolve()}: run `wb init` first"


def test_tools_list_answer_is_small(bench, repo: Path) -> None:
    """The exact JSON line `wb mcp` writes for tools/list, measured on the wire."""
    proc = subprocess.Popen([*WB_ARGV, "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "measure", "version": "0"}}})
        assert json.loads(proc.stdout.readline())["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        line = proc.stdout.readline()
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        watchdog.cancel()
    answer = json.loads(line)
    assert answer["id"] == 2 and {t["name"] for t in answer["result"]["tools"]} == TOOLS
    size = len(line.rstrip(b"\n"))
    print(f"tools/list answer: {size} bytes")
    assert size <= TOOLS_LIST_LIMIT, size
    for tool in answer["result"]["tools"]:
        assert len(tool["description"]) <= 120, tool["name"]
        assert '"title": "' not in json.dumps(tool["inputSchema"]), tool["name"]  # no generated titles


def test_without_the_sdk_wb_mcp_says_how_to_install_it(repo: Path, tmp_path: Path) -> None:
    fake = tmp_path / "nosdk" / "mcp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ModuleNotFoundError('no mcp.server', name='mcp.server')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(fake.parent), str(Path(__file__).parents[2])]))
    proc = subprocess.run([*WB_ARGV, "mcp"], cwd=repo, capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["wb: `wb mcp` needs the MCP SDK, which is not installed: "
                                        "pip install 'mcp>=2,<3' (or, in wb's clone, "
                                        "pip install -e '.[mcp]')"]


def test_other_commands_never_import_the_sdk(bench, repo: Path) -> None:
    code = ("import sys\nfrom workbench.cli.main import main\nmain(['task', 'list'])\n"
            "assert not any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules), 'mcp imported'\n"
            "print('clean')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "clean"


def test_set_state_records_the_next_action_and_refuses_what_wb_keeps(bench, repo: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["set"] = ok(await session.call_tool("set_state", {"changes": {
            "next_action": "Write the parser", "blockers": ["waiting for the grammar"]}}))
        out["files"] = stored(repo)
        out["kept"] = await session.call_tool("set_state", {"changes": {"session": None}})
        out["unknown"] = await session.call_tool("set_state", {"changes": {"mood": "good"}})
        out["empty"] = await session.call_tool("set_state", {"changes": {}})
        out["files_after"] = stored(repo)
        out["status"] = ok(await session.call_tool("status", {}))
        return out

    out = with_client(repo, body)
    assert out["set"]["state"] == {"next_action": "Write the parser", "blockers": ["waiting for the grammar"]}
    assert out["set"]["commit"] == (run_git(repo, "rev-parse", "HEAD").strip() if FILES else None)
    from workbench.model import statefile

    assert statefile.parse(state_text(repo).encode()).data["next_action"] == "Write the parser"
    if FILES:
        assert "next_action: 'Write the parser'" in state_text(repo)
    assert text_of(out["kept"]).startswith("session is kept by wb and cannot be set")
    assert out["unknown"].is_error and "mood" in text_of(out["unknown"])
    assert out["empty"].is_error and "set_state needs changes" in text_of(out["empty"])
    assert out["files_after"] == out["files"]
    assert out["status"]["next_action"] == "Write the parser"
