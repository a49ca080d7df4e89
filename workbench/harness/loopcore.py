"""The harness loop's core (harness/loop.py's HarnessLoop is built on it): the loop's state and what a caller
reads of it, the one `_emit` that folds each event (`session.fold`: in memory, or through the store when bound),
`_transition` — the only place the harness state changes —, hooks fired and guarded, a pause at a limit or a
yield, a step's end, and the session's completion. The step kinds are the layers above: harness/planstep.py
(planning, a step's start, reflection), then harness/toolstep.py (a tool call)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from workbench.harness.hooks import FireOutcome, HookAbort, HookRegistry
from workbench.harness.machine import IllegalTransition, State, check
from workbench.harness.tools import strictest
from workbench.harness.types import (
    Budget,
    Event,
    MemorySink,
    Pending,
    Planner,
    Reflector,
    Result,
    Sink,
    StaleYield,
    Step,
    Tools,
)
from workbench.model import ids
from workbench.model import session as sess


def _blank_state() -> dict[str, Any]:
    return {"status": "idle", "session": None,
            "counters": {"tasks_completed": 0, "tasks_failed": 0, "turns": 0, "tool_calls": 0, "tokens_consumed": 0}}


class LoopCore:
    """The loop's state and the moves every step kind makes (HarnessLoop's first layer)."""

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

    # -- events, transitions, hooks -----------------------------------------------------------------
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

    # -- yields and pauses --------------------------------------------------------------------------
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

    # -- answers to a yield, and the journal a shared tool keeps -------------------------------------
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

    # -- a step's end, and the session's --------------------------------------------------------------
    def _step(self, index: int) -> dict[str, Any]:
        """The plan item as folded now (bound to a workbench, each emit replaces the session copy)."""
        session = self.session
        assert session is not None
        item: dict[str, Any] = session["plan"][index]
        return item

    def _spec(self, step: dict[str, Any]) -> Any:
        return self.tools.spec(step["tool"]) if self.tools is not None else None

    def _mode(self, step: dict[str, Any]) -> str:
        """The step's mode, never looser than its tool's declared one (a plan may only tighten it)."""
        spec = self._spec(step)
        if spec is None:
            return str(step.get("mode") or "mutating")
        return strictest(step.get("mode"), spec.mode)

    def _policy(self, step: dict[str, Any]) -> str:
        """What a failed step does next: its own on_error, else its tool's, else pause."""
        spec = self._spec(step)
        return str(step.get("on_error") or getattr(spec, "on_error", None) or "pause")

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


def actor_of(by: str) -> str:
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
