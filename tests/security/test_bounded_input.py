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
from tests.conftest import about_files, call_wb

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


@about_files  # a line that reached the files backend's events.jsonl through git
def test_doctor_fix_moves_an_overlong_log_line_aside(bench: Any, repo: Path) -> None:
    """No input leaves a user with no command that helps: a line over the reader's cap that came through git
    (a hand edit committed, a merge) made status, doctor and doctor --fix all exit 5. Now `wb doctor` names it
    (exit 1), and `--fix` moves it aside byte for byte into .workbench/artifacts/set-aside/, chains the events
    after it again, and commits the repair; every command works again and no other event is lost."""
    import subprocess

    call_wb(repo, "note", "before")
    log = repo / ".workbench" / "events.jsonl"
    bad = json.dumps({"schema_version": 1, "seq": 99, "id": "01M953GQZJ4PQHSPAQ24A3RMCZ", "ts":
                      "2026-12-06T07:18:58.290Z", "type": "note.add", "actor": "agent", "session": None,
                      "payload": {"text": BIG}}).encode()
    after = json.loads(log.read_bytes().splitlines()[-1])  # a valid event after it, as a merge would bring
    after.update(id="01M953GQZJ4PQHSPAQ24A3RMD0", payload={"text": "after the long line"})
    with log.open("ab") as f:
        f.write(bad + b"\n" + json.dumps(after).encode() + b"\n")
    subprocess.run(["git", "commit", "-qam", "a hand edit"], cwd=repo, check=True)
    assert call_wb(repo, "status").returncode == 5
    doctor = call_wb(repo, "doctor")
    assert doctor.returncode == 1 and "log_line_overlong" in doctor.stdout, doctor.stdout + doctor.stderr
    fixed = call_wb(repo, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    aside = list((repo / ".workbench" / "artifacts" / "set-aside").glob("*.jsonl"))
    assert [p.read_bytes() for p in aside] == [bad + b"\n"]
    for args in (["status"], ["validate"], ["replay", "--verify"], ["note", "next"]):
        proc = call_wb(repo, *args)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    texts = [e["payload"].get("text") for e in stored.events(repo) if e["type"] == "note.add"]
    assert texts == ["before", "after the long line", "next"]
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                          text=True).stdout == ""
