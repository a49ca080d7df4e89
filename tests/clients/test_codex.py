"""A real `codex exec` session (npm @openai/codex) against a scripted Responses API on 127.0.0.1, with wb wired
by `wb init --codex`: its hooks (.codex/hooks.json) record the session and guard `.workbench/` and the task's
scope, its MCP server (.codex/config.toml) does the work. What wb recorded, committed and denied is read back
from wb.

What Codex 0.171 takes, with no login and no model:
- a `model_providers` entry in `$CODEX_HOME/config.toml` (`base_url` = the scripted server, `wire_api =
  "responses"`, `env_key` naming a dummy key) and a model Codex knows (`gpt-5.5`: an unknown one gets fallback
  metadata, without `apply_patch` or `tool_search`);
- the project trusted in that config (`[projects."<repo>"] trust_level = "trusted"`), else Codex loads none of
  `.codex/`; and `--dangerously-bypass-hook-trust`, as `codex exec` has no screen to trust the hooks on (a
  person trusts them once in `codex`, see docs/integrations.md);
- `--dangerously-bypass-approvals-and-sandbox`: no approval prompt, no sandbox, so what stops a call is wb's
  hook alone (an apply_patch wb did not deny would be applied).
Codex offers MCP tools to the model only through its `tool_search` tool (deferred), so the script searches
first, as a model would, and calls what the search returned (`namespace: "mcp__wb"`).
Codex has no SessionEnd hook: the end of the session is its Stop, where wb folds the spool. Codex starts MCP
servers with a default set of environment variables: the suite's git identity (GIT_AUTHOR_*, GIT_COMMITTER_*)
reaches `wb mcp` through the `env_vars` that `wb init --codex` writes, and without them nothing is committed.
Not covered: the hook trust a person gives in `codex`'s screen (the test bypasses it, as automation must), and
Codex's sandbox: under `-s workspace-write` (which works here) `.workbench/` is inside the writable workspace,
so the sandbox stops none of the writes wb's hooks deny.
"""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.clients.conftest import client_env, events, wb
from tests.clients.modelserver import ScriptedModel, pick
from tests.conftest import run_git

pytestmark = pytest.mark.clients

MODEL = "gpt-5.5"  # one of the models Codex 0.171 has metadata for


def codex_home(home: Path, repo: Path, url: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'''model = "{MODEL}"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "WB_SCRIPTED_API_KEY"

[projects."{repo}"]
trust_level = "trusted"
''')
    return home


def run_codex(clients_bin: Path, repo: Path, home: Path, model: ScriptedModel,
              prompt: str = "Do the scripted work.") -> subprocess.CompletedProcess[str]:
    env = client_env(CODEX_HOME=str(codex_home(home, repo, model.url)), WB_SCRIPTED_API_KEY="sk-scripted")
    return subprocess.run(
        [str(clients_bin / "codex"), "exec", "--json", "--skip-git-repo-check",
         "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", prompt],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def outputs(requests: list[dict[str, Any]]) -> list[str]:
    """The output of every tool call Codex sent back to the model, in order, once each."""
    seen: dict[str, str] = {}
    for request in requests:
        for item in request["body"].get("input") or []:
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                seen.setdefault(item["call_id"], output if isinstance(output, str) else json.dumps(output))
    return list(seen.values())


def patch(path: str, text: str) -> str:
    return f"*** Begin Patch\n*** Add File: {path}\n+{text}\n*** End Patch\n"


def test_a_codex_session_is_recorded_guarded_and_committed(clients_bin: Path, guarded_repo: Path,
                                                            tmp_path: Path) -> None:
    repo = guarded_repo
    wb(repo, "init", "--codex")  # its env_vars pass the suite's GIT_AUTHOR_*/GIT_COMMITTER_* on to `wb mcp`
    board_before = (repo / ".workbench" / "board.json").read_bytes()
    commits_before = int(run_git(repo, "rev-list", "--count", "HEAD"))
    turns = [("search", "wb status task_add note", "mcp__wb"),  # the first-turn test below says when it is found
             ("tool", pick("status"), {}),
             ("tool", pick("task_add"), {"title": "Written by the agent"}),
             ("tool", pick("apply_patch"), "*** Begin Patch\n*** Delete File: .workbench/board.json\n*** End Patch\n"),
             ("tool", pick("apply_patch"), patch("secrets/key.txt", "x")),
             ("tool", pick("exec_command"), {"cmd": "echo '- done' >> .workbench/state.md"}),
             ("tool", pick("note"), {"text": "Scripted session: the calls are made"}),
             ("text", "Done.")]
    with ScriptedModel(turns) as model:
        proc = run_codex(clients_bin, repo, tmp_path / "codex-home", model)
        assert not model.errors, model.errors
        requests = model.requests
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    items = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert {"type": "agent_message", "text": "Done."} in [
        {k: i["item"].get(k) for k in ("type", "text")} for i in items if i["type"] == "item.completed"], items

    # Recorded: the session from its start to its Stop, every tool call, wb's own writes by the agent over MCP.
    log = events(repo)
    types = [e["type"] for e in log]
    for kind in ("agent.session_start", "agent.prompt", "agent.stop"):
        assert kind in types, types
    calls = [e["payload"] for e in log if e["type"] == "agent.tool_call"]
    assert all(c["agent"] == "codex" for c in calls), calls
    named = [c["tool"] for c in calls]
    assert named == ["mcp__wb__status", "mcp__wb__task_add", "apply_patch", "apply_patch", "Bash",
                     "mcp__wb__note"], calls
    added = [e for e in log if e["type"] == "task.add" and e["payload"]["task"]["title"] == "Written by the agent"]
    assert len(added) == 1 and added[0]["via"] == "mcp" and added[0]["actor"] == "agent", added
    notes = [e for e in log if e["type"] == "note.add"]
    assert [(n["payload"]["text"], n["via"]) for n in notes] == [("Scripted session: the calls are made", "mcp")]

    # Denied: the board edit, the forbidden path and the shell's append to state.md, each with wb's reason,
    # which the model was shown.
    assert "denied" not in calls[0] and "denied" not in calls[1] and "denied" not in calls[5]
    assert "written by wb alone" in calls[2]["denied"], calls[2]
    assert "forbids secrets/**" in calls[3]["denied"] and "T-001" in calls[3]["denied"], calls[3]
    assert "written by wb alone" in calls[4]["denied"] and "state.md" in calls[4]["denied"], calls[4]
    results = outputs(requests)
    assert len(results) == 6, results
    assert '"T-001"' in results[0]  # status over MCP: the active task
    assert "written by wb alone" in results[2] and "forbids secrets/**" in results[3], results
    assert "written by wb alone" in results[4], results
    assert "- done" not in (repo / ".workbench" / "state.md").read_text()
    assert not (repo / "secrets").exists()
    board = json.loads((repo / ".workbench" / "board.json").read_text())
    assert [t["id"] for t in board["tasks"]] == ["T-001", "T-002"]
    assert (repo / ".workbench" / "board.json").read_bytes() != board_before  # changed by wb's task_add only

    # Committed: every event is in git, the work tree holds nothing of wb's uncommitted, the log is whole.
    new = int(run_git(repo, "rev-list", "--count", "HEAD")) - commits_before
    subjects = run_git(repo, "log", "--format=%s", f"HEAD~{new}..HEAD").splitlines()
    assert "wb: add T-002 Written by the agent" in subjects, subjects
    assert any(s.startswith("wb: note Scripted session") for s in subjects), subjects
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""
    wb(repo, "validate")


def test_codex_s_first_turn_can_find_wb_s_tools(clients_bin: Path, guarded_repo: Path, tmp_path: Path) -> None:
    """Issue 20: "Codex's first turn runs without wb's tools". Codex lists an MCP server's tools in the background
    and sends the first turn without waiting; its `tools/list` carries `_meta.progressToken`, which `wb mcp`'s
    fast path used to leave to the SDK (~1 s to load), so the first search found nothing of wb's. Three fresh
    sessions: each one's first search, the model's first step, returns wb's tools."""
    repo = guarded_repo
    wb(repo, "init", "--codex")
    for attempt in range(3):
        with ScriptedModel([("search", "wb status"), ("text", "Done.")]) as model:
            started = time.monotonic()
            proc = run_codex(clients_bin, repo, tmp_path / f"codex-home-{attempt}", model)
            took = time.monotonic() - started
            assert not model.errors, model.errors
            requests = model.requests
        assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
        found = [t for r in requests for i in r["body"].get("input") or []
                 if isinstance(i, dict) and i.get("type") == "tool_search_output" for t in i.get("tools") or []]
        namespaces = {t.get("name"): [x.get("name") for x in t.get("tools") or []] for t in found}
        print(f"codex exec session {attempt}: {took:.2f} s, the first search found {sorted(namespaces)}")
        assert "status" in namespaces.get("mcp__wb", []), namespaces
