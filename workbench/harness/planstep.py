"""The planning, step and reflection kinds of the harness loop (HarnessLoop's second layer, on harness/loopcore.py):
asking the planner for the plan and checking what it returns, starting the next step, and the reflection after
the last one."""

from __future__ import annotations

from typing import Any

from workbench.harness.loopcore import LoopCore
from workbench.harness.machine import State
from workbench.harness.tools import loosened
from workbench.harness.types import (
    Pending,
    PlannerError,
    Result,
    Step,
)


class PlanSteps(LoopCore):
    """Planning, a step's start, reflection (HarnessLoop's second layer)."""

    def _do_planning(self) -> Pending | Result | None:
        session = self.session
        assert session is not None
        replanning = session["step_index"] > 0
        outcome, aborted = self._guard("before_plan", {"goal": session["goal"], "replan": replanning})
        if aborted is not None:
            return self._pause(f"hook_abort:{aborted}")
        assert outcome is not None
        if outcome.pause:
            return self._pause(outcome.pause)
        try:
            steps = self._call_planner(session["goal"])
        except PlannerError as err:
            self._emit("planner.error", {"error": str(err)})
            self._fire("on_error", {"error": str(err), "where": "planner"})
            return self._pause(f"planner_error:{err}")
        first = session["step_index"] + 1
        items = [s.to_item(first + i) for i, s in enumerate(steps)]
        self._emit("plan.draft", {"steps": items})
        after = self._fire("after_plan", {"goal": session["goal"], "steps": items})
        items = after.payload.get("steps", items)
        self._emit("plan.commit", {"steps": items})
        if after.pause:
            return self._pause(after.pause)
        if not items:
            return self._complete("no_plan" if not replanning else "goal_met")
        self._transition(State.EXECUTING, "plan committed")
        return None

    def _call_planner(self, goal: str) -> list[Step]:
        if self.planner is None:
            return []
        session = self.session
        assert session is not None
        executed = [Step.from_item(item) for item in session["plan"][: session["step_index"]]]
        try:
            steps = self.planner(goal, executed)
        except PlannerError:
            raise
        except Exception as err:
            raise PlannerError(f"{type(err).__name__}: {err}") from None
        if not isinstance(steps, list) or not all(isinstance(s, Step) for s in steps):
            raise PlannerError("the planner must return a list of Step")
        used = {s.id for s in steps}
        if len(used) != len(steps):
            raise PlannerError("the planner returned two steps with the same id")
        for s in steps:
            why = loosened(s.id, s.tool_name or "", s.mode, self.tools.spec(s.tool_name) if self.tools and s.tool_name
                           else None)
            if why:
                raise PlannerError(why)
        return steps

    def _do_step(self) -> Pending | Result | None:
        session = self.session
        assert session is not None
        index = session["step_index"]
        if index >= len(session["plan"]):
            self._transition(State.REFLECTING, "plan exhausted")
            return None
        step = session["plan"][index]
        if step["status"] == "pending":
            limit = self._limit("max_turns")
            if limit is not None and session["budget"]["used"]["turns"] >= limit:
                return self._pause("budget_exceeded:turns", limit="max_turns")
            outcome, aborted = self._guard("before_step", {"step": Step.from_item(step), "index": index})
            if aborted is not None:
                return self._end_step(index, "aborted", reason=f"hook_abort:{aborted}")
            assert outcome is not None
            if outcome.pause:
                return self._pause(outcome.pause)
            if outcome.skip:
                return self._end_step(index, "skipped", reason="skipped by a hook")
            self._emit("step.start", {"index": index, "step": step["id"]})
            step = self._step(index)
        if not step.get("tool"):
            return self._end_step(index, "done")
        self._transition(State.AWAITING_TOOL, f"step {step['id']} needs {step['tool']}")
        return None

    def _do_reflect(self) -> Pending | Result | None:
        session = self.session
        assert session is not None
        last = session["plan"][session["step_index"] - 1] if session["step_index"] else {}
        if last.get("status") == "error":
            policy = last.get("on_error") or "continue"
            reason = f"step_failed:{last['id']}"
            if policy == "fail":
                return self._complete(reason)
            if policy == "pause":
                return self._pause(reason, payload={"step": last["id"], "index": session["step_index"] - 1,
                                                    "error": last.get("error", "")},
                                   command="wb resume --retry | wb resume --skip")
        decision: Any = "next"
        if self.reflect is not None:
            try:
                decision = self.reflect(session["goal"], list(self.events), dict(last))
            except PlannerError as err:
                self._emit("planner.error", {"error": str(err)})
                return self._pause(f"planner_error:{err}")
        if decision == "done" or (decision == "next" and session["step_index"] >= len(session["plan"])):
            return self._complete("goal_met")
        if decision == "replan":
            self._transition(State.PLANNING, "replan")
            return None
        self._transition(State.EXECUTING, "next step")
        return None
