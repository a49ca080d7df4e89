"""Issue 30.3: bounded input, on every path. A task with a 5 MB description, through `wb task import` or an
agent's MCP `task_add`, was accepted; then `status`, `doctor` and `doctor --fix` all exited 5 (the log's line
was over the reader's 4 MiB cap): one field bricked the workbench. Now each free-text field has one cap in the
schemas (a description or comment 65,536 characters, an acceptance command 10,000, a blocked reason 4,000), and
no event wb writes is over 1 MiB whatever its fields (store/eventlog.chain: every path that writes an event
line). Each door refuses with one line, writes nothing, and the workbench keeps working."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import stored
from tests.conftest import call_wb

BIG = "x" * 5_000_000


def still_works(repo: Path, before: list[dict[str, Any]]) -> None:
    assert stored.events(repo) == before, "a refused write left events behind"
    for args in (["status"], ["validate"], ["doctor"], ["task", "add", "after"]):
        proc = call_wb(repo, *args)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)


def refused(proc: Any) -> str:
    assert proc.returncode == 5, (proc.returncode, proc.stdout, proc.stderr[-400:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wb: "), proc.stderr[-400:]
    assert "Traceback" not in proc.stderr and len(lines[0]) < 400
    return lines[0]


@pytest.mark.parametrize("door", ["import json", "import stdin", "import checklist", "task add", "comment",
                                  "many commands"])
def test_no_field_bricks_the_workbench(bench: Any, repo: Path, door: str) -> None:
    call_wb(repo, "task", "add", "first")
    before = stored.events(repo)
    if door == "import json":
        (repo / "big.json").write_text(json.dumps([{"title": "big", "description": BIG}]))
        line = refused(call_wb(repo, "task", "import", "big.json"))
    elif door == "import stdin":
        line = refused(call_wb(repo, "task", "import", "-",
                               input=json.dumps([{"title": "big", "description": BIG}])))
    elif door == "import checklist":
        (repo / "big.md").write_text(f"- [ ] big\n  description: {BIG[:200_000]}\n")
        line = refused(call_wb(repo, "task", "import", "big.md"))
    elif door == "task add":
        line = refused(call_wb(repo, "task", "add", "big", "--description", BIG[:200_000]))
    elif door == "comment":
        line = refused(call_wb(repo, "task", "comment", "T-001", BIG[:200_000]))
    else:  # every field under its cap, the event over what a record may hold
        cmds = [f"echo {i} " + "y" * 400 for i in range(4000)]
        (repo / "many.json").write_text(json.dumps([{"title": "many", "acceptance": cmds}]))
        line = refused(call_wb(repo, "task", "import", "many.json"))
        assert "1,048,576" in line and "task.acceptance" in line, line
    assert "nothing" in line, line
    still_works(repo, before)


def test_an_agents_mcp_task_add_is_refused_as_a_tool_error(bench: Any, repo: Path) -> None:
    pytest.importorskip("mcp")
    from tests.integrations.test_mcp import text_of, with_client

    bench.add_task("first")
    before = stored.events(repo)

    async def body(session: Any) -> Any:
        return await session.call_tool("task_add", {"title": "big", "description": BIG})

    result = with_client(repo, body)
    assert result.is_error and "over the" in text_of(result), text_of(result)[:300]
    still_works(repo, before)
