"""An agent cannot pass as a person: PreToolUse denies its edits of .workbench/ through Claude Code's decision
control, and a change to .workbench/ that still appears during its turn is recorded as `agent.edit` by
`agent`, held to the agent's rules (a task does not become done without its acceptance)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import files_only, hash_workbench, run_git, run_wb
from tests.integrations.hookfixtures import (
    events,
    fixture,
    git_dir,
    hook,
    ok,
    spool_lines,
    status_porcelain,
    track_config,
)
from tests.person import as_person
from workbench.integrations.hookguard import denial


def pre(repo: Path, tool: str, tool_input: dict) -> dict:
    payload = fixture("claude-code", "PreToolUse", repo)
    payload.update(tool_name=tool, tool_input=tool_input)
    return payload


def test_a_denied_edit_of_the_board(bench, repo: Path) -> None:
    bench.add_task("Parse the config", acceptance=["false"])
    track_config(repo)
    files = hash_workbench(repo)
    board = repo / ".workbench" / "board.json"
    edit = pre(repo, "Edit", {"file_path": str(board), "old_string": '"status": "todo"',
                              "new_string": '"status": "done"', "replace_all": False})
    proc = ok(hook(repo, edit))
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == "deny"
    assert "wb task done ID" in answer["permissionDecisionReason"]
    assert "task_update" in answer["permissionDecisionReason"]  # the MCP tool, for an MCP-only agent
    assert hash_workbench(repo) == files and status_porcelain(repo) == ""
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    call = [e for e in events(repo) if e["type"] == "agent.tool_call"][-1]
    assert call["payload"]["tool"] == "Edit" and "written by wb alone" in call["payload"]["denied"]


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Write", {"file_path": "/repo/.workbench/state.md", "content": "---\n"}),
    ("MultiEdit", {"file_path": ".workbench/board.json", "edits": []}),
    ("NotebookEdit", {"notebook_path": "/repo/.workbench/x.ipynb", "new_source": ""}),
    ("Write", {"file_path": "/repo/.git/wb/spool.jsonl", "content": ""}),
    ("Bash", {"command": "echo '{}' > .workbench/board.json"}),
    ("Bash", {"command": "cat /tmp/b >> ./.workbench/events.jsonl"}),
    ("Bash", {"command": "sed -i 's/todo/done/' .workbench/board.json"}),
    ("Bash", {"command": "sed -i.bak -e 's/a/b/' .workbench/state.md"}),
    ("Bash", {"command": "jq '.tasks[0].status=\"done\"' .workbench/board.json | tee .workbench/board.json"}),
    ("Bash", {"command": "cp /tmp/board.json .workbench/board.json"}),
    ("Bash", {"command": "mv /tmp/state.md .workbench/"}),
    ("Bash", {"command": "cd src && pytest -q; rm -f ../.workbench/events.jsonl"}),
    ("Bash", {"command": "perl -pi -e 's/todo/done/' .workbench/board.json"}),
    ("Bash", {"command": "python fix.py 2> .workbench/err.log"}),
    ("apply_patch", {"command": "*** Begin Patch\n*** Update File: .workbench/board.json\n@@\n-a\n+b\n"
                                "*** End Patch\n"}),
])
def test_plain_writes_to_the_workbench_are_denied(tool: str, tool_input: dict) -> None:
    why = denial({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input})
    assert why and "Do not edit .workbench/ by hand" in why


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Read", {"file_path": "/repo/.workbench/board.json"}),
    ("Write", {"file_path": "/repo/src/workbench.py", "content": ""}),
    ("Edit", {"file_path": "/repo/docs/.workbench.md", "old_string": "a", "new_string": "b"}),
    ("Bash", {"command": "cat .workbench/board.json"}),
    ("Bash", {"command": "grep todo .workbench/board.json > /tmp/todo.txt"}),
    ("Bash", {"command": "cp .workbench/board.json /tmp/"}),
    ("Bash", {"command": "wb task add 'Parse the config' && wb task start T-001"}),
    ("Bash", {"command": "git diff .workbench && git log -- .workbench"}),
    ("Bash", {"command": "pytest -q"}),
    ("Grep", {"pattern": "todo", "path": ".workbench"}),
])
def test_reading_the_workbench_and_wb_itself_are_not_denied(tool: str, tool_input: dict) -> None:
    assert denial({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}) is None


@files_only  # a hand edit of board.json: on SQLite there is no board.json to edit (the guard is the same)
def test_an_edit_during_the_agents_turn_is_the_agents_and_held_to_its_rules(bench, repo: Path) -> None:
    task = bench.add_task("Parse the config", acceptance=["false"])
    ok(hook(repo, fixture("claude-code", "UserPromptSubmit", repo)))  # the turn begins
    assert (git_dir(repo) / "wb" / "turn.json").exists()
    board = repo / ".workbench" / "board.json"
    data = json.loads(board.read_text())
    data["tasks"][0]["status"] = "done"  # an Edit that slipped past the hook (a script the agent ran)
    data["tasks"][0]["title"] = "Parse the config file"
    board.write_text(json.dumps(data, indent=2) + "\n")
    ok(hook(repo, fixture("claude-code", "Stop", repo)))  # the turn ends: its fold finds the change
    assert not (git_dir(repo) / "wb" / "turn.json").exists()
    edit = [e for e in events(repo) if e["type"].endswith(".edit")]
    assert [(e["type"], e["actor"]) for e in edit] == [("agent.edit", "agent")]
    rule = f"a task is done when its acceptance passes: `wb task done {task['id']}`"
    assert edit[0]["payload"]["refused"] == [{"task": task["id"], "status": "done", "rule": rule}]
    now = json.loads(board.read_text())["tasks"][0]
    assert now["status"] == "todo" and now["title"] == "Parse the config file"  # the rest of the edit stands
    assert status_porcelain(repo) == "" and spool_lines(repo) == []
    assert run_wb(repo, "validate").returncode == 0
    assert "snapshots match" in run_wb(repo, "replay", "--verify").stdout

    # after the Stop, a person's edit is a person's again
    data = json.loads(board.read_text())
    data["tasks"][0]["owner"] = "human"
    board.write_text(json.dumps(data, indent=2) + "\n")
    assert as_person(repo, "note", "reviewed").returncode == 0  # a person, at a terminal
    assert [(e["type"], e["actor"]) for e in events(repo) if e["type"].endswith(".edit")][-1] == \
        ("human.edit", "human")
    assert run_git(repo, "status", "--porcelain") == ""


@files_only  # a hand edit of board.json, as above
def test_a_task_removed_during_the_agents_turn_stays(bench, repo: Path) -> None:
    first = bench.add_task("Parse the config")
    bench.add_task("Write the docs")
    ok(hook(repo, fixture("claude-code", "PreToolUse", repo)))  # the turn begins
    board = repo / ".workbench" / "board.json"
    data = json.loads(board.read_text())
    data["tasks"] = data["tasks"][1:]
    board.write_text(json.dumps(data, indent=2) + "\n")
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    edit = [e for e in events(repo) if e["type"] == "agent.edit"][-1]
    assert edit["actor"] == "agent" and edit["payload"]["refused"][0]["task"] == first["id"]
    assert [t["title"] for t in json.loads(board.read_text())["tasks"]] == ["Parse the config", "Write the docs"]
    assert run_wb(repo, "validate").returncode == 0
    assert "snapshots match" in run_wb(repo, "replay", "--verify").stdout


def test_a_write_outside_the_active_tasks_scope_is_denied_at_the_hook(bench, repo: Path) -> None:
    """issue 16 §1: while a task is active, PreToolUse denies file writes to its forbidden paths, with the
    reason; paths the scope allows, and the same write once the task is done, pass."""
    assert run_wb(repo, "task", "add", "Fix the parser", "--forbid", "secrets/**", "--allow", "src/**").returncode == 0
    track_config(repo)
    outside = pre(repo, "Write", {"file_path": str(repo / "secrets" / "prod.key"), "content": "x"})
    inside = pre(repo, "Edit", {"file_path": "src/parser.py", "old_string": "a", "new_string": "b",
                                "replace_all": False})
    assert ok(hook(repo, outside)).stdout == ""  # no task active yet: nothing to hold the agent to
    assert run_wb(repo, "task", "start", "T-001").returncode == 0
    answer = json.loads(ok(hook(repo, outside)).stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    why = answer["permissionDecisionReason"]
    assert "secrets/prod.key" in why and "secrets/**" in why and "T-001" in why
    assert ok(hook(repo, inside)).stdout == ""
    assert status_porcelain(repo) == ""


def test_a_codex_apply_patch_outside_the_active_tasks_scope_is_denied_at_the_hook(bench, repo: Path) -> None:
    """Codex edits files with apply_patch (`tool_input.command`: the patch); each file it adds, updates, deletes
    or moves to is held to the active task's scope, like a Write's path (a real `codex exec` wrote under a
    forbidden path through it: tests/clients/test_codex.py)."""
    assert run_wb(repo, "task", "add", "Fix the parser", "--forbid", "secrets/**").returncode == 0
    assert run_wb(repo, "task", "start", "T-001").returncode == 0
    track_config(repo)

    def patch(*lines: str) -> dict:
        payload = fixture("codex", "PreToolUse", repo)
        payload.update(tool_name="apply_patch",
                       tool_input={"command": "\n".join(["*** Begin Patch", *lines, "*** End Patch", ""])})
        return payload

    for lines in (["*** Add File: secrets/prod.key", "+x"],
                  ["*** Update File: src/parser.py", "@@", "-a", "+b", "*** Add File: secrets/prod.key", "+x"],
                  ["*** Update File: src/parser.py", "*** Move to: secrets/parser.py", "@@", "-a", "+b"],
                  ["*** Delete File: secrets/old.key"]):
        answer = json.loads(ok(hook(repo, patch(*lines), "codex")).stdout)["hookSpecificOutput"]
        assert answer["permissionDecision"] == "deny", lines
        assert "secrets/**" in answer["permissionDecisionReason"] and "T-001" in answer["permissionDecisionReason"]
    assert ok(hook(repo, patch("*** Update File: src/parser.py", "@@", "-a", "+b"), "codex")).stdout == ""
    assert status_porcelain(repo) == ""
