"""Person-only actions (issue 19, items 2 and 8): forcing `done`, moving a started task's acceptance or scope, and
approving or denying a `confirm_once`/`mutating` tool call need a person proven at a terminal (a code shown on
/dev/tty and typed back). An agent — a subprocess without a terminal, a pseudo-terminal it made with `script`, a
process in Claude Code's environment, the MCP server's client, Python importing wb — is refused (exit 5) and
told to ask a person, with the command the person runs; never a bypass.

Before: `wb task done T-001 --force` and `wb task set T-001 'acceptance=["true"]' --override why` were taken
from an agent; `script -qc 'wb resume --approve' /dev/null` was a person's approval (stdin a TTY); with the
default config an agent approved its own mutating call over MCP; a person's `y` at `Allow? [y/N]` was logged
as the agent's; `wb abort` from a script recorded "aborted by a human"; a denied step ended `goal_met`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import stored
from tests.conftest import WB_ARGV, spawn_wb
from tests.person import as_person, person_env

SCRIPT = shutil.which("script")
WRITE_TOOL = "tools:\n  write: {argv: [python3, -c, \"open('out.txt', 'w').write('x')\"], mode: mutating}"


def _events(repo: Path) -> list[dict[str, Any]]:
    return stored.events(repo)


def _config(repo: Path, old: str, new: str) -> None:
    path = repo / ".workbench" / "config.yaml"
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new, 1))


def _refused(out: subprocess.CompletedProcess[str], command: str) -> str:
    text = (out.stdout + out.stderr).strip()
    assert out.returncode == 5, text
    line = text.splitlines()[-1]
    assert "ask a person to run: " + command in line, line
    assert "--actor" not in line and "--override" not in line, "a refusal never teaches a bypass"
    return line


def _agent_shapes(repo: Path, *args: str) -> list[subprocess.CompletedProcess[str]]:
    """The same command as an agent runs it: piped, in Claude Code's environment, and at a pseudo-terminal the
    agent made with `script` with an answer piped in ahead."""
    shapes = [spawn_wb(repo, *args, env=person_env()),
              spawn_wb(repo, *args, env={**person_env(), "CLAUDECODE": "1"})]
    if SCRIPT:
        cmd = " ".join([*WB_ARGV, *(f"'{a}'" for a in args)])
        shapes.append(subprocess.run([SCRIPT, "-qec", cmd, "/dev/null"], cwd=repo, input="y\n1234\n", text=True,
                                     capture_output=True, env=person_env(), timeout=120))
    return shapes


@pytest.fixture
def started(bench, repo: Path) -> Path:
    """T-001 started, its acceptance failing."""
    bench.add_task("Parse the config", acceptance=["false"])
    bench.start_task("T-001")
    return repo


@pytest.fixture
def yielded(bench, repo: Path) -> Path:
    """A session waiting for approval of a mutating tool (the default config: approvals: human)."""
    _config(repo, "tools: {}", WRITE_TOOL)
    (repo / "plan.json").write_text(json.dumps({"steps": [{"description": "Write out.txt", "tool": "write"}]}))
    out = spawn_wb(repo, "run", "Write it", "--plan", "plan.json", env=person_env())
    assert out.returncode == 3, out.stdout + out.stderr
    return repo


# -- forcing done, moving the goalposts ---------------------------------------------------------------------
def test_an_agent_cannot_force_done_and_is_told_to_ask_a_person(started: Path) -> None:
    before = stored.event_bytes(started)
    for out in _agent_shapes(started, "task", "done", "T-001", "--force"):
        _refused(out, "wb task done T-001 --force")
    api = subprocess.run([sys.executable, "-c", "from workbench.api import Bench; "
                          "Bench.open('.').done_task('T-001', force=True)"], cwd=started, capture_output=True,
                         text=True, env=person_env(), stdin=subprocess.DEVNULL, timeout=120)
    assert api.returncode != 0 and "PersonRequired" in api.stderr and "wb task done T-001 --force" in api.stderr
    assert stored.event_bytes(started) == before


def test_the_refusal_of_a_failing_done_names_what_a_person_runs(started: Path) -> None:
    out = spawn_wb(started, "task", "done", "T-001", env=person_env())
    assert out.returncode == 5
    assert "ask a person to run `wb task done T-001 --force`" in out.stderr, out.stderr
    assert "--actor" not in out.stderr


def test_a_person_forces_done_and_the_event_says_how_they_were_proven(started: Path) -> None:
    out = as_person(started, "task", "done", "T-001", "--force")
    assert out.returncode == 0 and out.asked == 1, out.output
    done = _events(started)[-1]
    assert done["type"] == "task.done" and done["payload"]["forced"] is True
    assert (done["actor"], done["via"], done["tty"], done["proof"]) == ("human", "terminal", True, "tty-code")
    shown = spawn_wb(started, "log", "--type", "task.done")
    assert "human (proven at a terminal)" in shown.stdout, shown.stdout
    last = ("HEAD~1", "HEAD") if stored.FILES else ("@-1", "now")  # the forced done: the last commit / event
    review = json.loads(spawn_wb(started, "diff", *last, "--format", "json").stdout)
    assert [(a["what"], a["actor"], a["proof"]) for a in review["events"]["person_only"]] == [
        ("forced T-001 done", "human", "tty-code")]
    for fmt in ("text", "markdown"):
        text = spawn_wb(started, "diff", *last, "--format", fmt).stdout
        assert "forced T-001 done — by human (proven at a terminal)" in text, text
    assert spawn_wb(started, "handoff").returncode == 0
    packet = json.loads((started / ".workbench" / "handoff.json").read_text())
    assert [(a["what"], a["proof"]) for a in packet["person_only"]] == [("forced T-001 done", "tty-code")]
    assert "forced T-001 done — by human (proven at a terminal)" in (started / ".workbench" / "handoff.md").read_text()


def test_an_agent_cannot_move_the_acceptance_of_a_started_task_even_with_a_reason(started: Path) -> None:
    before = stored.event_bytes(started)
    for out in _agent_shapes(started, "task", "set", "T-001", 'acceptance=["true"]'):
        _refused(out, "wb task set T-001 'acceptance=[\"true\"]'")
    with_reason = spawn_wb(started, "task", "set", "T-001", 'acceptance=["true"]', "--override", "flaky",
                           env=person_env())
    assert with_reason.returncode == 5 and "ask a person" in with_reason.stderr, with_reason.stderr
    scope = spawn_wb(started, "task", "set", "T-001", 'scope={"allowed": ["**"]}', env=person_env())
    assert scope.returncode == 5 and "ask a person" in scope.stderr, scope.stderr
    assert stored.event_bytes(started) == before


def test_a_person_moves_the_acceptance_and_the_event_says_so(started: Path) -> None:
    out = as_person(started, "task", "set", "T-001", 'acceptance=["true"]')
    assert out.returncode == 0 and out.asked == 1, out.output
    moved = _events(started)[-1]
    assert moved["type"] == "task.set" and moved["payload"]["changes"] == {"acceptance": ["true"]}
    assert (moved["actor"], moved["proof"]) == ("human", "tty-code")


def test_an_agent_may_still_shape_a_task_it_has_not_started(bench, repo: Path) -> None:
    bench.add_task("Later", acceptance=["false"])
    out = spawn_wb(repo, "task", "set", "T-001", 'acceptance=["true"]', env=person_env())
    assert out.returncode == 0, out.stderr


# -- approving a mutating call ------------------------------------------------------------------------------
def test_an_agent_cannot_approve_or_deny_a_mutating_call(yielded: Path) -> None:
    for out in _agent_shapes(yielded, "resume", "--approve"):
        _refused(out, "wb resume --approve")
    _refused(spawn_wb(yielded, "resume", "--deny", env=person_env()), "wb resume --deny")
    assert not (yielded / "out.txt").exists()
    assert all(e["type"] not in ("approval.granted", "approval.denied") for e in _events(yielded))


def test_without_the_key_approvals_are_a_persons(yielded: Path) -> None:
    _config(yielded, "approvals: human", "")
    _refused(spawn_wb(yielded, "resume", "--approve", env=person_env()), "wb resume --approve")


def test_a_person_approves_at_a_terminal_and_the_event_says_how(yielded: Path) -> None:
    out = as_person(yielded, "resume", "--approve")
    assert out.returncode == 0, out.output
    assert (yielded / "out.txt").read_text() == "x"
    granted = next(e for e in _events(yielded) if e["type"] == "approval.granted")
    assert (granted["actor"], granted["via"], granted["tty"], granted["proof"]) == (
        "human", "terminal", True, "tty-code")
    assert granted["payload"]["by"] == "human"


def test_mcp_never_approves_as_a_person(yielded: Path) -> None:
    pytest.importorskip("mcp")
    from tests.integrations.test_mcp import text_of, with_client

    async def body(session: Any) -> Any:
        return (await session.call_tool("resume", {"decision": "approve"}),
                await session.call_tool("resume", {"decision": "deny"}))

    for answer in with_client(yielded, body):
        text = text_of(answer)
        assert answer.is_error and "\n" not in text, text
        assert "ask a person to run: wb resume --" in text and "terminal" in text, text
    assert not (yielded / "out.txt").exists()
    state = spawn_wb(yielded, "status", "--json")
    assert json.loads(state.stdout)["pending"]["kind"] == "approval"


def test_mcp_never_forces_done_or_moves_the_goalposts(started: Path) -> None:
    pytest.importorskip("mcp")
    from tests.integrations.test_mcp import text_of, with_client

    async def body(session: Any) -> Any:
        return (await session.call_tool("task_update", {"id": "T-001", "action": "done", "force": True}),
                await session.call_tool("task_update", {"id": "T-001", "action": "set",
                                                        "changes": {"acceptance": ["true"]}}))

    forced, moved = with_client(started, body)
    assert forced.is_error and "ask a person to run: wb task done T-001 --force" in text_of(forced), text_of(forced)
    assert moved.is_error and "ask a person to run: wb task set T-001" in text_of(moved), text_of(moved)
    assert all(e["type"] not in ("task.done", "task.set") for e in _events(started))


def test_approvals_any_is_an_opt_in_shown_by_status(yielded: Path) -> None:
    _config(yielded, "approvals: human", "approvals: any")
    text = spawn_wb(yielded, "status")
    assert any(line.split()[:2] == ["approvals", "any"] for line in text.stdout.splitlines()), text.stdout
    assert json.loads(spawn_wb(yielded, "status", "--json").stdout)["approvals"] == "any"
    out = spawn_wb(yielded, "resume", "--approve", env=person_env())
    assert out.returncode == 0, out.stderr
    granted = next(e for e in _events(yielded) if e["type"] == "approval.granted")
    assert (granted["actor"], granted["via"], "proof" in granted) == ("agent", "script", False)


def test_the_default_config_says_approvals_human(bench, repo: Path) -> None:
    assert "approvals: human" in (repo / ".workbench" / "config.yaml").read_text()
    assert json.loads(spawn_wb(repo, "status", "--json").stdout)["approvals"] == "human"


# -- the inline prompt, denial and abort --------------------------------------------------------------------
def test_an_inline_yes_at_the_terminal_is_a_persons_and_proven(bench, repo: Path) -> None:
    _config(repo, "tools: {}", WRITE_TOOL)
    (repo / "plan.json").write_text(json.dumps({"steps": [{"description": "Write out.txt", "tool": "write"}]}))
    out = as_person(repo, "run", "Write it", "--plan", "plan.json", lines=["y"])
    assert out.returncode == 0, out.output
    assert "Allow? [y/N]" in out.output and out.asked == 1
    granted = next(e for e in _events(repo) if e["type"] == "approval.granted")
    assert (granted["actor"], granted["via"], granted["tty"], granted["proof"]) == (
        "human", "terminal", True, "tty-code")


def test_a_denied_step_does_not_end_the_session_goal_met(yielded: Path) -> None:
    out = as_person(yielded, "resume", "--deny")
    assert out.returncode == 1, out.output
    complete = _events(yielded)[-1]
    assert complete["type"] == "session.complete" and complete["payload"]["reason"] == "incomplete"
    denied = next(e for e in _events(yielded) if e["type"] == "approval.denied")
    assert (denied["actor"], denied["proof"]) == ("human", "tty-code")


def test_a_denied_step_in_memory_is_not_goal_met() -> None:
    from workbench.harness import HarnessLoop
    from workbench.harness.types import Step

    loop = HarnessLoop(planner=lambda goal, history: [
        Step("write", "Write", requires_tool=True, tool_name="write", mode="mutating")])
    first = loop.run("Write it")
    assert first.kind == "approval"
    done = loop.resume(approve=False)
    assert done.done and done.reason == "incomplete"


def test_abort_records_who_aborted(yielded: Path) -> None:
    out = spawn_wb(yielded, "abort", env=person_env())
    assert out.returncode == 0, out.stderr
    aborted = _events(yielded)[-1]
    assert aborted["type"] == "session.abort"
    assert (aborted["actor"], aborted["via"]) == ("agent", "script")
    assert "human" not in aborted["payload"]["reason"], aborted["payload"]


def test_abort_at_a_terminal_records_the_person(yielded: Path) -> None:
    out = as_person(yielded, "abort")
    assert out.returncode == 0, out.output
    aborted = _events(yielded)[-1]
    assert (aborted["type"], aborted["actor"], aborted["via"], aborted["tty"]) == (
        "session.abort", "human", "terminal", True)


def test_running_a_mutating_call_in_doubt_again_needs_a_person(yielded: Path) -> None:
    """A person approves the mutating call, and wb is killed while it runs: the call is in doubt. Running it again
    (`wb resume --approve`) is approving it again — a person's, not the agent's."""
    killed = as_person(yielded, "resume", "--approve", env={**person_env(), "WB_FAULT": "after_tool_run"})
    assert killed.returncode == -9, killed.output
    assert (yielded / "out.txt").exists()
    doubt = spawn_wb(yielded, "resume", env=person_env())  # the next resume finds the call in doubt
    assert doubt.returncode == 3, doubt.stdout + doubt.stderr
    status = json.loads(spawn_wb(yielded, "status", "--json", env=person_env()).stdout)
    assert (status.get("pending") or {}).get("kind") == "in_doubt", status
    before = (yielded / "out.txt").read_text()
    agent = spawn_wb(yielded, "resume", "--approve", env=person_env())
    _refused(agent, "wb resume --approve")
    assert (yielded / "out.txt").read_text() == before, "the agent ran the mutating call again"
    again = as_person(yielded, "resume", "--approve")
    assert again.returncode == 0 and again.asked == 1, again.output
