"""HarnessLoop: the deterministic agent loop, in memory or bound to a workbench.

Every change of the loop's state is an event folded by `session.fold` — in memory into the loop's own copy,
bound to a workbench into state.md through the store — so a loop rebuilt from the workbench after a crash
continues exactly where the log says it was. `_transition` is the only place the harness state changes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from workbench import faults
from workbench.harness.hooks import FireOutcome, HookAbort, HookRegistry
from workbench.harness.machine import IllegalTransition, State, check
from workbench.harness.tools import failure, loosened, strictest
from workbench.harness.types import (  # noqa: F401 - re-exported: the loop's vocabulary, importable from here
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
from workbench.model import session as sess


def _blank_state() -> dict[str, Any]:
    return {"status": "idle", "session": None,
            "counters": {"tasks_completed": 0, "tasks_failed": 0, "turns": 0, "tool_calls": 0, "tokens_consumed": 0}}


class HarnessLoop:
    def __init__(self, planner: Planner | None = None, budget: Budget | None = None, *,
                 hooks: HookRegistry | None = None, reflect: Reflector | None = None, tools: Tools | None = None,
                 sink: Sink | None = None, approver: Callable[[dict[str, Any]], bool] | None = None,
                 state: dict[str, Any] | None = None, planner_name: str = "", approvals: str = "any",
                 pull_reason: str = "tool_call") -> None:
        self.planner = planner
        self.budget = budget or Budget()
        self.hooks = hooks or HookRegistry()
        self.reflect = reflect
        self.tools = tools
        self.sink: Sink = sink or MemorySink()
        self.approver = approver
        self.approvals = approvals  # "human": only a person may approve (an approver says so with `.by`)
        self.pull_reason = pull_reason  # the reason of a tool pull; "{tool}" is filled in (wb names the tool)
        self.planner_name = planner_name or getattr(planner, "__qualname__", "") if planner else planner_name
        self._doc = copy.deepcopy(state) if state is not None else _blank_state()
        self.events: list[Event] = []
        self._final: Result | None = None
        self._last_plan: list[dict[str, Any]] = []

    # -- what a caller reads ------------------------------------------------------------------------
    @property
    def session(self) -> dict[str, Any] | None:
        session: dict[str, Any] | None = self._doc.get("session")
        return session

    @property
    def state(self) -> State:
        if self.session is None:
            return State.DONE if self._final is not None else State.IDLE
        return State(self.session["harness_state"])

    @property
    def plan(self) -> list[Step]:
        items = self.session["plan"] if self.session else self._last_plan
        return [Step.from_item(item) for item in items]

    @property
    def pending(self) -> dict[str, Any] | None:
        return self.session.get("pending") if self.session else None

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
            who = _actor(by)
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
        self._emit("session.abort", {"reason": reason}, actor=_actor(by))
        self.sink.checkpoint(f"wb: session aborted: {reason}", None)
        self._final = Result(State.DONE, reason, steps, list(self.events))
        return self._final

    # -- the repository's shared journal of calls (workbench.store.calljournal) ---------------------------
    def _shared(self) -> Any:
        """Where the calls that reach the outside world are journaled for every branch and worktree, or None
        (an in-memory loop, tools outside git)."""
        return getattr(self.tools, "journal", None)

    def _for_shared(self, record: dict[str, Any]) -> dict[str, Any]:
        """A call record as the shared journal keeps it: without the secrets calls.jsonl does not hold either."""
        journaled = getattr(self.tools, "journaled", None)
        return journaled(record) if journaled is not None else dict(record)

    def _stale(self, pending: dict[str, Any], prior: dict[str, Any]) -> StaleYield:
        shared = self._shared()
        return StaleYield(f"yield {pending['yield_id']} ({pending.get('reason', '')}) is stale: it was answered "
                          f"({prior.get('action', '')}) {shared.describe(prior)} at {prior.get('ts', '?')}, and "
                          "the session went on there; merge that branch, or `wb abort` ends the session here")

    def _refuse_if_answered(self, pending: dict[str, Any]) -> None:
        shared = self._shared()
        prior = shared.answer(pending["yield_id"]) if shared is not None else None
        if prior is not None and not shared.here(prior):
            raise self._stale(pending, prior)

    def _answer(self, pending: dict[str, Any], payload: dict[str, Any], actor: str = "agent") -> None:
        """Answer a yield: claimed in the shared journal first (an answer given on another branch or in another
        worktree, even a moment ago, makes this one stale), then recorded as `session.resume`."""
        shared = self._shared()
        if shared is not None:
            session = self.session
            prior = shared.claim_answer({"yield_id": pending["yield_id"], "session": session["id"] if session else None,
                                         "reason": pending.get("reason", ""), "action": payload.get("action"),
                                         "ts": ids.utc_now()})
            if prior is not None:
                raise self._stale(pending, prior)
        self._emit("session.resume", payload, actor=actor)

    # -- events and transitions --------------------------------------------------------------------
    def _emit(self, type_: str, payload: dict[str, Any], *, journal: dict[str, Any] | None = None,
              session_id: str | None = None, actor: str = "agent") -> Event:
        sid = session_id or (self.session["id"] if self.session else None)
        event = {"schema_version": 1, "id": ids.new_id(), "ts": ids.utc_now(), "type": type_, "actor": actor,
                 "session": sid, "payload": payload}
        authoritative = self.sink.emit(event, journal)
        if authoritative is not None:  # bound: the store folded it into state.md; take its word
            self._doc = authoritative
        else:
            sess.fold(self._doc, event)
        if self._doc.get("session"):
            self._last_plan = self._doc["session"]["plan"]
        ev = Event(type_, payload, str(event["ts"]), event.get("seq"))  # type: ignore[arg-type]
        self.events.append(ev)
        return ev

    def _transition(self, dst: State, reason: str | None = None) -> None:
        """The only place the harness state changes. An edge not in the table raises (RuntimeError) and records
        nothing; there is no transition without a live session."""
        src = self.state
        check(src, dst, live=self.session is not None, reason=reason)
        if self.session is None:
            raise IllegalTransition(f"no live session: {src.value} → {dst.value} needs run(goal) first")
        self._emit("harness.transition", {"from": src.value, "to": dst.value, "reason": reason})

    def _fire(self, topic: str, payload: dict[str, Any]) -> FireOutcome:
        outcome = self.hooks.fire(topic, payload)
        for problem in outcome.problems:
            self._emit("hook.error", problem)
        return outcome

    def _guard(self, topic: str, payload: dict[str, Any]) -> tuple[FireOutcome | None, str | None]:
        """Fire a before_* topic: (outcome, None) or (None, abort reason)."""
        try:
            return self._fire(topic, payload), None
        except HookAbort as abort:
            self._emit("hook.block", {"topic": topic, "hook": getattr(abort, "hook", ""), "reason": abort.reason})
            return None, abort.reason

    # -- the drive ---------------------------------------------------------------------------------
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

    def _pending_now(self) -> Pending:
        pending = self.pending or {"yield_id": "", "kind": "pause", "reason": "paused"}
        return Pending(pending["reason"], self.state, dict(pending.get("payload") or {}), pending["yield_id"],
                       pending["kind"], pending.get("command", ""))

    def _yield(self, kind: str, reason: str, payload: dict[str, Any], command: str) -> dict[str, Any]:
        return {"yield_id": ids.new_id(), "kind": kind, "reason": reason, "payload": payload, "command": command}

    def _hold(self) -> Pending:
        """Return at a yield point: commit what the step did so far, and hand control back."""
        session = self.session
        assert session is not None
        self.sink.checkpoint(f"wb: session waits: {session['pending']['reason']}", session["id"])
        return self._pending_now()

    # -- budget --------------------------------------------------------------------------------------
    def _limit(self, name: str) -> Any:
        assert self.session is not None
        return self.session["budget"]["limits"].get(name)

    def _wall_clock_exceeded(self) -> bool:
        limit = self._limit("max_wall_seconds")
        return limit is not None and sess.active_seconds(self.session or {}, ids.utc_now()) >= float(limit)

    def _pause(self, reason: str, *, limit: str | None = None, payload: dict[str, Any] | None = None,
               command: str | None = None) -> Pending:
        session = self.session
        assert session is not None
        if limit is not None:
            used_key = {"max_turns": "turns", "max_tool_calls": "tool_calls", "max_wall_seconds": "seconds"}[limit]
            used = sess.active_seconds(session, ids.utc_now()) if used_key == "seconds" \
                else session["budget"]["used"][used_key]
            info = {"limit": reason.split(":", 1)[1], "used": used, "max": self._limit(limit)}
            self._fire("on_budget_exceeded", dict(info))
            self._emit("budget.warn", info)
        planning = self.state is State.PLANNING
        self._transition(State.IDLE, reason)
        hint = "wb resume" + (f" --extend {reason.split(':', 1)[1].replace('wall_clock', 'seconds')}=N"
                              if limit else "")
        if planning:  # the planner is not kept in the workbench: a resume names it again
            hint = f"{hint} --plan FILE | {hint} --planner CMD"
        self._emit("session.pause", {"reason": reason, "yield": self._yield(
            "pause", reason, {"reason": reason, **(payload or {})}, command or hint)})
        self._fire("on_pause", {"reason": reason})
        return self._hold()

    # -- planning ------------------------------------------------------------------------------------
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

    # -- steps ---------------------------------------------------------------------------------------
    def _step(self, index: int) -> dict[str, Any]:
        """The plan item as folded now (bound to a workbench, each emit replaces the session copy)."""
        session = self.session
        assert session is not None
        item: dict[str, Any] = session["plan"][index]
        return item

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

    def _end_step(self, index: int, status: str, **extra: Any) -> Pending | Result | None:
        held = self._finish_step(index, status, **extra)
        if held is not None:
            return held
        self._transition(State.REFLECTING)
        return None

    def _finish_step(self, index: int, status: str, **extra: Any) -> Pending | None:
        session = self.session
        assert session is not None
        step = session["plan"][index]
        self._emit("step.end", {"index": index, "step": step["id"], "status": status, **extra})
        outcome = self._fire("after_step", {"step": Step.from_item(step), "index": index, "status": status})
        session = self.session
        assert session is not None
        self.sink.checkpoint(f"wb: step {index + 1}/{len(session['plan'])} {status}: {_short(step['description'])}",
                             session["id"])
        if outcome.skip:
            nxt = index + 1
            if nxt < len(session["plan"]) and session["plan"][nxt]["status"] == "pending":
                self._emit("step.end", {"index": nxt, "step": session["plan"][nxt]["id"], "status": "skipped",
                                        "reason": "skipped by a hook"})
        if outcome.pause:
            return self._pause(outcome.pause)
        return None

    # -- tools ---------------------------------------------------------------------------------------
    def _spec(self, step: dict[str, Any]) -> Any:
        return self.tools.spec(step["tool"]) if self.tools is not None else None

    def _mode(self, step: dict[str, Any]) -> str:
        """The step's mode, never looser than its tool's declared one (a plan may only tighten it)."""
        spec = self._spec(step)
        if spec is None:
            return str(step.get("mode") or "mutating")
        return strictest(step.get("mode"), spec.mode)

    def _do_tool(self, rerun: bool) -> Pending | Result | None:
        session = self.session
        assert session is not None
        index = session["step_index"]
        if index >= len(session["plan"]) or session["plan"][index]["status"] == "pending":
            # the awaited step has ended (its step.end moved step_index on), but the move out of AWAITING_TOOL
            # did not follow (a crash in between): make it now, rather than take the next step for this one
            self._transition(State.REFLECTING)
            return None
        step = session["plan"][index]
        if step["status"] == "awaiting_tool" and not rerun:
            return self._collect(index, step)
        spec = self._spec(step)
        attempt = step.get("attempt", 0) + 1
        args = dict(step.get("args") or {})
        # a declared tool asks as its mode says; an undeclared one only when the plan marks it so, before it
        # is handed to a person (who might otherwise run a deploy nobody approved)
        if (spec is not None or step.get("mode") in ("confirm_once", "mutating")) and not rerun:
            mode = self._mode(step)
            needs = mode == "mutating" or (mode == "confirm_once" and step["tool"] not in session["grants"])
            if needs and step.get("approved_attempt") != attempt:
                if session.get("pending"):
                    return self._pending_now()
                request = {"step": step["id"], "index": index, "tool": step["tool"], "args": args, "mode": mode}
                by = str(getattr(self.approver, "by", "agent"))
                reason = f"approval_required:{step['tool']}"
                inline = self.approver is not None and (self.approvals != "human" or by == "human")
                # the question is recorded as a yield and committed before anyone is asked: an interrupt or a
                # kill at the prompt leaves a session that says what it waits for
                asked = self._yield("approval", reason, request, "wb resume --approve | wb resume --deny")
                self._emit("approval.requested", {**request, "attempt": attempt, "yield": asked,
                                                  **({"inline": True} if inline else {})})
                if not inline:
                    return self._hold()
                self.sink.checkpoint(f"wb: session asks: {reason}", session["id"])
                assert self.approver is not None
                answer = self.approver(request)
                if answer is None:  # nobody answered (a person did not confirm): the yield stands
                    return self._pending_now()
                granted = bool(answer)
                who = _actor(by)
                self._answer(asked, {"yield_id": asked["yield_id"], "action": "approve" if granted else "deny"},
                             actor=who)
                if not granted:
                    self._emit("approval.denied", {"index": index, "tool": step["tool"], "reason": f"denied by {by}",
                                                   "by": by}, actor=who)
                    return self._end_step(index, "denied")
                self._emit("approval.granted", {"index": index, "tool": step["tool"], "attempt": attempt,
                                                "scope": "session" if mode == "confirm_once" else "once",
                                                "by": by}, actor=who)
        limit = self._limit("max_tool_calls")
        if limit is not None and session["budget"]["used"]["tool_calls"] >= limit:
            return self._pause("budget_exceeded:tool_calls", limit="max_tool_calls")
        outcome, aborted = self._guard("before_tool_call", {"step": Step.from_item(step), "index": index,
                                                            "tool": step["tool"], "args": args})
        if aborted is not None:
            blocked = f"hook_abort:{aborted}"
            self._emit("tool.error", {"index": index, "step": step["id"], "error": blocked})
            self._fire("on_error", {"step": Step.from_item(self._step(index)), "error": blocked, "where": "hook",
                                    "step_id": step["id"]})
            return self._end_step(index, "aborted")
        assert outcome is not None
        if outcome.pause:
            return self._pause(outcome.pause)
        args = outcome.payload.get("args", args) if isinstance(outcome.payload.get("args"), dict) else args
        key = f"{session['id']}:{step['id']}:{attempt}"
        call = {"index": index, "step": step["id"], "tool": step["tool"], "args": args, "key": key,
                "attempt": attempt}
        journal = {"schema_version": 1, "key": key, "session": session["id"], "step": step["id"],
                   "attempt": attempt, "tool": step["tool"], "args": args, "status": "pending", "ts": ids.utc_now()}
        if spec is None:
            reason = self.pull_reason.replace("{tool}", step["tool"])
            self._emit("tool.call", {**call, "dispatch": "human", "yield": self._yield(
                "tool_result", reason, {**call, "step_id": step["id"]},
                "wb resume --result JSON | --result-file F | --error MSG")})
            return self._hold()
        self._emit("tool.call", {**call, "dispatch": "wb"}, journal=journal)
        # committed before the tool runs: after a kill -9 during it, the session says which call is in doubt
        self.sink.checkpoint(f"wb: step {index + 1}/{len(session['plan'])} runs {step['tool']}", session["id"])
        return self._dispatch(index, spec, args, key, journal)

    def _dispatch(self, index: int, spec: Any, args: dict[str, Any], key: str,
                  journal: dict[str, Any]) -> Pending | Result | None:
        assert self.tools is not None
        shared = self._shared()
        if shared is not None:  # claimed where every branch and worktree sees it, or made already: not again
            prior = shared.claim_call(self._for_shared(journal))
            if prior is not None:
                return self._made_elsewhere(index, key, prior)
        details: dict[str, Any] = {}
        try:
            result, error = self.tools.run(spec, args, key), None
            nonzero = failure(spec.name, result) if isinstance(result, dict) else None
            if nonzero is not None:  # it ran and exited non-zero: its step fails
                raise nonzero
        except ToolError as err:
            result, error, details = None, str(err), err.details
        except KeyboardInterrupt:  # Ctrl-C: the tool's group was killed; record that, then stop
            session = self.session
            assert session is not None
            stopped = "interrupted: wb stopped the tool (Ctrl-C)"
            self._finish_shared(journal, None, stopped)
            self._record_error(index, session["plan"][index], key, stopped, "wb")
            raise
        faults.point("after_tool_run")  # a kill here: the call is in doubt (nothing recorded its outcome)
        self._finish_shared(journal, result, error)
        faults.point("after_shared_result")  # a kill here: the outcome is known, from the shared journal
        session = self.session
        assert session is not None
        return self._record_outcome(index, session["plan"][index], key, result, error, by="wb", details=details)

    def _finish_shared(self, journal: dict[str, Any], result: Any, error: str | None) -> None:
        shared = self._shared()
        if shared is None:
            return
        assert self.tools is not None
        outcome = {**journal, "status": "error" if error else "done", "ts": ids.utc_now(),
                   "result": None if error else (result if isinstance(result, dict) else {"value": result}),
                   "error": error}
        shared.finish_call(self._for_shared(outcome))

    def _made_elsewhere(self, index: int, key: str, prior: dict[str, Any]) -> Pending | Result | None:
        """The call was claimed before (on another branch, in another worktree, or here before a crash): use its
        outcome when it has one, else it is in doubt — it is never made a second time."""
        session = self.session
        assert session is not None
        step = session["plan"][index]
        if prior.get("status") in ("done", "error"):
            return self._record_outcome(index, step, key, prior.get("result"), prior.get("error"), by="journal")
        where = self._shared().describe(prior)
        self._emit("tool.progress", {"index": index, "key": key, "note": f"in doubt: started {where}",
                                     "yield": self._yield(
            "in_doubt", f"in_doubt:{step['tool']}",
            {"step": step["id"], "tool": step["tool"], "key": key, "started": where, "mode": self._mode(step)},
            "wb resume --result JSON | --error MSG | --approve (run it again)")})
        return self._hold()

    def _policy(self, step: dict[str, Any]) -> str:
        """What a failed step does next: its own on_error, else its tool's, else pause."""
        spec = self._spec(step)
        return str(step.get("on_error") or getattr(spec, "on_error", None) or "pause")

    def _record_outcome(self, index: int, step: dict[str, Any], key: str, result: Any, error: str | None,
                        by: str, details: dict[str, Any] | None = None) -> Pending | Result | None:
        self._record_error(index, step, key, error, by, details, result)
        faults.point("after_tool_result")
        return self._after_tool(index, error)

    def _record_error(self, index: int, step: dict[str, Any], key: str, error: str | None, by: str,
                      details: dict[str, Any] | None = None, result: Any = None) -> None:
        """Record the call's outcome: `tool.error` (with the failure policy) or `tool.result`, journaled."""
        session = self.session
        assert session is not None
        journal = {"schema_version": 1, "key": key, "session": session["id"], "step": step["id"],
                   "attempt": step.get("attempt", 1), "tool": step["tool"], "status": "error" if error else "done",
                   "ts": ids.utc_now(), "result": result if isinstance(result, dict) else {"value": result},
                   "error": error}
        if error is not None:
            journal["result"] = None
            failure: dict[str, Any] = {"index": index, "step": step["id"], "key": key, "error": error, "by": by}
            for name in ("exit_code", "stderr_tail"):
                if (details or {}).get(name) is not None:
                    failure[name] = (details or {})[name]
            if isinstance((details or {}).get("result"), dict):
                failure["output"] = (details or {})["result"]
            # a failure of a tool wb ran (now, or before a crash) follows the failure policy; an error a person
            # or an agent reports answers the yield, and the session goes on unless the step asks otherwise
            if by in ("wb", "journal"):
                failure["policy"] = self._policy(step)
            self._emit("tool.error", failure, journal=journal)
        else:
            self._emit("tool.result", {"index": index, "key": key, "result": journal["result"], "by": by,
                                       "summary": _summary(journal["result"])}, journal=journal)

    def _after_tool(self, index: int, error: str | None) -> Pending | Result | None:
        session = self.session
        assert session is not None
        step = session["plan"][index]
        self._fire("after_tool_call", {"step": Step.from_item(step), "index": index, "tool": step["tool"],
                                       "result": step.get("result"), "error": error})
        if error is not None:
            self._fire("on_error", {"step": Step.from_item(step), "error": error, "where": "tool",
                                    "step_id": step["id"]})
        return self._end_step(index, "error" if error else "done")

    def _collect(self, index: int, step: dict[str, Any]) -> Pending | Result | None:
        """The tool call was journaled before a crash or a yield: use its recorded outcome, never run it twice."""
        session = self.session
        assert session is not None
        if "result" in step or "error" in step:
            return self._after_tool(index, step.get("error"))
        if session.get("pending"):
            return self._pending_now()
        record = self.sink.recorded_call(step["key"])
        shared = self._shared()
        if (record is None or record["status"] not in ("done", "error")) and shared is not None:
            # the outcome reached the shared journal before a crash kept it from calls.jsonl, or the call was
            # made on another branch or in another worktree
            record = shared.call(step["key"]) or record
        if record is not None and record["status"] in ("done", "error"):
            return self._record_outcome(index, step, step["key"], record.get("result"), record.get("error"),
                                        by="journal")
        spec = self._spec(step)
        if spec is not None and getattr(spec, "idempotent", False):
            return self._do_tool(rerun=True)
        claimed = shared.call(step["key"]) if shared is not None else None
        if claimed is not None and not shared.here(claimed):  # running there now, or cut short there
            return self._made_elsewhere(index, step["key"], claimed)
        reason = f"in_doubt:{step['tool']}"
        self._emit("tool.progress", {"index": index, "key": step["key"], "note": "in doubt", "yield": self._yield(
            "in_doubt", reason, {"step": step["id"], "tool": step["tool"], "key": step["key"],
                                 "mode": self._mode(step)},
            "wb resume --result JSON | --error MSG | --approve (run it again)")})
        return self._hold()

    # -- reflection ----------------------------------------------------------------------------------
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

    def _complete(self, reason: str) -> Result:
        session = self.session
        assert session is not None
        steps = copy.deepcopy(session["plan"])
        if reason == "goal_met" and any(failed(s) for s in steps):
            reason = "completed_with_failures"
        elif reason == "goal_met" and any(s.get("status") in ("denied", "skipped") for s in steps):
            reason = "incomplete"  # a step did not run (denied, or skipped): the goal is not met
        if self.state is not State.DONE:
            self._transition(State.DONE, reason)
        self._emit("session.complete", {"reason": reason, "steps": len(steps),
                                        "done": sum(1 for s in steps if s["status"] == "done")})
        self._fire("on_complete", {"reason": reason, "steps": steps})
        self.sink.checkpoint(f"wb: session complete: {reason}", None)
        self._final = Result(State.DONE, reason, steps, list(self.events))
        return self._final


def _actor(by: str) -> str:
    """The event actor of an answer given `by` someone: a person's is "human", anything else an agent's."""
    return "human" if by == "human" else "agent"


def failed(step: dict[str, Any]) -> bool:
    """A step whose tool failed under a failure policy and was not retried to success. A step a hook blocked
    did not fail; an error reported to a yield (`resume(error=…)`) is the caller's answer and, as in the seed
    lesson, the session goes on to goal_met unless the step itself declares `on_error`."""
    error = step.get("error")
    return (bool(error) and bool(step.get("on_error")) and step.get("status") in ("error", "skipped")
            and not str(error).startswith("hook_abort:"))


def _short(text: str, width: int = 50) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _summary(result: Any) -> str:
    if isinstance(result, dict) and "exit_code" in result:
        return f"exit {result['exit_code']}"
    import json

    text = json.dumps(result, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"
