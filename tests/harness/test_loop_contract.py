"""The harness loop as a library (in memory, no tools): states, hook order, yields, budgets, determinism,
and the transition table (CONTRACT §4)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from workbench.harness import (
    SKIP,
    Budget,
    HarnessLoop,
    HookAbort,
    Pause,
    Pending,
    Result,
    StaleYield,
    State,
    Step,
    machine,
)
from workbench.harness.hooks import TOPICS

ELEVEN = ("session.start", "plan.draft", "plan.commit", "step.start", "step.end", "tool.call", "tool.result",
          "tool.error", "budget.warn", "session.pause", "session.complete")


def planner_of(*steps: Step) -> Callable[[str, list[Any]], list[Step]]:
    """A planner that plans `steps` once, and nothing when asked again (a replan finds the goal met)."""
    def plan(goal: str, history: list[Any]) -> list[Step]:
        return [copy.deepcopy(s) for s in steps] if not history else []

    return plan


def plain(n: int = 3) -> list[Step]:
    return [Step(f"s{i}", f"step {i}") for i in range(1, n + 1)]


def with_tools() -> list[Step]:
    """Three steps; 2 and 3 need a tool the in-memory loop cannot run."""
    return [Step("s1", "think"), Step("s2", "search", True, "search", {"q": "x"}),
            Step("s3", "deploy", True, "deploy", {"env": "staging"})]


def record_all(loop: HarnessLoop) -> list[tuple[str, dict[str, Any]]]:
    fired: list[tuple[str, dict[str, Any]]] = []
    for topic in TOPICS:
        def record(payload: dict[str, Any], topic: str = topic) -> None:
            fired.append((topic, copy.deepcopy(payload)))

        loop.hooks.on(topic, record)
    return fired


def types(loop_or_result: HarnessLoop | Result) -> list[str]:
    return [e.type for e in loop_or_result.events]


# -- a run without tools ------------------------------------------------------------------------------------

def test_three_steps_without_tools_end_done_goal_met() -> None:
    loop = HarnessLoop(planner=planner_of(*plain()), budget=Budget())
    assert loop.state is State.IDLE
    result = loop.run("ship it")
    assert isinstance(result, Result) and result.done is True
    assert result.state is State.DONE and loop.state is State.DONE
    assert result.reason == "goal_met"
    assert [s["status"] for s in result.steps] == ["done", "done", "done"]
    seq = types(result)
    assert seq[0] == "session.start" and seq[-1] == "session.complete"
    assert seq.count("session.start") == 1 and seq.count("session.complete") == 1
    assert seq.count("step.start") == 3 and seq.count("step.end") == 3
    assert seq.index("plan.draft") < seq.index("plan.commit") < seq.index("step.start")
    assert all(e.ts for e in result.events)


def test_hooks_fire_in_contract_order() -> None:
    loop = HarnessLoop(planner=planner_of(*plain()))
    fired = record_all(loop)
    loop.run("ship it")
    topics = [t for t, _ in fired]
    assert topics[:2] == ["before_plan", "after_plan"], topics
    assert topics[-1] == "on_complete", topics
    assert topics.count("on_complete") == 1
    assert topics.count("before_step") == 3 and topics.count("after_step") == 3, topics
    step_topics = [(t, p["index"]) for t, p in fired if t in ("before_step", "after_step")]
    assert step_topics == [("before_step", 0), ("after_step", 0), ("before_step", 1), ("after_step", 1),
                           ("before_step", 2), ("after_step", 2)]
    for topic in ("before_tool_call", "after_tool_call", "on_error", "on_pause", "on_budget_exceeded"):
        assert topic not in topics, f"{topic} fired in a run without tools, errors or pauses"


def test_subscribers_fire_in_registration_order_and_may_mutate_the_payload() -> None:
    loop = HarnessLoop(planner=planner_of(*plain(1)))
    order: list[str] = []

    def first(payload: dict[str, Any]) -> None:
        order.append("first")
        payload["steps"] = payload["steps"] + [{"id": "added", "ordinal": 2, "description": "added by a hook",
                                                 "tool": None, "args": {}, "mode": None}]

    loop.hooks.on("after_plan", first)
    loop.hooks.on("after_plan", lambda payload: order.append(f"second saw {len(payload['steps'])}"))
    result = loop.run("goal")
    assert isinstance(result, Result)
    assert order == ["first", "second saw 2"]
    assert [s["id"] for s in result.steps] == ["s1", "added"]


# -- the tool yield -----------------------------------------------------------------------------------------

def test_tool_steps_yield_twice_then_done() -> None:
    loop = HarnessLoop(planner=planner_of(*with_tools()))
    fired = record_all(loop)
    first = loop.run("release")
    assert isinstance(first, Pending) and first.done is False
    assert first.kind == "tool_result" and first.reason == "tool_call" and first.payload["tool"] == "search"
    assert first.state is State.AWAITING_TOOL and loop.state is State.AWAITING_TOOL
    assert first.payload["tool"] == "search" and first.payload["args"] == {"q": "x"}
    assert first.yield_id

    second = loop.resume({"hits": 3})
    assert isinstance(second, Pending) and second.reason == "tool_call" and second.payload["tool"] == "deploy"
    assert second.yield_id != first.yield_id

    final = loop.resume({"ok": True}, yield_id=second.yield_id)
    assert isinstance(final, Result) and final.state is State.DONE and final.reason == "goal_met"
    assert [s["status"] for s in final.steps] == ["done", "done", "done"]

    before = [p["step"]["id"] for t, p in fired if t == "before_tool_call"]
    after = [p["step"]["id"] for t, p in fired if t == "after_tool_call"]
    assert before == ["s2", "s3"] and after == ["s2", "s3"]
    results = [e.payload for e in final.events if e.type == "tool.result"]
    assert [r["result"] for r in results] == [{"hits": 3}, {"ok": True}]
    assert types(final).count("tool.call") == 2


def test_resume_without_a_result_while_awaiting_a_tool_raises_and_changes_nothing() -> None:
    loop = HarnessLoop(planner=planner_of(*with_tools()))
    pending = loop.run("release")
    assert isinstance(pending, Pending)
    n = len(loop.events)
    with pytest.raises(ValueError, match="tool result"):
        loop.resume(None)
    assert loop.state is State.AWAITING_TOOL and len(loop.events) == n
    pull = loop.resume({"ok": 1})
    assert pull.reason == "tool_call" and pull.payload["tool"] == "deploy"


def test_resume_with_an_error_records_tool_error_and_goes_on() -> None:
    loop = HarnessLoop(planner=planner_of(*with_tools()))
    errors: list[dict[str, Any]] = []
    loop.hooks.on("on_error", errors.append)
    loop.run("release")
    loop.resume(error="search is down")
    result = loop.resume({"ok": True})
    assert isinstance(result, Result) and result.reason == "goal_met"
    assert [s["status"] for s in result.steps] == ["done", "error", "done"]
    tool_errors = [e.payload for e in result.events if e.type == "tool.error"]
    assert len(tool_errors) == 1 and tool_errors[0]["error"] == "search is down"
    assert errors and errors[0]["error"] == "search is down"


def test_stale_yield_id_is_refused() -> None:
    loop = HarnessLoop(planner=planner_of(*with_tools()))
    first = loop.run("release")
    assert isinstance(first, Pending)
    with pytest.raises(StaleYield):
        loop.resume({"ok": 1}, yield_id="not-a-yield")
    second = loop.resume({"ok": 1}, yield_id=first.yield_id)
    assert isinstance(second, Pending)
    n = len(loop.events)
    with pytest.raises(StaleYield):
        loop.resume({"ok": 2}, yield_id=first.yield_id)  # answered already: stale
    assert len(loop.events) == n and loop.state is State.AWAITING_TOOL
    assert isinstance(loop.resume({"ok": 2}, yield_id=second.yield_id), Result)


# -- empty plans, topics, hook aborts -----------------------------------------------------------------------

def test_empty_plan_ends_done_no_plan() -> None:
    loop = HarnessLoop(planner=lambda goal, history: [])
    fired = record_all(loop)
    result = loop.run("nothing to do")
    assert isinstance(result, Result) and result.state is State.DONE and result.reason == "no_plan"
    assert result.steps == []
    assert "step.start" not in types(result)
    assert [t for t, _ in fired] == ["before_plan", "after_plan", "on_complete"]


def test_unknown_topic_is_refused() -> None:
    loop = HarnessLoop(planner=planner_of(*plain()))
    with pytest.raises(ValueError, match="before_lunch"):
        loop.hooks.on("before_lunch", lambda payload: None)
    assert len(TOPICS) == 10


def test_hook_abort_in_before_tool_call_becomes_tool_error_and_the_run_completes() -> None:
    loop = HarnessLoop(planner=planner_of(*with_tools()))

    def guard(payload: dict[str, Any]) -> None:
        if payload["tool"] == "deploy":
            raise HookAbort("no deploys on friday")

    loop.hooks.on("before_tool_call", guard)
    first = loop.run("release")
    assert isinstance(first, Pending) and first.reason == "tool_call" and first.payload["tool"] == "search"
    result = loop.resume({"ok": True})
    assert isinstance(result, Result) and result.state is State.DONE and result.reason == "goal_met"
    errors = [e.payload for e in result.events if e.type == "tool.error"]
    assert len(errors) == 1 and errors[0]["error"].startswith("hook_abort:")
    assert "no deploys on friday" in errors[0]["error"]
    assert result.steps[2]["status"] != "done"
    calls = [e.payload["tool"] for e in result.events if e.type == "tool.call"]
    assert calls == ["search"], "the aborted call must never be dispatched"


def test_a_crashing_python_guard_fails_closed() -> None:
    loop = HarnessLoop(planner=planner_of(*with_tools()))
    loop.hooks.on("before_tool_call", lambda payload: 1 / 0)
    result = loop.run("release")
    assert isinstance(result, Result) and result.state is State.DONE
    errors = [e.payload["error"] for e in result.events if e.type == "tool.error"]
    assert len(errors) == 2 and all(err.startswith("hook_abort:") for err in errors)
    assert "tool.call" not in types(result)


def test_skip_and_pause_from_subscribers() -> None:
    loop = HarnessLoop(planner=planner_of(*plain()))
    loop.hooks.on("before_step", lambda payload: SKIP if payload["index"] == 1 else None)
    loop.hooks.on("after_step", lambda payload: Pause("look at it") if payload["index"] == 0 else None)
    paused = loop.run("goal")
    assert isinstance(paused, Pending) and paused.kind == "pause" and paused.reason == "look at it"
    assert loop.state is State.IDLE
    result = loop.resume()
    assert isinstance(result, Result) and result.reason == "incomplete"  # a skipped step: the goal is not met
    assert [s["status"] for s in result.steps] == ["done", "skipped", "done"]


# -- budgets ------------------------------------------------------------------------------------------------

def test_max_turns_pauses_and_extend_continues() -> None:
    loop = HarnessLoop(planner=planner_of(*plain()), budget=Budget(max_turns=1))
    fired = record_all(loop)
    paused = loop.run("goal")
    assert isinstance(paused, Pending) and paused.kind == "pause"
    assert paused.reason == "budget_exceeded:turns" and paused.state is State.IDLE
    assert [t for t, _ in fired].count("on_budget_exceeded") == 1
    assert [t for t, _ in fired].count("on_pause") == 1
    assert "budget.warn" in types(loop) and "session.pause" in types(loop)
    assert [s.id for s in loop.plan] == ["s1", "s2", "s3"], "the plan survives the pause"
    assert loop.session is not None and loop.session["plan"][0]["status"] == "done", "no partial state lost"

    again = loop.resume()  # no extension: still over budget
    assert isinstance(again, Pending) and again.reason == "budget_exceeded:turns"

    result = loop.resume(extend={"max_turns": 5})
    assert isinstance(result, Result) and result.state is State.DONE and result.reason == "goal_met"
    assert [s["status"] for s in result.steps] == ["done", "done", "done"]


def test_max_tool_calls_pauses_and_extend_continues() -> None:
    loop = HarnessLoop(planner=planner_of(*with_tools()), budget=Budget(max_tool_calls=1))
    first = loop.run("release")
    assert isinstance(first, Pending) and first.reason == "tool_call" and first.payload["tool"] == "search"
    paused = loop.resume({"ok": 1})
    assert isinstance(paused, Pending) and paused.kind == "pause"
    assert paused.reason == "budget_exceeded:tool_calls"
    warn = [e.payload for e in loop.events if e.type == "budget.warn"]
    assert warn and warn[-1]["limit"] == "tool_calls"
    waiting = loop.resume(extend={"max_tool_calls": 5})
    assert isinstance(waiting, Pending) and waiting.reason == "tool_call" and waiting.payload["tool"] == "deploy"
    result = loop.resume({"ok": 2})
    assert isinstance(result, Result) and result.reason == "goal_met"


def test_zero_wall_clock_pauses_with_exactly_wall_clock() -> None:
    loop = HarnessLoop(planner=planner_of(*plain()), budget=Budget(max_wall_seconds=0))
    paused = loop.run("goal")
    assert isinstance(paused, Pending) and paused.kind == "pause"
    assert paused.reason == "budget_exceeded:wall_clock"
    result = loop.resume(extend={"max_wall_seconds": 3600})
    assert isinstance(result, Result) and result.reason == "goal_met"


def test_the_eleven_event_types_are_emitted() -> None:
    loop = HarnessLoop(planner=planner_of(*with_tools()), budget=Budget(max_turns=1))
    loop.run("release")  # pauses after s1 (turns)
    loop.resume(extend={"max_turns": 5})  # s2 waits for its tool
    loop.resume(error="boom")
    result = loop.resume({"ok": True})
    assert isinstance(result, Result)
    missing = set(ELEVEN) - set(types(result))
    assert not missing, f"event types never emitted: {sorted(missing)}"


# -- determinism and the machine ------------------------------------------------------------------------------

def _drive(loop: HarnessLoop) -> Result:
    outcome = loop.run("release")
    while isinstance(outcome, Pending):
        outcome = loop.resume({"ok": True}) if outcome.kind == "tool_result" else loop.resume(extend={"max_turns": 9})
    return outcome


def test_two_identical_runs_give_identical_event_sequences() -> None:
    runs = [_drive(HarnessLoop(planner=planner_of(*with_tools()), budget=Budget(max_turns=2))) for _ in range(2)]
    assert types(runs[0]) == types(runs[1])
    transitions = [[(e.payload["from"], e.payload["to"]) for e in r.events if e.type == "harness.transition"]
                   for r in runs]
    assert transitions[0] == transitions[1]
    assert "budget.warn" in types(runs[0]), "the run should have paused once on its budget"


def test_same_event_log_same_state() -> None:
    from workbench.harness.loop import MemorySink
    from workbench.model import session as sess

    sink = MemorySink()
    loop = HarnessLoop(planner=planner_of(*with_tools()), sink=sink)
    loop.run("release")
    loop.resume({"ok": 1})
    rebuilt: dict[str, Any] = {"status": "idle", "session": None,
                               "counters": {"tasks_completed": 0, "tasks_failed": 0, "turns": 0, "tool_calls": 0,
                                            "tokens_consumed": 0}}
    for event in sink.log:
        sess.fold(rebuilt, copy.deepcopy(event))
    assert rebuilt["session"] == loop.session
    assert rebuilt["session"]["harness_state"] == "AWAITING_TOOL"


def test_illegal_transitions_raise() -> None:
    for src, dst in [(State.DONE, State.PLANNING), (State.DONE, State.IDLE), (State.PLANNING, State.AWAITING_TOOL),
                     (State.EXECUTING, State.PLANNING), (State.AWAITING_TOOL, State.EXECUTING),
                     (State.IDLE, State.IDLE)]:
        with pytest.raises(machine.IllegalTransition):
            machine.check(src, dst)
    for src, dst in [(State.IDLE, State.PLANNING), (State.PLANNING, State.EXECUTING), (State.PLANNING, State.DONE),
                     (State.EXECUTING, State.AWAITING_TOOL), (State.EXECUTING, State.REFLECTING),
                     (State.AWAITING_TOOL, State.REFLECTING), (State.REFLECTING, State.EXECUTING),
                     (State.REFLECTING, State.PLANNING), (State.REFLECTING, State.DONE)]:
        machine.check(src, dst)  # the contract's edges are legal


def test_the_loop_refuses_an_illegal_transition() -> None:
    loop = HarnessLoop(planner=planner_of(*plain(1)))
    loop.run("goal")
    assert loop.state is State.DONE
    with pytest.raises(machine.IllegalTransition):
        loop._transition(State.PLANNING)
    with pytest.raises(RuntimeError):
        loop.resume()


def test_transition_table_checks() -> None:
    machine._validate_table()
    assert not [dst for (src, dst) in machine.TRANSITIONS if src is State.DONE], "DONE must have no exits"
    into_idle = {src for (src, dst) in machine.TRANSITIONS if dst is State.IDLE}
    assert into_idle <= set(machine.ACTIVE)
    for active in machine.ACTIVE:
        assert (active, State.IDLE) in machine.TRANSITIONS, f"{active} cannot pause"


def test_table_validation_catches_a_broken_table(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = dict(machine.TRANSITIONS)
    broken[(State.DONE, State.IDLE)] = "resurrection"
    monkeypatch.setattr(machine, "TRANSITIONS", broken)
    with pytest.raises(AssertionError):
        machine._validate_table()
    unreachable = {k: v for k, v in machine.TRANSITIONS.items() if k != (State.DONE, State.IDLE)
                   and State.AWAITING_TOOL not in k}
    monkeypatch.setattr(machine, "TRANSITIONS", unreachable)
    with pytest.raises(AssertionError):
        machine._validate_table()
