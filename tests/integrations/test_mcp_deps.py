"""Issue 22 §2 through MCP: task_update start/done of a task whose dependencies are not done is a tool error
naming them, and `force` does not get an agent past it (MCP is an agent's door, never a person's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import hash_workbench

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402

from tests.integrations.test_mcp import ok, text_of, with_client  # noqa: E402


def test_mcp_refuses_to_start_or_finish_a_task_before_its_dependencies(bench, repo: Path) -> None:
    bench.add_task("Lexer")
    bench.add_task("Parser", depends_on=["T-001"])

    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"files": hash_workbench(repo)}
        out["start"] = await session.call_tool("task_update", {"id": "T-002", "action": "start"})
        out["done"] = await session.call_tool("task_update", {"id": "T-002", "action": "done"})
        out["forced"] = await session.call_tool("task_update", {"id": "T-002", "action": "done", "force": True})
        out["files_after"] = hash_workbench(repo)
        ok(await session.call_tool("task_update", {"id": "T-001", "action": "start"}))
        ok(await session.call_tool("task_update", {"id": "T-001", "action": "done"}))
        out["in_order"] = ok(await session.call_tool("task_update", {"id": "T-002", "action": "start"}))
        return out

    out = with_client(repo, body)
    for key in ("start", "done"):
        assert out[key].is_error and "T-002 waits on T-001 (todo)" in text_of(out[key]), text_of(out[key])
    assert out["forced"].is_error and "person" in text_of(out["forced"]), text_of(out["forced"])
    assert out["files_after"] == out["files"]
    assert out["in_order"]["summary"] == "T-002 todo → in_progress"
    tasks = {t["id"]: t for t in json.loads((repo / ".workbench" / "board.json").read_text())["tasks"]}
    assert tasks["T-001"]["status"] == "done" and tasks["T-002"]["status"] == "in_progress"
