"""HarnessLoop: the deterministic agent loop, in memory or bound to a workbench.

Every change of the loop's state is an event folded by `session.fold` — in memory into the loop's own copy,
bound to a workbench into state.md through the store — so a loop rebuilt from the workbench after a crash
continues exactly where the log says it was. `_transition` is the only place the harness state changes.

The loop is built in layers by step kind, each a class on the one before in a module of its own:
harness/loopcore.py (state, events, transitions, hooks, pauses, a step's end), harness/planstep.py (planning, a
step's start, reflection) and harness/toolstep.py (a tool call); this module adds the two entry points (`run`,
`resume`), `abort`, and the drive that picks the next move from the harness state.
"""

from __future__ import annotations

import copy
from typing import Any

from workbench.harness.loopcore import actor_of, failed
from workbench.harness.machine import State
from workbench.harness.toolstep import ToolSteps
from workbench.harness.types import (  # re-exported: the loop's vocabulary, importable from here
    Budget,
    Event,
    Interrupted,
    MemorySink,
    Pending,
    Planner,
    PlannerError,
    Reflector,
    Result,
    Sink,
    StaleYield,
    Step,
    ToolError,
    Tools,
)
from workbench.model import ids

__all__ = ["Budget", "Event", "HarnessLoop", "Interrupted", "MemorySink", "Pending", "Planner", "PlannerError",
           "Reflector", "Result", "Sink", "StaleYield", "Step", "ToolError", "Tools", "failed"]


class HarnessLoop(ToolSteps):
    """The harness loop: every layer of its step kinds (see the module's docstring), driven from here."""

    # -- the two entry points ----------------------------------------------------------------------
    def run(self, goal: str) -> Pending | Result:
        if self.session is not None:
            raise RuntimeError(f"a session is live ({self.session['id']}): resume or abort it first")
        if self._final is not None:
            raise RuntimeError("this loop's session has finished: a new session takes a new HarnessLoop")
        self.events = []
        sid = ids.new_id()
        self._emit("session.start", {"goal": goal, "planner": self.planner_name, "budget": self.budget.as_dict()},
                   session_id=sid)
        self._transition(State.PLANNING, "run")
        return self._drive()

    def resume(self, payload: Any = None, *, approve: bool | None = None, error: str | None = None,
               extend: dict[str, float] | None = None, yield_id: str | None = None, retry: bool = False,
               skip: bool = False, by: str = "agent") -> Pending | Result:
        session = self.session
        if session is None:
            raise RuntimeError("no session to resume: start one with run(goal)")
        pending = session.get("pending")
        if pending is None and self.state is State.IDLE:
            # a crash cut a pause short: the session went IDLE, but the session.pause that records its yield
            # never reached the log. Record it now, so this resume continues the pause (with its --extend)
            # instead of answering "paused" for ever.
            reason = session.get("reason") or "paused"
            self._emit("session.pause", {"reason": reason,
                                         "yield": self._yield("pause", reason, {"reason": reason}, "wb resume")})
            session = self.session
            assert session is not None
            pending = session.get("pending")
        if pending is None:
            if yield_id is not None:
                raise StaleYield(f"yield {yield_id} is not pending: the session is not waiting")
            return self._drive()  # a crash interrupted an active step: carry on from the log
        if yield_id is not None and yield_id != pending["yield_id"]:
            raise StaleYield(f"yield {yield_id} is stale: the session waits on {pending['yield_id']}")
        self._refuse_if_answered(pending)  # before anyone is asked again
        kind = pending["kind"]
        index = session["step_index"]
        if kind == "approval":
            asker = str(getattr(self.approver, "by", "agent"))
            if approve is None and self.approver is not None and (self.approvals != "human" or asker == "human"):
                answer = self.approver(dict(pending.get("payload") or {}))  # ask again, inline
                if answer is None:  # nobody answered (a person did not confirm): it still waits
                    return self._pending_now()
                approve, by = bool(answer), asker
            if approve is None:
                raise ValueError("the session waits for an approval: resume with approve=True or approve=False")
            if approve and self.approvals == "human" and by != "human":
                raise PermissionError(f"approvals: human — {pending['reason']} needs a person's approval")
            step = session["plan"][index]
            who = actor_of(by)
            self._answer(pending, {"yield_id": pending["yield_id"], "action": "approve" if approve else "deny"},
                         actor=who)
            if approve:
                scope = "session" if self._mode(step) == "confirm_once" else "once"
                self._emit("approval.granted", {"index": index, "tool": step["tool"],
                                                "attempt": step.get("attempt", 0) + 1, "scope": scope, "by": by},
                           actor=who)
            else:
                self._emit("approval.denied", {"index": index, "tool": step["tool"], "reason": f"denied by {by}",
                                               "by": by}, actor=who)
                held = self._finish_step(index, "denied")
                if held:
                    return held
                self._transition(State.REFLECTING)
        elif kind in ("tool_result", "in_doubt"):
            if isinstance(payload, dict) and len(payload) == 1 and error is None:
                # the seed lesson's forms: {"result": value} or {"error": message}
                if "result" in payload:
                    payload = payload["result"]
                elif "error" in payload:
                    payload, error = None, str(payload["error"])
            if kind == "in_doubt" and approve:
                self._answer(pending, {"yield_id": pending["yield_id"], "action": "rerun"})
                return self._drive(rerun=True)
            if payload is None and error is None:
                raise ValueError("the session waits for a tool result: resume with a payload (or an error)")
            self._answer(pending, {"yield_id": pending["yield_id"], "action": "error" if error else "result"})
            step = session["plan"][index]
            return self._record_outcome(index, step, step["key"], payload, error, by="human") or self._drive()
        elif str(pending.get("reason", "")).startswith("step_failed:"):
            if retry == skip:
                raise ValueError(f"{pending['reason']}: resume with retry=True (run the step again) or skip=True "
                                 "(go on without it), or abort")
            failed_index = int((pending.get("payload") or {}).get("index", index - 1))
            self._answer(pending, {"yield_id": pending["yield_id"], "action": "retry" if retry else "skip",
                                          "index": failed_index, "extend": dict(extend or {})})
            if retry:
                self._transition(State.EXECUTING, "retry the failed step")
            else:
                self._transition(State(session.get("paused_from") or "REFLECTING"), "skip the failed step")
        else:  # a pause
            self._answer(pending, {"yield_id": pending["yield_id"], "action": "continue",
                                          "extend": dict(extend or {})})
            back = session.get("paused_from") or "EXECUTING"
            self._transition(State(back), "resume")
        return self._drive()

    def abort(self, reason: str = "aborted", by: str = "agent") -> Result:
        """End the live session; `by` ("agent" or "human") is who ended it, the actor of `session.abort`."""
        if self.session is None:
            raise RuntimeError("no session to abort")
        steps = copy.deepcopy(self.session["plan"])
        self._emit("session.abort", {"reason": reason}, actor=actor_of(by))
        self.sink.checkpoint(f"wb: session aborted: {reason}", None)
        self._final = Result(State.DONE, reason, steps, list(self.events))
        return self._final

    # -- the drive ----------------------------------------------------------------------------------
    def _drive(self, rerun: bool = False) -> Pending | Result:
        try:
            return self._drive_on(rerun)
        except KeyboardInterrupt:
            raise Interrupted(self._interrupted()) from None

    def _interrupted(self) -> Pending | None:
        """Ctrl-C: leave the session paused where it was, every event committed, so `wb resume` continues."""
        session = self.session
        if session is None:
            return None
        if session.get("pending") or self.state in (State.IDLE, State.DONE):
            self.sink.checkpoint(f"wb: session interrupted: {(session.get('pending') or {}).get('reason', '')}",
                                 session["id"])
            return self._pending_now() if self.state is not State.DONE else None
        return self._pause("interrupted")

    def _drive_on(self, rerun: bool) -> Pending | Result:
        while True:
            state = self.state
            if state is State.DONE or self.session is None:
                if self._final is None and self.session is not None:
                    # a crash came between the move to DONE and session.complete: complete it now
                    return self._complete(self.session.get("reason") or "goal_met")
                assert self._final is not None
                return self._final
            if state is State.IDLE:
                return self._pending_now()
            over = self._wall_clock_exceeded()
            if over:
                return self._pause("budget_exceeded:wall_clock", limit="max_wall_seconds")
            if state is State.PLANNING:
                out = self._do_planning()
            elif state is State.EXECUTING:
                out = self._do_step()
            elif state is State.AWAITING_TOOL:
                out = self._do_tool(rerun)
                rerun = False
            else:
                out = self._do_reflect()
            if out is not None:
                return out
