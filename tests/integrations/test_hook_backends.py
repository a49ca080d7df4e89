"""The agent hooks on either backend (docs/storage.md): several agents' hooks at once, each a real process, lose
nothing and leave a valid chain; on SQLite the database file is guarded wherever it is, and a workbench kept
without git spools beside its database in `.workbench/.local/`."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WB_ARGV, run_git, run_wb, spawn_wb
from tests.integrations.hookfixtures import FILES, events, fixture, hook, ok, spool_lines

AGENTS = 4
PAIRS = 11  # each agent: SessionStart, UserPromptSubmit, 11 × (PreToolUse, PostToolUse), Stop = 25 hook events
sqlite_only = pytest.mark.skipif(FILES, reason="about the SQLite backend's database file")


def agent_events(repo: Path, n: int) -> list[dict[str, Any]]:
    """The 25 hook payloads of agent `n`'s session, in the order its client sends them."""
    session = f"agent-{n}"
    out = [fixture("claude-code", "SessionStart", repo), fixture("claude-code", "UserPromptSubmit", repo)]
    for i in range(PAIRS):
        pre = fixture("claude-code", "PreToolUse", repo)
        pre.update(tool_use_id=f"toolu_{n}_{i:02d}", tool_input={"command": f"pytest -q -k a{n}c{i}"})
        post = fixture("claude-code", "PostToolUse", repo)
        post.update(tool_name="Bash", tool_use_id=pre["tool_use_id"], tool_input=pre["tool_input"],
                    tool_response={"stdout": f"{i} passed\n", "stderr": "", "interrupted": False, "isImage": False})
        out += [pre, post]
    out.append(fixture("claude-code", "Stop", repo))
    for payload in out:
        payload["session_id"] = session
    return out


def test_four_agents_hooking_at_once_lose_nothing_and_leave_a_valid_chain(bench, repo: Path) -> None:
    """4 agents × 25 hook events, each hook a real `wb hook claude-code` process, the agents' processes running
    side by side (their SessionStart and Stop folds racing the others' appends); then one wb write folds what a
    busy fold left behind. Every event is in the log exactly once, in each agent's own order."""
    failures: list[str] = []

    def agent(n: int) -> None:
        for payload in agent_events(repo, n):
            proc = subprocess.run([*WB_ARGV, "hook", "claude-code"], cwd=repo, input=json.dumps(payload),
                                  capture_output=True, text=True, timeout=120)
            if proc.returncode != 0:
                failures.append(f"agent {n} {payload['hook_event_name']}: exit {proc.returncode}: {proc.stderr}")

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(AGENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert failures == []
    proc = run_wb(repo, "note", "the agents are done")  # folds anything a busy fold left in the spool
    assert proc.returncode == 0, proc.stderr
    assert spool_lines(repo) == []

    logged = [e for e in events(repo) if e["type"].startswith("agent.")]
    assert len(logged) == AGENTS * (3 + 2 * PAIRS) and len({e["id"] for e in logged}) == len(logged)
    for n in range(AGENTS):
        mine = [e for e in logged if e["payload"]["agent_session"] == f"agent-{n}"]
        assert [e["type"] for e in mine] == ["agent.session_start", "agent.prompt",
                                             *["agent.tool_call", "agent.tool_result"] * PAIRS, "agent.stop"]
        assert [e["payload"]["tool_use_id"] for e in mine if e["type"] == "agent.tool_call"] == \
            [f"toolu_{n}_{i:02d}" for i in range(PAIRS)]
    assert [e["seq"] for e in events(repo)] == list(range(1, len(events(repo)) + 1))
    assert run_wb(repo, "validate").returncode == 0
    verify = run_wb(repo, "replay", "--verify")
    assert verify.returncode == 0 and "snapshots match" in verify.stdout


def _pre(repo: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    payload = fixture("claude-code", "PreToolUse", repo)
    payload.update(tool_name=tool, tool_input=tool_input)
    return payload


def _denied(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    return str(answer["permissionDecisionReason"])


@sqlite_only
def test_the_database_is_guarded_where_config_yaml_puts_it(tmp_path: Path) -> None:
    """`wb init --backend sqlite --db PATH`: the database outside the repository is wb's as .workbench/ is; the
    agent's Write, its shell's rm or sqlite3, and inline code naming it are denied; reading it with
    `sqlite3 -readonly` and wb's own commands pass."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q")
    run_git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    db = tmp_path / "state" / "wb.db"
    proc = run_wb(repo, "init", "--backend", "sqlite", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert db.is_file()
    writes = [("Write", {"file_path": str(db), "content": ""}),
              ("Edit", {"file_path": f"{db}-wal", "old_string": "a", "new_string": "b"}),
              ("Bash", {"command": f"rm -f {db}"}),
              ("Bash", {"command": f"sqlite3 {db} 'DELETE FROM events'"}),
              ("Bash", {"command": f"python3 -c \"import sqlite3; sqlite3.connect('{db}').execute('DROP TABLE x')\""}),
              ("Bash", {"command": f"cp /tmp/empty.db {db}"})]
    for tool, tool_input in writes:
        why = _denied(hook(repo, _pre(repo, tool, tool_input)))
        assert "the workbench's database" in why and "Do not edit .workbench/ by hand" in why, (tool, tool_input)
    for tool, tool_input in [("Bash", {"command": f"sqlite3 -readonly {db} 'SELECT count(*) FROM events'"}),
                             ("Read", {"file_path": str(db)}),
                             ("Write", {"file_path": str(tmp_path / "state" / "notes.txt"), "content": ""}),
                             ("Bash", {"command": "wb status"})]:
        assert ok(hook(repo, _pre(repo, tool, tool_input))).stdout == "", (tool, tool_input)
    assert ok(hook(repo, fixture("claude-code", "Stop", repo))).stdout == ""
    calls = [e for e in events(repo) if e["type"] == "agent.tool_call"]
    assert len(calls) == len(writes) + 4 and all("denied" in e["payload"] for e in calls[:len(writes)])
    assert run_wb(repo, "validate").returncode == 0


@sqlite_only
def test_a_linked_worktrees_database_is_guarded_and_its_hooks_are_its_own(bench, repo: Path, tmp_path: Path) -> None:
    """The default database of a linked worktree is in the common git directory's wb/worktrees/<key>/ (where
    `git worktree remove` leaves it, tests/git_scenarios/test_worktree_keep.py), not beside its spool in
    `.git/worktrees/NAME/wb/`: guarded all the same. Its agent's events are its workbench's alone
    (test_hook_spool.py's linked worktree, on files, has its workbench from its branch)."""
    linked = tmp_path / "linked"
    run_git(repo, "worktree", "add", "-q", str(linked), "-b", "side")
    proc = run_wb(linked, "init", "--backend", "sqlite")
    assert proc.returncode == 0, proc.stderr
    git_dir = Path(run_git(linked, "rev-parse", "--path-format=absolute", "--git-dir").strip())
    from workbench.store.spool import keep_dir_of

    db = Path(keep_dir_of(linked, git_dir)) / "workbench.sqlite3"
    assert db.is_file() and not (git_dir / "wb" / "workbench.sqlite3").exists()
    why = _denied(hook(linked, _pre(linked, "Write", {"file_path": str(db), "content": ""})))
    assert "the workbench's database" in why
    _denied(hook(linked, _pre(linked, "Bash", {"command": f"truncate -s 0 {db}"})))
    # and its hooks are its own: spooled beside its database, folded into it, never into the main worktree's
    ok(hook(linked, fixture("claude-code", "UserPromptSubmit", linked)))
    assert len(spool_lines(linked)) == 3 and spool_lines(repo) == []
    ok(hook(linked, fixture("claude-code", "Stop", linked)))
    assert [e["type"] for e in events(linked) if e["type"].startswith("agent.")] == [
        "agent.tool_call", "agent.tool_call", "agent.prompt", "agent.stop"]
    assert not [e for e in events(repo) if e["type"].startswith("agent.")]


@sqlite_only
def test_a_workbench_without_git_records_its_hooks(tmp_path: Path) -> None:
    """`wb init --no-git --backend sqlite` (a CI runner's job, a container): the hooks find the workbench with no
    repository, spool in `.workbench/.local/`, and the turn's end folds them into the database."""
    work = tmp_path / "job"
    work.mkdir()
    proc = spawn_wb(work, "init", "--no-git", "--backend", "sqlite")
    assert proc.returncode == 0, proc.stderr
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(tmp_path))
    sub = work / "src"
    sub.mkdir()
    for payload in agent_events(sub, 0)[:4]:  # SessionStart, UserPromptSubmit, one tool call and its result
        proc = hook(work, payload, cwd=sub, env=env)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    spool = work / ".workbench" / ".local" / "wb" / "spool.jsonl"
    assert len(spool.read_text().splitlines()) == 3  # SessionStart folded at once; the turn's three wait
    denied = _denied(hook(work, _pre(sub, "Write", {"file_path": str(work / ".workbench" / "workbench.sqlite3"),
                                                     "content": ""}), cwd=sub, env=env))
    assert "the workbench's database" in denied
    ok(hook(work, agent_events(sub, 0)[-1], cwd=sub, env=env))  # Stop
    assert spool.read_text() == ""
    assert not (work / ".git").exists()
    log = json.loads(spawn_wb(work, "log", "--json", "--all", env=env).stdout)
    assert [e["type"] for e in log if e["type"].startswith("agent.")] == [
        "agent.session_start", "agent.prompt", "agent.tool_call", "agent.tool_result", "agent.tool_call",
        "agent.stop"]
    assert spawn_wb(work, "validate", env=env).returncode == 0
    assert "snapshots match" in spawn_wb(work, "replay", "--verify", env=env).stdout


@sqlite_only
def test_the_mcp_server_serves_a_workbench_without_git(tmp_path: Path) -> None:
    """`wb mcp` through the SDK's client in a directory kept with `wb init --no-git --backend sqlite`: the verbs
    land in the database; the harness, which SQLite does not serve yet, is refused with `wb run`'s own line."""
    pytest.importorskip("mcp")
    from mcp import ClientSession

    from tests.integrations.test_mcp import ok as answer
    from tests.integrations.test_mcp import with_client

    work = tmp_path / "job"
    work.mkdir()
    proc = spawn_wb(work, "init", "--no-git", "--backend", "sqlite")
    assert proc.returncode == 0, proc.stderr

    async def body(session: ClientSession) -> dict[str, Any]:
        return {"added": answer(await session.call_tool("task_add", {"title": "Parse", "acceptance": ["true"]})),
                "started": answer(await session.call_tool("task_update", {"id": "T-001", "action": "start"})),
                "noted": answer(await session.call_tool("note", {"text": "Chose TOML."})),
                "run": await session.call_tool("run", {"goal": "Ship it", "steps": [{"description": "x"}]}),
                "status": answer(await session.call_tool("status", {}))}

    out = with_client(work, body)
    assert out["added"]["task"]["id"] == "T-001" and out["added"]["commit"] is None  # no git: nothing committed
    assert out["status"]["board"]["by_status"]["in_progress"] == 1
    assert not out["run"].is_error and answer(out["run"])["reason"] == "goal_met"  # the harness, served here too
    types = [e["type"] for e in events(work)]
    assert types[types.index("task.add"):types.index("task.add") + 3] == ["task.add", "task.start", "note.add"]
    assert types[-1] == "session.complete"
    assert not (work / ".git").exists()
    assert spawn_wb(work, "validate").returncode == 0
