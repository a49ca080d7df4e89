"""Approvals cannot be lowered (issue 12 §2): a plan cannot loosen a tool's declared mode, an undeclared tool
marked mutating asks before it is handed to a person, who approved is recorded truthfully (`human` at a
terminal, `agent` otherwise), `approvals: human` refuses the rest, and a stale yield id is one line, exit 5."""

from __future__ import annotations

import json

import pytest

from .helpers import WbRepo, py_tool

WRITE = {"argv": py_tool("import pathlib; pathlib.Path('out.txt').write_text('written')"), "mode": "mutating"}
ONCE = {"argv": py_tool("print('lint')"), "mode": "confirm_once"}


@pytest.mark.parametrize(("tool", "declared", "asked"), [
    (WRITE, "mutating", "safe_readonly"), (WRITE, "mutating", "confirm_once"), (ONCE, "confirm_once", "safe_readonly"),
])
def test_a_plan_cannot_loosen_a_tool_mode(wbrepo: WbRepo, tool: dict[str, str], declared: str, asked: str) -> None:
    wbrepo.configure(tools={"t": tool})
    plan = wbrepo.plan([{"id": "sneaky", "description": "deploy quietly", "tool": "t", "mode": asked}])
    refused = wbrepo.wb_expect(5, "run", "g", "--plan", plan)
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1, refused.stderr
    assert "sneaky" in line and "`t`" in line and declared in line and asked in line, line
    assert not (wbrepo.path / "out.txt").exists()
    assert not wbrepo.events("session.start"), "a refused plan starts no session"
    assert wbrepo.status()["session"] is None


def test_a_planner_command_cannot_loosen_a_tool_mode(wbrepo: WbRepo) -> None:
    answer = json.dumps({"steps": [{"id": "sneaky", "description": "d", "tool": "t", "mode": "safe_readonly"}]})
    wbrepo.configure(tools={"t": WRITE})
    wbrepo.write("planner.py", f"import sys; sys.stdin.read(); print({answer!r})")
    paused = wbrepo.wb_json(4, "run", "g", "--planner", "python3 planner.py")
    assert paused["reason"].startswith("planner_error:") and "sneaky" in paused["reason"], paused
    assert not (wbrepo.path / "out.txt").exists()


def test_stricter_step_modes_are_allowed(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"t": ONCE})
    plan = wbrepo.plan([{"description": "d", "tool": "t", "mode": "mutating"}])
    assert wbrepo.wb_json(3, "run", "g", "--plan", plan)["payload"]["mode"] == "mutating"


def test_an_undeclared_mutating_tool_asks_before_it_is_handed_over(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    plan = wbrepo.plan([{"id": "deploy", "description": "deploy", "tool": "deploy", "mode": "mutating"}])
    first = wbrepo.wb_json(3, "run", "g", "--plan", plan)
    assert first["kind"] == "approval" and first["payload"]["tool"] == "deploy", first
    assert not wbrepo.events("tool.call")
    second = wbrepo.wb_json(3, "resume", "--approve")
    assert second["kind"] == "tool_result", second
    wbrepo.wb_json(0, "resume", "--result", "{}")
    wbrepo.assert_consistent()


def test_an_approval_without_a_terminal_is_recorded_as_the_agents(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"write": WRITE})
    wbrepo.wb_json(3, "run", "g", "--plan", wbrepo.plan([{"description": "w", "tool": "write"}]))
    wbrepo.wb_json(0, "resume", "--approve")
    granted = wbrepo.events("approval.granted")
    assert len(granted) == 1 and granted[0]["payload"]["by"] == "agent", granted


def test_approvals_human_refuses_an_agent(wbrepo: WbRepo) -> None:
    wbrepo.configure(tools={"write": WRITE}, approvals="human")
    wbrepo.wb_json(3, "run", "g", "--plan", wbrepo.plan([{"description": "w", "tool": "write"}]))
    refused = wbrepo.wb_expect(5, "resume", "--approve")
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1 and "ask a person to run: wb resume --approve" in line, line
    assert not (wbrepo.path / "out.txt").exists()
    assert wbrepo.status()["pending"]["kind"] == "approval", "the approval still waits for a person"
    wbrepo.wb_expect(5, "resume", "--deny")  # saying no is a person's too (issue 19)
    assert not wbrepo.events("approval.granted") and not wbrepo.events("approval.denied")
    wbrepo.assert_consistent()


def test_a_person_at_the_terminal_approves_as_human(wbrepo: WbRepo) -> None:
    from tests.person import as_person

    wbrepo.configure(tools={"write": WRITE}, approvals="human")
    plan = wbrepo.plan([{"description": "w", "tool": "write"}, {"description": "w again", "tool": "write"}])
    term = as_person(wbrepo.path, "run", "g", "--plan", plan, lines=["y", "n"])
    assert term.returncode == 1, term.output  # the second write was denied: the session is incomplete
    assert term.asked == 1, "the person proves themselves once a process"
    assert [e["payload"]["by"] for e in wbrepo.events("approval.granted")] == ["human"]
    assert [e["payload"]["by"] for e in wbrepo.events("approval.denied")] == ["human"]
    assert {e["proof"] for e in wbrepo.events("approval.granted") + wbrepo.events("approval.denied")} == {"tty-code"}
    # `wb resume --approve` typed at a terminal is a person's too, once they type the code
    wbrepo.wb_json(3, "run", "g2", "--plan", plan)
    term = as_person(wbrepo.path, "resume", "--approve", lines=["y"])
    assert term.returncode == 0, term.output  # the second write asks at the terminal: the person is there
    assert [e["payload"]["by"] for e in wbrepo.events("approval.granted")] == ["human"] * 3
    wbrepo.assert_consistent()


def test_a_stale_or_wrong_yield_id_is_one_line_exit_5(wbrepo: WbRepo) -> None:
    wbrepo.configure()
    plan = wbrepo.plan([{"description": "a", "tool": "ext"}, {"description": "b", "tool": "ext"}])
    first = wbrepo.wb_json(3, "run", "g", "--plan", plan)
    second = wbrepo.wb_json(3, "resume", "--result", "{}", "--yield", first["yield_id"])
    for wrong in (first["yield_id"], "NOSUCHYIELD"):
        stale = wbrepo.wb_expect(5, "resume", "--result", "{}", "--yield", wrong)
        line = stale.stderr.strip()
        assert len(line.splitlines()) == 1 and second["yield_id"] in line and wrong in line, line
        assert "internal error" not in line
    assert wbrepo.status()["pending"]["yield_id"] == second["yield_id"]
