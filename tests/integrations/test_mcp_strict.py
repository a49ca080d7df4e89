"""`wb mcp`, strict and lean: the real SDK client over stdio against `wb mcp` as a subprocess (issue 13 §5).

Annotations on every tool, input schemas that refuse unknown arguments, one-line argument errors, an `abort`
tool, pages of tasks and events, structuredContent that matches each tool's outputSchema, plans only from
inside the repository, and the early answer to `initialize` being the SDK's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WB_ARGV, head_count
from tests.integrations.hookfixtures import FILES, events, stored
from tests.integrations.test_mcp import TOOLS, ok, server_env, text_of, with_client

pytest.importorskip("mcp")
jsonschema = pytest.importorskip("jsonschema")

from mcp import ClientSession, MCPError  # noqa: E402

HINTS = ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")


def one_line_error(result: Any) -> str:
    assert result.is_error, text_of(result)
    text = text_of(result)
    assert "\n" not in text and "pydantic" not in text and "http" not in text, text
    return text


def test_every_tool_is_annotated_strict_and_has_an_output_schema(bench, repo: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {t.name: t for t in with_client(repo, body)}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        hints = {h: getattr(tool.annotations, h) for h in HINTS}
        # all four, said on purpose; a read-only tool the two the specification gives meaning to when read-only
        said = HINTS if not hints["read_only_hint"] else ("read_only_hint", "open_world_hint")
        assert all(isinstance(hints[h], bool) for h in said), (name, hints)
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False, name
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
    read_only = {n for n, t in tools.items() if t.annotations.read_only_hint}
    assert read_only == {"status", "task_list", "log"}
    # additive writes are not destructive: a client need not treat a note like a deletion
    assert not tools["note"].annotations.destructive_hint and not tools["task_add"].annotations.destructive_hint
    assert tools["set_state"].annotations.idempotent_hint and not tools["note"].annotations.idempotent_hint
    # these run commands: acceptance commands, the harness's tools
    assert {n for n, t in tools.items() if t.annotations.open_world_hint} == {"task_update", "run", "resume",
                                                                               "claim", "sync"}  # a remote
    assert not any(t.annotations.open_world_hint for n, t in tools.items() if n in read_only)


def test_bad_arguments_are_one_line_errors_and_change_nothing(bench, repo: Path) -> None:
    bench.add_task("Parse the config")
    files, commits = stored(repo), head_count(repo)

    async def body(session: ClientSession) -> dict[str, Any]:
        calls = {
            "unknown": ("task_add", {"title": "Lexer", "accept": ["true"]}),
            "enum": ("task_list", {"status": "finished"}),
            "type": ("log", {"limit": "ten"}),
            "range": ("task_list", {"limit": 0}),
            "field": ("task_list", {"fields": ["id", "colour"]}),
            "missing": ("note", {}),
            "blank": ("note", {"text": "   "}),
            "empty_goal": ("run", {"goal": "", "steps": [{"description": "x"}]}),
            "blank_goal": ("run", {"goal": "  \t", "steps": [{"description": "x"}]}),
            "abort_nothing": ("abort", {"reason": "nothing runs"}),
            "event_type": ("log", {"type": "tsk"}),
        }
        out = {key: await session.call_tool(tool, args) for key, (tool, args) in calls.items()}
        try:
            await session.call_tool("task_delete", {"id": "T-001"})
        except MCPError as err:  # an unknown tool is a protocol error, as the specification says
            out["no_tool"] = err.message
        return out

    out = with_client(repo, body)
    assert out.pop("no_tool") == ("unknown tool 'task_delete'; tools: status, task_list, task_add, task_update, "
                                  "note, set_state, log, run, resume, abort, claim, sync")
    errors = {key: one_line_error(result) for key, result in out.items()}
    assert errors["unknown"] == ("task_add: unknown argument 'accept' (did you mean acceptance?); allowed: title, "
                                 "acceptance, kind, reviews, owner, depends_on, description, scope, priority, labels, "
                                 "parent, assignee")
    assert errors["enum"] == 'task_list: status: "finished" is not one of todo, in_progress, blocked, done, cancelled'
    assert errors["type"] == 'log: limit: expected integer, got "ten"'
    assert errors["range"].startswith("task_list: limit: 0 is out of range 1..")
    assert errors["field"].startswith('task_list: fields[1]: "colour" is not one of id, kind, title')
    assert errors["missing"] == "note: text is required"
    assert errors["blank"] == "note: text: must not be empty"
    assert errors["empty_goal"] == errors["blank_goal"] == "run: goal: must not be empty"
    assert errors["abort_nothing"] == "no live session to abort"
    assert errors["event_type"].startswith("log: type 'tsk' names no event type; families: agent, approval, ")
    assert stored(repo) == files and head_count(repo) == commits


def test_a_plan_must_lie_inside_the_repository(bench, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("steps:\n  - description: SECRET-OUTSIDE\n")
    (repo / "link.yaml").symlink_to(outside)
    (repo / "plans").mkdir()
    files, commits = stored(repo), head_count(repo)

    async def body(session: ClientSession) -> dict[str, Any]:
        out = {}
        for key, plan in (("absolute", "/etc/passwd"), ("dotdot", "../elsewhere.yaml"), ("link", "link.yaml"),
                          ("git", ".git/config"), ("dir", "plans/../..")):
            out[key] = await session.call_tool("run", {"goal": "Ship it", "plan": plan})
        out["resume"] = await session.call_tool("resume", {"plan": "/etc/passwd"})
        return out

    out = with_client(repo, body)
    for key, result in out.items():
        text = one_line_error(result)
        assert "is outside the repository" in text, (key, text)
        assert "root:" not in text and "SECRET-OUTSIDE" not in text, (key, text)  # nothing was read
    assert stored(repo) == files and head_count(repo) == commits


def test_abort_ends_a_waiting_session(bench, repo: Path) -> None:
    steps = [{"description": "Deploy to staging", "tool": "deploy", "args": {"env": "staging"}}]

    async def body(session: ClientSession) -> dict[str, Any]:
        out = {"run": ok(await session.call_tool("run", {"goal": "Ship it", "steps": steps}))}
        out["abort"] = ok(await session.call_tool("abort", {"reason": "the deploy is off"}))
        out["again"] = await session.call_tool("abort", {"reason": "the deploy is off"})
        out["status"] = ok(await session.call_tool("status", {}))
        out["log"] = ok(await session.call_tool("log", {"type": "session.abort", "fields": ["type", "payload"]}))
        return out

    out = with_client(repo, body)
    assert out["run"]["done"] is False and out["run"]["kind"] == "tool_result"
    assert 'abort {"reason": "..."}' in out["run"]["calls"]  # an MCP-only agent is told the tool, not `wb abort`
    assert out["abort"]["done"] is True
    assert one_line_error(out["again"]) == "no live session to abort"
    assert out["status"]["session"] is None
    [event] = out["log"]["events"]
    assert event["type"] == "session.abort" and "the deploy is off" in json.dumps(event["payload"])


def test_pages_of_tasks_and_events_stay_small(bench, repo: Path) -> None:
    for i in range(1, 101):
        bench.add_task(f"Task number {i:03d}: implement the parser stage for config section {i}",
                       acceptance=[f"pytest -q tests/test_stage_{i}.py"], description="x" * 200)

    async def body(session: ClientSession) -> dict[str, Any]:
        listed = {t.name: t.output_schema for t in (await session.list_tools()).tools}
        calls = {"default": ("task_list", {}), "last": ("task_list", {"offset": 90}),
                 "fields": ("task_list", {"limit": 2, "fields": ["id", "acceptance"]}),
                 "todo": ("task_list", {"status": "todo", "limit": 500}),
                 "log": ("log", {}), "older": ("log", {"offset": 95, "limit": 10}),
                 "status": ("status", {})}
        results = {key: await session.call_tool(tool, args) for key, (tool, args) in calls.items()}
        return {"listed": listed, "results": results, "tools": {k: t for k, (t, _a) in calls.items()}}

    out = with_client(repo, body)
    results = out["results"]
    for key, result in results.items():
        data = ok(result)
        assert result.structured_content == data, key  # the text is the structured content, as JSON
        jsonschema.validate(result.structured_content, out["listed"][out["tools"][key]])
    wire = len(results["default"].model_dump_json(by_alias=True, exclude_none=True))
    print(f"task_list default on 100 tasks: {wire} bytes on the wire, {len(text_of(results['default']))} of text")
    assert wire < 4096
    default = ok(results["default"])
    shown = len(default["tasks"])  # up to 20, fewer when their titles are long
    assert 10 <= shown <= 20 and [t["id"] for t in default["tasks"]] == [f"T-{i:03d}" for i in range(1, shown + 1)]
    assert set(default["tasks"][0]) == {"id", "status", "title"}
    assert default["total"] == 100 and default["next_offset"] == shown
    last = ok(results["last"])
    assert [t["id"] for t in last["tasks"]] == [f"T-{i:03d}" for i in range(91, 101)] and last["next_offset"] is None
    assert ok(results["fields"])["tasks"] == [{"id": "T-001", "acceptance": ["pytest -q tests/test_stage_1.py"]},
                                              {"id": "T-002", "acceptance": ["pytest -q tests/test_stage_2.py"]}]
    assert ok(results["todo"])["total"] == 100 and len(ok(results["todo"])["tasks"]) == 100
    log = ok(results["log"])  # 101 events: workbench.init and 100 task.add
    shown = len(log["events"])
    assert 5 <= shown <= 10 and [e["seq"] for e in log["events"]] == list(range(102 - shown, 102))
    assert log["total"] == 101 and log["next_offset"] == shown
    assert set(log["events"][0]) == {"seq", "type", "actor", "summary"}
    assert log["events"][-1]["summary"].startswith("T-100 Task number 100")
    assert len(results["log"].model_dump_json(by_alias=True, exclude_none=True)) < 4096
    older = ok(results["older"])
    assert [e["seq"] for e in older["events"]] == [1, 2, 3, 4, 5, 6] and older["next_offset"] is None
    status = ok(results["status"])
    assert status["ready"]["total"] == 100 and [t["id"] for t in status["ready"]["tasks"]] == ["T-001", "T-002",
                                                                                            "T-003"]
    assert status["ready"]["command"] == "wb task start T-001"
    assert status["ready"]["call"] == 'task_update {"id": "T-001", "action": "start"}'
    assert status["next_action"] == "Start T-001 Task number 001: implement the parser stage for config section 1: " \
                                    "`wb task start T-001`"


def test_every_answer_matches_its_output_schema(bench, repo: Path) -> None:
    """One successful call of each tool; the SDK's client validates structuredContent against the listed
    outputSchema itself (it raises otherwise), and it is checked again here."""
    steps = [{"description": "Deploy", "tool": "deploy"}]

    async def body(session: ClientSession) -> dict[str, Any]:
        listed = {t.name: t.output_schema for t in (await session.list_tools()).tools}
        calls = [("status", {}), ("task_add", {"title": "Lexer", "acceptance": ["true"]}),
                 ("task_update", {"id": "T-001", "action": "done"}), ("note", {"text": "Chose a lexer."}),
                 ("set_state", {"changes": {"next_action": "Write the parser"}}), ("task_list", {}), ("log", {})]
        calls += [("run", {"goal": "Ship it", "steps": steps}), ("resume", {"result": {"ok": True}}),
                  ("run", {"goal": "Again", "steps": steps}), ("abort", {"reason": "enough"})]
        return {"listed": listed, "answers": [(tool, await session.call_tool(tool, args)) for tool, args in calls]}

    out = with_client(repo, body)
    # claim and sync need a remote and state on its own ref: tests/sync/test_mcp_sync.py checks theirs
    assert {tool for tool, _r in out["answers"]} == TOOLS - {"claim", "sync"}
    for tool, result in out["answers"]:
        data = ok(result)
        assert result.structured_content == data, tool
        jsonschema.validate(data, out["listed"][tool])


def raw_initialize(repo: Path, version: str, preanswer: bool) -> dict[str, Any]:
    env = dict(server_env(), WB_MCP_PREANSWER="1" if preanswer else "0")
    proc = subprocess.Popen([*WB_ARGV, "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).encode()
            + b"\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                         b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n')
        proc.stdin.flush()
        pong = json.loads(proc.stdout.readline())  # the SDK took the connection over, initialized
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        stderr = proc.stderr.read().decode()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    assert pong == {"jsonrpc": "2.0", "id": 8, "result": {}}, pong
    assert "differs" not in stderr, stderr
    return answer


@pytest.mark.parametrize("version", ["2025-11-25", "2024-11-05", "1999-01-01"])
def test_theearly_initialize_answer_is_the_sdks(bench, repo: Path, version: str) -> None:
    early = raw_initialize(repo, version, preanswer=True)
    sdk = raw_initialize(repo, version, preanswer=False)
    assert early == sdk
    assert early["id"] == 7 and early["result"]["serverInfo"]["name"] == "wb"


def test_the_server_keeps_the_wire_from_what_it_runs(bench, repo: Path) -> None:
    """An acceptance command that reads stdin or prints to stdout cannot touch the protocol stream."""
    bench.add_task("Noisy", acceptance=["echo to-stdout; cat > /dev/null; echo read-done >&2"])

    async def body(session: ClientSession) -> Any:
        done = ok(await session.call_tool("task_update", {"id": "T-001", "action": "done"}))
        return done, ok(await session.call_tool("status", {}))

    done, status = with_client(repo, body)
    assert done["task"]["status"] == "done" or done["summary"].endswith("→ done")
    assert status["board"]["by_status"]["done"] == 1


def test_the_server_starts_without_typer(bench, repo: Path) -> None:
    """`wb mcp` is a fast path of main.py: the client waits on its start-up."""
    code = ("import sys, io\nfrom workbench.cli import main as m\n"
            "import workbench.cli.mcp as c\nc.run = lambda start: 0\n"
            "assert m.main(['mcp']) == 0\n"
            "assert 'typer' not in sys.modules and 'click' not in sys.modules, 'typer imported'\nprint('clean')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=60,
                          env={**os.environ})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "clean"


def test_the_early_answer_is_taken_for_a_well_formed_initialize_only() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from workbench.integrations.mcp import early_initialize, handshake_versions

    assert handshake_versions() == tuple(HANDSHAKE_PROTOCOL_VERSIONS)  # read without importing the SDK
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}).encode()
    early = early_initialize(line + b"\n")
    assert early is not None and early[0] == 1 and early[1]["protocolVersion"] == "2025-06-18"
    assert json.loads(early[2]) == {"jsonrpc": "2.0", "id": 1, "result": early[1]}
    for other in (b"", b"not json\n", b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n',
                  b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}\n',
                  b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"x"}}\n'):
        assert early_initialize(other) is None, other  # the SDK reads and answers these itself


def children(pid: int) -> list[str]:
    """The commands of `pid`'s child processes, from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip())
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_long_session_leaves_no_git_process_behind(bench, repo: Path) -> None:
    """Each call opens the workbench afresh and closes it: a write's helper git process ends with the call."""
    proc = subprocess.Popen([*WB_ARGV, "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=server_env())
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
            .encode() + b'\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        proc.stdout.readline()
        for i in range(8):
            call = {"name": "note", "arguments": {"text": f"finding {i}"}} if i % 2 else {"name": "status"}
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                                         "params": call}).encode() + b"\n")
            proc.stdin.flush()
            assert b'"isError":false' in proc.stdout.readline()
        left = children(proc.pid)
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    assert left == []
    assert [e["payload"]["text"] for e in events(repo) if e["type"] == "note.add"] == [
        f"finding {i}" for i in (1, 3, 5, 7)]
    if FILES:
        assert head_count(repo) >= 5  # the four notes were committed
