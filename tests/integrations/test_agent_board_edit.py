"""An agent's edit of board.json can never change a task's acceptance, scope, status, owner or claim (issue 19 §2).

Before: during its turn an agent rewrote board.json with `python3 -c …` (acceptance → ["true"], scope dropped):
wb kept it as `agent.edit` and `wb task done` then passed on `true`. And deleting the turn marker first
(`rm .git/wb/turn.json`) made the same edit a `human.edit` by `human`. Now the edit is refused at the next
load: each task and field named on one line, board.json restored to what the log folds to, and an
`agent.edit_refused` event; a hand edit while an agent's session is open (SessionStart seen, no SessionEnd) is
the agent's, marker or not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import files_only, run_wb
from tests.integrations.hookfixtures import events, fixture, git_dir, hook, ok
from tests.person import as_person

REWRITE = r"""
import json, sys
path = sys.argv[1]
board = json.load(open(path))
task = board["tasks"][0]
task["acceptance"] = ["true"]
task.pop("scope", None)
task["title"] = "Parse the config, quickly"
open(path, "w").write(json.dumps(board, indent=2) + "\n")
"""

# an agent's hand edit of board.json: on SQLite there is no board.json to edit (the PreToolUse guard, the same
# on both backends, is tests/integrations/test_hook_guard.py's)
pytestmark = files_only


def _agent_rewrites_the_board(repo: Path) -> None:
    """What the agent's Bash tool ran (a script, not an Edit the PreToolUse hook sees)."""
    subprocess.run([sys.executable, "-c", REWRITE, str(repo / ".workbench" / "board.json")], check=True)


@pytest.mark.parametrize(("marker", "then"), [("kept", "note"), ("deleted", "note"), ("kept", "done")])
def test_an_agents_edit_of_acceptance_and_scope_is_refused(bench, repo: Path, marker: str, then: str) -> None:
    task = bench.add_task("Parse the config", acceptance=["false"], scope={"allowed": ["src/**"]})
    ok(hook(repo, fixture("claude-code", "SessionStart", repo)))
    ok(hook(repo, fixture("claude-code", "UserPromptSubmit", repo)))  # the turn begins
    turn = git_dir(repo) / "wb" / "turn.json"
    assert turn.exists()
    if marker == "deleted":
        turn.unlink()  # the agent's `rm .git/wb/turn.json`, before its edit
    _agent_rewrites_the_board(repo)
    if then == "note":  # the agent's next write: the refusal is listed, one line per task and field
        note = run_wb(repo, "note", "parser done")
        assert note.returncode == 0, note.stderr
        lines = [line for line in note.stderr.splitlines() if "refused, board.json restored" in line]
        assert len(lines) == 2 and all(task["id"] in line for line in lines), note.stderr
    done = run_wb(repo, "task", "done", task["id"])
    assert done.returncode != 0, "the agent's acceptance ['true'] passed: the edit was kept"
    board = json.loads((repo / ".workbench" / "board.json").read_text())["tasks"][0]
    assert board["acceptance"] == ["false"] and board["scope"] == {"allowed": ["src/**"]}
    assert board["title"] == "Parse the config, quickly"  # a title edit stands, as before
    log = events(repo)
    assert not [e for e in log if e["type"] == "human.edit"], "the agent's edit passed for a person's"
    refused = [e for e in log if e["type"] == "agent.edit_refused"]
    assert len(refused) == 1 and refused[0]["actor"] == "agent"
    assert sorted(r["field"] for r in refused[0]["payload"]["refused"]) == ["acceptance", "scope"]
    assert [e["actor"] for e in log if e["type"] == "agent.edit"] == ["agent"]
    assert run_wb(repo, "validate").returncode == 0
    assert run_wb(repo, "replay", "--verify").returncode == 0
    shown = run_wb(repo, "log", "--type", "agent")
    assert "agent.edit_refused" in shown.stdout and f"{task['id']}.acceptance" in shown.stdout, shown.stdout


def test_a_person_edits_after_the_agents_session_ended(bench, repo: Path) -> None:
    """SessionEnd closes the session: a person's edit of acceptance is a person's again (human.edit)."""
    task = bench.add_task("Parse the config", acceptance=["false"])
    ok(hook(repo, fixture("claude-code", "SessionStart", repo)))
    ok(hook(repo, fixture("claude-code", "UserPromptSubmit", repo)))
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    ok(hook(repo, fixture("claude-code", "SessionEnd", repo)))
    _agent_rewrites_the_board(repo)
    assert as_person(repo, "note", "reviewed").returncode == 0
    log = events(repo)
    assert [e["actor"] for e in log if e["type"] == "human.edit"] == ["human"]
    assert not [e for e in log if e["type"] == "agent.edit_refused"]
    board = json.loads((repo / ".workbench" / "board.json").read_text())["tasks"][0]
    assert board["acceptance"] == ["true"] and board["id"] == task["id"]
