"""`wb init`: creates .workbench/, commits it, and is idempotent."""

from __future__ import annotations

import json

from tests import stored
from tests.conftest import about_files


@about_files  # the files of .workbench/ and git's commit of them (tests/store/test_backend_sqlite.py: SQLite's)
def test_init_creates_the_workbench_and_one_commit(repo, wb, git, commits):
    before = commits(repo)
    r = wb(repo, "init")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.startswith(f"Initialized a workbench in {repo / '.workbench'}")
    wbdir = repo / ".workbench"
    for name in ("config.yaml", "state.md", "board.json", "events.jsonl", "calls.jsonl", ".gitignore",
                 "artifacts/.gitkeep"):
        assert (wbdir / name).is_file(), name
    assert commits(repo) == before + 1
    assert git(repo, "log", "-1", "--format=%s").strip() == "wb: init"
    assert ".workbench/" not in git(repo, "status", "--porcelain", "--untracked-files=all")
    board = json.loads((wbdir / "board.json").read_text())
    assert board == {"schema_version": 2, "last_event": 1, "tasks": []}
    assert (wbdir / "events.jsonl").read_text().count("\n") == 1
    assert wb(repo, "validate").returncode == 0


def test_init_twice_changes_nothing(repo, wb, git, commits, wb_hashes):
    assert wb(repo, "init").returncode == 0
    count = commits(repo)
    files = wb_hashes(repo)
    r = wb(repo, "init")
    assert r.returncode == 0, r.stderr
    assert "nothing changed" in r.stdout
    assert r.stderr == ""
    assert commits(repo) == count
    tracked = {k: v for k, v in files.items() if not k.startswith(".cache/")}
    assert {k: v for k, v in wb_hashes(repo).items() if not k.startswith(".cache/")} == tracked


def test_init_json_and_from_a_subdirectory(repo, wb):
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    r = wb(sub, "init", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["workbench"] == str(repo)
    assert data["created"] is True
    assert isinstance(data["commit"], str) and len(data["commit"]) == 40  # on SQLite: config.yaml (issue 31)
    assert data["warnings"] == []
    assert (repo / ".workbench").is_dir() and not (sub / ".workbench").exists()


def test_init_with_dash_C(repo, tmp_path, wb):
    r = wb(tmp_path, "-C", str(repo), "init")
    assert r.returncode == 0, r.stderr
    assert (repo / ".workbench" / "config.yaml").is_file()
    assert json.loads(wb(repo, "status", "--json").stdout)["last_event"]["type"] == "workbench.init"


@about_files  # a file of .workbench/ lost from the work tree and from git
def test_init_completes_a_half_made_workbench(repo, wb, git):
    assert wb(repo, "init").returncode == 0
    (repo / ".workbench" / "calls.jsonl").unlink()
    git(repo, "rm", "-q", "--cached", ".workbench/calls.jsonl")
    git(repo, "commit", "-q", "-m", "lost calls.jsonl")
    r = wb(repo, "init")
    assert r.returncode == 0, r.stderr
    assert (repo / ".workbench" / "calls.jsonl").exists()
    assert ".workbench/calls.jsonl" in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert ".workbench/" not in git(repo, "status", "--porcelain", "--untracked-files=all")


# --- wb init --claude-code / --codex: the agent's own settings (issue 19) -----------------------------------------

import os  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tomllib  # noqa: E402
from pathlib import Path  # noqa: E402

from tests.integrations.hookfixtures import fixture  # noqa: E402

NO_WB_PATH = "/usr/bin:/bin"  # a shell where `wb` is not on PATH (git still is)


def _hook_commands(settings: dict, event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]


def _exe(command: str) -> str:
    """The wb executable a wired hook command names (`if [ -x EXE ]; then EXE hook …`)."""
    words = shlex.split(command)
    assert words[:3] == ["if", "[", "-x"], command
    return words[3]


def _run_hook(command: str, payload: dict, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The hook as the client runs it: the command string through sh, the payload on stdin."""
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    env["PATH"] = NO_WB_PATH
    return subprocess.run(["/bin/sh", "-c", command], cwd=cwd, input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=120)


def test_claude_code_wiring_merges_and_is_idempotent(repo, wb, git, commits):
    (repo / ".claude").mkdir()
    mine = {"model": "opus", "permissions": {"allow": ["Bash(pytest:*)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(mine))
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "other-server"}}}))
    r = wb(repo, "init", "--claude-code")
    assert r.returncode == 0, r.stderr
    assert ".claude/settings.json: updated" in r.stdout and ".mcp.json: updated" in r.stdout
    assert "not committed" in r.stdout
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus" and settings["permissions"] == mine["permissions"]
    assert _hook_commands(settings, "PreToolUse")[0] == "./guard.sh"  # the user's hook stays, first
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact",
                  "SessionEnd"):
        ours = [c for c in _hook_commands(settings, event) if "hook claude-code" in c]
        assert len(ours) == 1, event
        exe = _exe(ours[0])
        assert os.path.isabs(exe) and os.access(exe, os.X_OK), ours[0]  # wb by its absolute path
    mcp = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert mcp["other"] == {"command": "other-server"}
    assert os.path.isabs(mcp["wb"]["command"]) and mcp["wb"]["args"][-1] == "mcp"
    # never committed: the user commits them
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert "?? .claude/settings.json" in status and "?? .mcp.json" in status
    before = {p: (repo / p).read_bytes() for p in (".claude/settings.json", ".mcp.json")}
    count = commits(repo)
    again = wb(repo, "init", "--claude-code", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["agents"] == {"claude-code": {".claude/settings.json": "unchanged",
                                                                  ".mcp.json": "unchanged"}}
    assert {p: (repo / p).read_bytes() for p in before} == before and commits(repo) == count


def test_wired_hooks_run_with_wb_off_path_and_guard(repo, wb):
    """Reproduced on main: the documented `wb hook claude-code` with wb off PATH exits 127, and Claude Code
    goes on. The wired command names wb by its absolute path: the guard still answers."""
    assert wb(repo, "init", "--claude-code").returncode == 0
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    command = next(c for c in _hook_commands(settings, "PreToolUse") if "hook claude-code" in c)
    payload = fixture("claude-code", "PreToolUse", repo)
    payload.update(tool_name="Write", tool_input={"file_path": str(repo / ".workbench" / "state.md"),
                                                  "content": "---\nstatus: completed\n---\n"})
    proc = _run_hook(command, payload, repo)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    old = _run_hook("wb hook claude-code", payload, repo)  # the command docs/integrations.md used to give
    assert old.returncode == 127  # not 2: Claude Code would have let the Write through


def test_a_wired_hook_blocks_when_wb_cannot_run(repo, wb, tmp_path):
    assert wb(repo, "init", "--claude-code").returncode == 0
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    gone = shlex.quote(str(tmp_path / "removed-venv" / "bin" / "wb"))  # the virtual environment was deleted
    for event, code in (("PreToolUse", 2), ("UserPromptSubmit", 2), ("PostToolUse", 2), ("Stop", 1)):
        command = next(c for c in _hook_commands(settings, event) if "hook claude-code" in c)
        proc = _run_hook(command.replace(shlex.quote(_exe(command)), gone), fixture("claude-code", event, repo),
                         repo)
        assert proc.returncode == code, (event, proc.stderr)  # Stop: 2 would keep the agent going forever
        assert proc.stderr.count("\n") == 1 and "wb is not runnable (exit 127)" in proc.stderr, proc.stderr
    # wb's own exit 2 (it blocked a call it could not check) passes through, without a second message
    command = next(c for c in _hook_commands(settings, "PreToolUse") if "hook claude-code" in c)
    proc = _run_hook(command, {"hook_event_name": "PreToolUse", "tool_input": "x"}, repo)
    assert proc.returncode == 2 and "not runnable" not in proc.stderr and proc.stderr.count("\n") == 1


def test_codex_wiring_keeps_the_users_config_toml(repo, wb, git):
    (repo / ".codex").mkdir()
    toml = '# mine\nmodel = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    (repo / ".codex" / "config.toml").write_text(toml)
    r = wb(repo, "init", "--codex")
    assert r.returncode == 0, r.stderr
    assert "trust" in r.stdout and "codex" in r.stdout  # the step only the user can take
    text = (repo / ".codex" / "config.toml").read_text()
    assert text.startswith(toml)  # byte for byte
    config = tomllib.loads(text)
    assert config["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert os.path.isabs(config["mcp_servers"]["wb"]["command"]) and config["mcp_servers"]["wb"]["args"] == ["mcp"]
    assert config["mcp_servers"]["wb"]["env_vars"] == ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                                                       "GIT_COMMITTER_EMAIL"]  # Codex's default env drops them
    hooks = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    assert set(hooks) >= {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
    assert all("hook codex" in h["command"] for g in hooks["PreToolUse"] for h in g["hooks"])
    before = (repo / ".codex" / "hooks.json").read_bytes(), text
    assert wb(repo, "init", "--codex").returncode == 0
    assert ((repo / ".codex" / "hooks.json").read_bytes(), (repo / ".codex" / "config.toml").read_text()) == before
    assert "?? .codex/" in git(repo, "status", "--porcelain")


def test_settings_that_are_not_json_are_refused_and_left_alone(repo, wb):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"hooks": [')
    r = wb(repo, "init", "--claude-code")
    assert r.returncode != 0 and r.stderr.count("\n") == 1 and ".claude/settings.json" in r.stderr
    assert (repo / ".claude" / "settings.json").read_text() == '{"hooks": ['
    assert not (repo / ".mcp.json").exists()
    assert sys.executable  # the workbench itself was made all the same
    assert stored.board(repo)["tasks"] == []


def test_wb_hooks_already_in_another_settings_file_are_named(repo, wb):
    (repo / ".claude").mkdir()
    local = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "wb hook claude-code"}]}]}}
    (repo / ".claude" / "settings.local.json").write_text(json.dumps(local))
    r = wb(repo, "init", "--claude-code")
    assert r.returncode == 0
    assert "settings.local.json runs wb's claude-code hooks too" in r.stderr and "recorded twice" in r.stderr
    assert json.loads((repo / ".claude" / "settings.local.json").read_text()) == local  # yours: left alone
