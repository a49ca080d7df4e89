"""The seed lesson's loop contract, exactly (issue 12 §3): code written against the lesson's `HarnessLoop`,
`Budget`, `Step`, `State`, `HookAbort` runs unchanged on `workbench.harness`, in memory. Written the way the
lesson's own tests are: a deterministic planner, a loop, assertions on results, hooks and event types."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.harness import (
    HOOK_TOPICS,
    Budget,
    HarnessLoop,
    HookAbort,
    PullRequest,
    SessionResult,
    State,
    Step,
)


def deterministic_planner(goal: str, history: list[Step]) -> list[Step]:
    """The lesson's stand-in planner: three hard-coded steps, two of which need a tool result; once steps have
    been executed (history is not empty) there is nothing more to plan."""
    if history:
        return []
    return [
        Step(id="s1", description="read the issue"),
        Step(id="s2", description="search the code", requires_tool=True, tool_name="grep", tool_args={"q": "bug"}),
        Step(id="s3", description="run the tests", requires_tool=True, tool_name="pytest", tool_args={}),
    ]


def make_loop(**kw: Any) -> HarnessLoop:
    return HarnessLoop(planner=deterministic_planner, budget=Budget(max_turns=10, max_tool_calls=10,
                                                                    max_wall_seconds=60), **kw)


def test_hook_topics_are_the_ten_of_the_lesson_in_order() -> None:
    assert HOOK_TOPICS == ("before_plan", "after_plan", "before_tool_call", "after_tool_call", "before_step",
                           "after_step", "on_error", "on_pause", "on_budget_exceeded", "on_complete")


def test_the_planner_gets_the_steps_already_executed() -> None:
    seen: list[list[str]] = []

    def planner(goal: str, history: list[Step]) -> list[Step]:
        seen.append([s.id for s in history])
        assert all(isinstance(s, Step) for s in history)
        return [] if history else [Step(id="a", description="one")]

    loop = HarnessLoop(planner=planner, reflect=lambda goal, events, step: "replan")
    result = loop.run("g")
    assert isinstance(result, SessionResult)
    assert seen == [[], ["a"]], "history is empty on the first call, then the executed steps"
    assert any(e.type == "plan.commit" for e in loop.events), "the events stay on loop.events"


def test_tool_pull_resume_result_and_error() -> None:
    loop = make_loop()
    errors: list[dict[str, Any]] = []
    loop.hooks.on("on_error", errors.append)
    pull = loop.run("fix the bug")
    assert isinstance(pull, PullRequest)
    assert pull.reason == "tool_call" and pull.state is State.AWAITING_TOOL
    assert pull.payload["tool"] == "grep" and pull.payload["args"] == {"q": "bug"} and pull.payload["step_id"] == "s2"
    with pytest.raises(ValueError):
        loop.resume(None)
    pull = loop.resume({"result": ["a.py:3"]})
    assert isinstance(pull, PullRequest) and pull.payload["tool"] == "pytest" and pull.payload["step_id"] == "s3"
    result = loop.resume({"error": "pytest crashed"})
    assert isinstance(result, SessionResult) and result.state is State.DONE
    tool_events = [(e.type, e.payload.get("error")) for e in result.events if e.type.startswith("tool.")]
    assert ("tool.error", "pytest crashed") in tool_events
    grep = [e.payload for e in result.events if e.type == "tool.result"]
    assert grep and grep[0]["result"] == {"value": ["a.py:3"]}
    assert len(errors) == 1 and errors[0]["error"] == "pytest crashed"
    assert isinstance(errors[0]["step"], Step) and errors[0]["step"].id == "s3"


def test_hook_payloads_carry_the_step() -> None:
    loop = make_loop()
    ids: dict[str, list[str]] = {}
    for topic in ("before_step", "after_step", "before_tool_call", "after_tool_call"):
        loop.hooks.on(topic, lambda p, topic=topic: ids.setdefault(topic, []).append(p["step"].id))
    loop.run("g")
    loop.resume({"result": 1})
    loop.resume({"result": 2})
    assert ids["before_step"] == ids["after_step"] == ["s1", "s2", "s3"]
    assert ids["before_tool_call"] == ids["after_tool_call"] == ["s2", "s3"]


def test_hook_abort_before_tool_call_records_tool_error_and_goes_on() -> None:
    loop = make_loop()
    errors: list[str] = []
    completed: list[str] = []

    def block(payload: dict[str, Any]) -> None:
        raise HookAbort(f"no {payload['tool']}")

    loop.hooks.on("before_tool_call", block)
    loop.hooks.on("on_error", lambda p: errors.append(p["error"]))
    loop.hooks.on("on_complete", lambda p: completed.append(p["reason"]))
    result = loop.run("g")
    assert isinstance(result, SessionResult), "every tool step blocked: the plan completes without a yield"
    assert result.state is State.DONE and completed
    tool_errors = [e.payload["error"] for e in result.events if e.type == "tool.error"]
    assert tool_errors == ["hook_abort:no grep", "hook_abort:no pytest"]
    assert errors == tool_errors
    assert "tool.call" not in [e.type for e in result.events]


def test_a_finished_loop_refuses_a_second_run() -> None:
    loop = make_loop()
    loop.run("g")
    loop.resume({"result": 1})
    assert isinstance(loop.resume({"result": 2}), SessionResult)
    with pytest.raises(RuntimeError):
        loop.run("again")
    assert isinstance(make_loop().run("again"), PullRequest), "a new session takes a new HarnessLoop"


def test_illegal_transition_raises_runtime_error_and_records_nothing() -> None:
    loop = make_loop()
    with pytest.raises(RuntimeError):
        loop._transition(State.DONE)
    assert loop.events == [] and loop.state is State.IDLE
    loop.run("g")
    n = len(loop.events)
    with pytest.raises(RuntimeError):
        loop._transition(State.PLANNING)  # AWAITING_TOOL → PLANNING is not in the table
    with pytest.raises(RuntimeError):
        loop._transition(State.DONE)  # wb's abort edge needs its reason
    assert len(loop.events) == n and loop.state is State.AWAITING_TOOL


def test_budget_exceeded_pauses_and_fires_the_hook() -> None:
    loop = HarnessLoop(planner=deterministic_planner, budget=Budget(max_turns=1))
    exceeded: list[dict[str, Any]] = []
    loop.hooks.on("on_budget_exceeded", exceeded.append)
    out = loop.run("g")
    assert isinstance(out, PullRequest) and out.state is State.IDLE and out.reason == "budget_exceeded:turns"
    assert exceeded and "budget.warn" in [e.type for e in loop.events]


def test_same_inputs_same_event_types() -> None:
    def once() -> list[str]:
        loop = make_loop()
        loop.run("g")
        loop.resume({"result": 1})
        loop.resume({"error": "down"})
        return [e.type for e in loop.events]

    assert once() == once() == once()
    first = once()
    for name in ("session.start", "plan.draft", "plan.commit", "step.start", "step.end", "tool.call",
                 "tool.result", "tool.error", "session.complete"):
        assert name in first
