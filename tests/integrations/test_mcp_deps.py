"""Issue 22 §2 through MCP: task_update start/done of a task whose dependencies are not done is a tool error
naming them, and `force` does not get an agent past it (MCP is an agent's door, never a person's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integrations.hookfixtures import board, stored

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402

from tests.integrations.test_mcp import ok, text_of, with_client  # noqa: E402


def test_mcp_refuses_to_start_or_finish_a_task_before_its_dependencies(bench, repo: Path) -> None:
    bench.add_task("Lexer")
    bench.add_task("Parser", depends_on=["T-001"])

    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"files": stored(repo)}
        out["start"] = await session.call_tool("task_update", {"id": "T-002", "action": "start"})
        out["done"] = await session.call_tool("task_update", {"id": "T-002", "action": "done"})
        out["forced"] = await session.call_tool("task_update", {"id": "T-002", "action": "done", "force": True})
        out["forced_start"] = await session.call_tool("task_update", {"id": "T-002", "action": "start",
                                                                      "force": True})
        out["files_after"] = stored(repo)
        ok(await session.call_tool("task_update", {"id": "T-001", "action": "start"}))
        ok(await session.call_tool("task_update", {"id": "T-001", "action": "done"}))
        out["in_order"] = ok(await session.call_tool("task_update", {"id": "T-002", "action": "start"}))
        return out

    out = with_client(repo, body)
    for key in ("start", "done"):
        assert out[key].is_error and "T-002 waits on T-001 (todo)" in text_of(out[key]), text_of(out[key])
    for key in ("forced", "forced_start"):  # MCP is an agent's door: never a person's --force
        assert out[key].is_error and "person" in text_of(out[key]), text_of(out[key])
    assert out["files_after"] == out["files"]
    assert out["in_order"]["summary"] == "T-002 todo → in_progress"
    tasks = {t["id"]: t for t in board(repo)["tasks"]}
    assert tasks["T-001"]["status"] == "done" and tasks["T-002"]["status"] == "in_progress"


def test_mcp_task_add_takes_the_new_fields_and_task_list_filters(bench, repo: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        ok(await session.call_tool("task_add", {"title": "Epic"}))
        out["child"] = ok(await session.call_tool("task_add", {"title": "Lexer", "priority": 1, "labels": ["core"],
                                                               "parent": "T-001", "assignee": "ana"}))["task"]
        ok(await session.call_tool("task_add", {"title": "Docs", "depends_on": ["T-002"]}))
        ok(await session.call_tool("task_update", {"id": "T-003", "action": "set", "changes": {"priority": 0}}))
        out["core"] = ok(await session.call_tool("task_list", {"where": {"label": "core"},
                                                               "fields": ["id", "priority", "parent"]}))
        out["blocked"] = ok(await session.call_tool("task_list", {"where": {"blocked": True}}))
        out["bad"] = await session.call_tool("task_list", {"where": {"colour": "red"}})
        return out

    out = with_client(repo, body)
    child = out["child"]
    assert (child["priority"], child["labels"], child["parent"], child["assignee"]) == (1, ["core"], "T-001", "ana")
    assert out["core"]["tasks"] == [{"id": "T-002", "priority": 1, "parent": "T-001"}]
    assert [t["id"] for t in out["blocked"]["tasks"]] == ["T-003"]
    assert out["bad"].is_error and "colour" in text_of(out["bad"]), text_of(out["bad"])


def test_mcp_names_the_filters_the_api_has() -> None:
    from workbench import api
    from workbench.integrations import mcp

    assert mcp.TASK_FILTERS == api.TASK_FILTERS
