"""Hooks never leave tracked files dirty: their events wait in a spool in the git directory and are folded into
the log — validated, chained, redacted, committed — at Stop, SessionEnd, PreCompact or the next wb write. The
agent's own git commands in between see a clean tree; a kill -9 mid-fold loses nothing and duplicates nothing."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import WB_ARGV, files_only, head_count, run_git, run_wb
from tests.integrations.hookfixtures import (
    FILES,
    event_bytes,
    events,
    fixture,
    git_dir,
    hook,
    ok,
    spool_lines,
    status_porcelain,
    track_config,
)

CALLS = 200
# where a fold can be killed: each step of the files backend's write; SQLite's one transaction, before its COMMIT
# and after it (the spool's lines not yet dropped: the next fold finds them in the log by id)
KILL_POINTS = (["before_event_append", "after_event_append", "after_state_write", "after_git_commit"] if FILES
               else ["before_event_append", "sqlite_before_commit", "sqlite_after_commit"])
COMMITTED = "after_git_commit" if FILES else "sqlite_after_commit"  # the fold's events are durable here


def call(repo: Path, i: int) -> tuple[dict, dict]:
    pre = fixture("claude-code", "PreToolUse", repo)
    pre["tool_use_id"] = f"toolu_{i:04d}"
    pre["tool_input"] = {"command": f"pytest -q -k case_{i}", "description": f"step {i}"}
    post = fixture("claude-code", "PostToolUse", repo)
    post.update(tool_name="Bash", tool_use_id=pre["tool_use_id"], tool_input=pre["tool_input"],
                tool_response={"stdout": f"{i} passed\n", "stderr": "", "interrupted": False, "isImage": False})
    return pre, post


def test_a_200_call_turn_with_the_agents_own_git_in_between(bench, repo: Path) -> None:
    bench.add_task("Parse the config")
    track_config(repo)
    ok(hook(repo, fixture("claude-code", "SessionStart", repo)))
    ok(hook(repo, fixture("claude-code", "UserPromptSubmit", repo)))
    assert status_porcelain(repo) == ""
    start = head_count(repo)
    dirty = ""  # what the agent itself left uncommitted: all `git status` may show
    agent_commit = None
    for i in range(CALLS):
        pre, post = call(repo, i)
        ok(hook(repo, pre))
        assert status_porcelain(repo) == dirty, f"after PreToolUse {i}"
        # the agent's own git, between its hooks
        if i == 40:
            run_git(repo, "checkout", "-q", "-b", "feature")
        elif i == 80:
            (repo / "app.py").write_text("print('hello, config')\n")
            dirty = " M app.py\n"
        elif i == 100:
            run_git(repo, "stash", "-q")
            assert run_git(repo, "stash", "show", "--name-only", "--include-untracked").split() == ["app.py"]
            dirty = ""
        elif i == 110:
            run_git(repo, "stash", "pop", "-q")
            dirty = " M app.py\n"
        elif i == 150:
            (repo / "config.py").write_text("def parse(path):\n    return {}\n")
            run_git(repo, "add", "-A")
            run_git(repo, "commit", "-q", "-m", "agent: parse the config")
            agent_commit = run_git(repo, "rev-parse", "HEAD").strip()
            swept = run_git(repo, "show", "--name-only", "--format=", "HEAD").split()
            assert swept == ["app.py", "config.py"]  # nothing of .workbench in the agent's commit
            dirty = ""
        ok(hook(repo, post))
        assert status_porcelain(repo) == dirty, f"after PostToolUse {i}"
    assert head_count(repo) == start + 1  # the agent's commit alone: wb committed nothing during the turn
    spooled = [r["id"] for r in spool_lines(repo)]
    assert len(spooled) == 1 + 2 * CALLS

    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    assert status_porcelain(repo) == "" and spool_lines(repo) == []
    assert run_git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "feature"
    if FILES:
        assert run_git(repo, "rev-parse", "HEAD~1").strip() == agent_commit
        assert run_git(repo, "log", "-1", "--format=%s").strip() == "wb: claude-code turn ends"
        assert set(run_git(repo, "show", "--name-only", "--format=", "HEAD").split()) <= {
            ".workbench/events.jsonl", ".workbench/state.md", ".workbench/board.json"}
    else:  # the turn is one database transaction: the agent's commit stays the branch's last
        assert run_git(repo, "rev-parse", "HEAD").strip() == agent_commit
    logged = [e for e in events(repo) if e["type"].startswith("agent.") and e["type"] != "agent.session_start"]
    ids = [e["id"] for e in logged]
    assert sorted(ids) == sorted(spooled + [ids[-1]]) and len(set(ids)) == len(ids)  # each exactly once, + Stop
    assert [e["type"] for e in logged].count("agent.tool_call") == CALLS
    assert [e["payload"]["tool_use_id"] for e in logged if e["type"] == "agent.tool_result"] == \
        [f"toolu_{i:04d}" for i in range(CALLS)]
    assert run_wb(repo, "validate").returncode == 0
    assert "snapshots match" in run_wb(repo, "replay", "--verify").stdout


@pytest.mark.parametrize("point", KILL_POINTS)
def test_kill_9_mid_fold_loses_nothing_and_duplicates_nothing(bench, repo: Path, point: str) -> None:
    track_config(repo)
    for i in range(10):
        ok(hook(repo, call(repo, i)[0]))
    killed = hook(repo, fixture("claude-code", "Stop", repo), env=dict(os.environ, WB_FAULT=point))
    assert killed.returncode == -9, killed.stderr
    spooled = [r["id"] for r in spool_lines(repo)]  # the killed Stop's own line included
    assert len(spooled) == 11
    ok(hook(repo, fixture("claude-code", "Stop", repo)))  # the next fold
    logged = [e["id"] for e in events(repo)]
    assert all(logged.count(rid) == 1 for rid in spooled)
    assert spool_lines(repo) == [] and status_porcelain(repo) == ""
    assert run_wb(repo, "validate").returncode == 0
    assert "snapshots match" in run_wb(repo, "replay", "--verify").stdout


def test_the_next_wb_write_folds_the_spool(bench, repo: Path) -> None:
    track_config(repo)
    ok(hook(repo, fixture("claude-code", "UserPromptSubmit", repo)))
    ok(hook(repo, call(repo, 1)[0]))
    proc = run_wb(repo, "note", "parser half done")
    assert proc.returncode == 0, proc.stderr
    assert [e["type"] for e in events(repo)[-3:]] == ["agent.prompt", "agent.tool_call", "note.add"]
    assert spool_lines(repo) == [] and status_porcelain(repo) == ""
    if FILES:
        assert run_git(repo, "log", "-1", "--format=%s").strip().startswith("wb: note")


@pytest.mark.parametrize("killed", [False, True])
def test_a_hook_during_a_fold_is_kept(bench, repo: Path, tmp_path: Path, killed: bool) -> None:
    track_config(repo)
    for i in range(5):
        ok(hook(repo, call(repo, i)[0]))
    pause = tmp_path / "pause"
    env = dict(os.environ, WB_PAUSE=COMMITTED, WB_PAUSE_FILE=str(pause))
    if killed:  # killed right after its commit, before it drops the folded lines: the next fold skips them
        env.update(WB_FAULT=COMMITTED)
    stop = subprocess.Popen([*WB_ARGV, "hook", "claude-code"], cwd=repo, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert stop.stdin is not None
    stop.stdin.write(json.dumps(fixture("claude-code", "Stop", repo)))
    stop.stdin.close()
    deadline = time.monotonic() + 60
    while not Path(str(pause) + ".here").exists():
        assert time.monotonic() < deadline and stop.poll() is None, stop.stderr.read() if stop.stderr else ""
        time.sleep(0.02)
    late = call(repo, 99)[0]
    ok(hook(repo, late))  # the agent goes on while wb commits the turn
    Path(str(pause) + ".go").touch()
    assert stop.wait(60) == (-9 if killed else 0)
    left = [r["payload"].get("tool_use_id") for r in spool_lines(repo)]
    assert left == ([f"toolu_{i:04d}" for i in range(5)] + [None, "toolu_0099"] if killed else ["toolu_0099"])
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    logged = [e for e in events(repo) if e["type"] == "agent.tool_call"]
    assert [e["payload"]["tool_use_id"] for e in logged] == [f"toolu_{i:04d}" for i in [0, 1, 2, 3, 4, 99]]
    assert len({e["id"] for e in events(repo)}) == len(events(repo))
    assert spool_lines(repo) == [] and status_porcelain(repo) == ""


def test_concurrent_hooks_each_land_once(bench, repo: Path) -> None:
    procs = []
    for i in range(12):
        p = subprocess.Popen([*WB_ARGV, "hook", "claude-code"], cwd=repo, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append((p, json.dumps(call(repo, i)[0 if i % 2 else 1])))
    for p, data in procs:
        assert p.communicate(data, timeout=60)[1] == ""
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    logged = [e for e in events(repo) if e["type"] in ("agent.tool_call", "agent.tool_result")]
    assert len(logged) == 12 and len({e["id"] for e in logged}) == 12


@files_only  # a linked worktree's workbench is the one its branch holds in git, as files
def test_a_linked_worktree_has_its_own_spool_and_turn(bench, repo: Path, tmp_path: Path) -> None:
    from workbench.git.repo import GitRepo
    from workbench.store.spool import git_dir_of

    linked = tmp_path / "linked"
    run_git(repo, "worktree", "add", "-q", str(linked), "-b", "side")
    assert Path(git_dir_of(linked) or "").resolve() == GitRepo(linked).git_dir.resolve()
    assert Path(git_dir_of(repo) or "").resolve() == GitRepo(repo).git_dir.resolve()
    ok(hook(linked, fixture("claude-code", "UserPromptSubmit", linked)))
    ok(hook(linked, call(linked, 7)[0]))
    assert len(spool_lines(linked)) == 2 and spool_lines(repo) == []
    assert (git_dir(linked) / "wb" / "turn.json").exists() and not (git_dir(repo) / "wb" / "turn.json").exists()
    ok(hook(linked, fixture("claude-code", "Stop", linked)))
    assert run_git(linked, "log", "-1", "--format=%s", "side").strip() == "wb: claude-code turn ends"
    assert "agent.tool_call" not in (repo / ".workbench" / "events.jsonl").read_text()
    assert status_porcelain(linked) == "" and status_porcelain(repo) == ""


def test_a_secret_never_reaches_the_spool_or_the_log(bench, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "s3cr3t-value")
    track_config(repo)
    pre = call(repo, 1)[0]
    pre["tool_input"] = {"command": "curl -H 'Authorization: s3cr3t-value' https://example.invalid"}
    ok(hook(repo, pre))  # config.yaml names no secret yet: cached as such
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("redact: []", "redact: [DEPLOY_TOKEN]"))
    run_git(repo, "commit", "-q", "-am", "redact the deploy token")
    ok(hook(repo, pre))  # config.yaml changed: its names are read again
    spool = (git_dir(repo) / "wb" / "spool.jsonl").read_text()
    assert spool.count("s3cr3t-value") == 1 and "[redacted]" in spool  # the second line is redacted
    assert "s3cr3t-value" not in (git_dir(repo) / "wb" / "redact.json").read_text()  # names, never values
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    text = event_bytes(repo).decode()
    assert "s3cr3t-value" not in text and text.count("[redacted]") == 2  # the fold redacts the first one too


def test_a_turn_that_ends_mid_rebase_waits_for_it_and_lands_once(bench, repo: Path) -> None:
    track_config(repo)
    run_git(repo, "checkout", "-q", "-b", "other")
    (repo / "app.py").write_text("print('other')\n")
    run_git(repo, "commit", "-q", "-am", "other")
    run_git(repo, "checkout", "-q", "main")
    (repo / "app.py").write_text("print('main')\n")
    run_git(repo, "commit", "-q", "-am", "main")
    ok(hook(repo, call(repo, 1)[0]))
    assert subprocess.run(["git", "rebase", "other"], cwd=repo, capture_output=True).returncode != 0  # a conflict
    before = run_git(repo, "status", "--porcelain")
    ok(hook(repo, call(repo, 2)[0]))
    stop = hook(repo, fixture("claude-code", "Stop", repo))
    assert stop.returncode == 0 and stop.stdout == ""
    if FILES:
        assert stop.stderr.startswith("wb: hook claude-code: warning: recorded, not yet committed: a rebase")
        assert len(stop.stderr.splitlines()) == 1
    else:  # the database is no file of the rebase's: the turn lands at once
        assert stop.stderr == ""
        assert [e["type"] for e in events(repo)][-3:] == ["agent.tool_call", "agent.tool_call", "agent.stop"]
    assert run_git(repo, "status", "--porcelain") == before  # wb wrote nothing into the rebase's work tree
    assert spool_lines(repo) == []  # held in the pending journal until the rebase ends (files)
    run_git(repo, "rebase", "--abort")
    assert run_wb(repo, "note", "after the rebase").returncode == 0
    logged = [e for e in events(repo) if e["type"].startswith("agent.")]
    assert [e["type"] for e in logged] == ["agent.tool_call", "agent.tool_call", "agent.stop"]
    assert status_porcelain(repo) == ""
