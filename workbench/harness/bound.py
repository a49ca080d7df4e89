"""The loop bound to a workbench: every event through the store's transaction, a commit per step, the
session rebuilt from state.md (snapshot + log) on resume — in this process or another, after a crash."""

from __future__ import annotations

import copy
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.errors import Busy, Refused, UsageError
from workbench.harness.hooks import registry_from_config
from workbench.harness.loop import Budget, HarnessLoop, Pending, Result
from workbench.harness.planners import CommandPlanner, FilePlanner, callable_planner, load_plan_file
from workbench.harness.tools import ToolBox, loosened
from workbench.harness.types import StaleYield, not_declared
from workbench.store import trust
from workbench.store.humanedit import HumanGuard
from workbench.store.workbench import Workbench

EXTEND_KEYS = {"turns": "max_turns", "tool_calls": "max_tool_calls", "seconds": "max_wall_seconds"}


class WorkbenchSink:
    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.changed_since_yield: dict[str, Any] | None = None  # issue 16: recorded in the next resume event
        # issue 16: called before the commit that ends a session (the handoff packet is written into it)
        self.on_complete: Callable[[], None] | None = None
        self._completed = False

    def emit(self, event: dict[str, Any], journal: dict[str, Any] | None) -> dict[str, Any]:
        for _attempt in range(3):
            try:
                return self._emit(event, journal)
            except HumanGuard as guard:  # a person just edited the workbench: let their edit land first
                time.sleep(min(guard.seconds_left, 30) + 0.05)
        return self._emit(event, journal)

    def _emit(self, event: dict[str, Any], journal: dict[str, Any] | None) -> dict[str, Any]:
        with self.wb.transaction(actor="agent", session=event["session"], commit=False) as tx:
            live = tx.docs.state.get("session")
            if event["type"] == "session.start":
                if live:
                    raise Busy(f"session {live['id']} is {live['harness_state']}: `wb resume` continues it, "
                               "`wb abort` ends it")
            elif not live or live.get("id") != event["session"]:
                raise Refused(f"session {event['session']} is no longer live (aborted or finished elsewhere)")
            if journal is not None:
                tx.journal(journal)
            self._where(event)
            logged = tx.emit(event["type"], event["payload"], ts=event["ts"], session=event["session"],
                             actor=event.get("actor") or "agent")
        event["seq"] = logged["seq"]
        state = tx.docs.state
        return {"status": state["status"], "session": copy.deepcopy(state["session"]),
                "counters": dict(state["counters"])}

    # -- issue 16: where the work tree stood at the session's start and at each yield; what changed at resume
    def _where(self, event: dict[str, Any]) -> None:
        from workbench.errors import GitError
        from workbench.git.changes import where_now

        payload = event["payload"]
        try:
            if event["type"] == "session.start":
                payload["where"] = where_now(self.wb.root)
            elif isinstance(payload.get("yield"), dict):
                payload["yield"]["where"] = where_now(self.wb.root)
        except GitError:
            pass  # no git on PATH: the yield records no position, and resume says nothing of what changed
        if event["type"] in ("session.complete", "session.abort"):
            self._completed = True
        if event["type"] == "session.resume" and self.changed_since_yield is not None:
            payload["changed"] = self.changed_since_yield
            self.changed_since_yield = None

    def checkpoint(self, summary: str, session_id: str | None) -> None:
        if self._completed and self.on_complete is not None:
            self._completed = False
            self.on_complete()
        self.wb.checkpoint(summary, session_id)

    def recorded_call(self, key: str) -> dict[str, Any] | None:
        return self.wb.recorded_call(key)


def resolve_planner(wb: Workbench, plan: Path | None, planner: str | None) -> Any:
    if plan is not None and planner is not None:
        raise UsageError("give --plan FILE or --planner CMD, not both")
    if plan is not None:
        found = trust.plan_command(wb.root, plan)  # a plan file git tracks can come through git
        trust.require(wb.root, [found] if found else [])
        return FilePlanner(load_plan_file(plan), plan.name)
    context = _context(wb)
    if planner is not None:  # given on the command line: the user's own
        argv = shlex.split(planner)
        if not argv:
            raise UsageError("--planner needs a command")
        return CommandPlanner(argv, wb.root, context)
    configured = wb.config.get("planner")
    if configured:
        trust.require(wb.root, [c for c in trust.config_commands(wb.config) if c.kind == "planner"])
        if "run" in configured:
            return CommandPlanner(list(configured["run"]), wb.root, context, float(configured.get("timeout", 120)))
        return callable_planner(configured["python"], str(wb.root))
    return None


def _context(wb: Workbench) -> Callable[[], dict[str, Any]]:
    def context() -> dict[str, Any]:
        docs = wb.load(detect_human=False).docs
        state = {k: v for k, v in docs.state.items() if k != "session"}
        return {"state": state, "board": docs.board["tasks"]}

    return context


def approvals_of(config: dict[str, Any]) -> str:
    """Who may approve a confirm_once or mutating call: "human" (the default: a person proven at a terminal)
    unless config.yaml opts in to "any" (an unattended pipeline, whose approvals are an agent's)."""
    return "any" if config.get("approvals") == "any" else "human"


def build_loop(wb: Workbench, planner: Any = None, budget: Budget | None = None,
               approver: Callable[[dict[str, Any]], bool] | None = None,
               on_complete: Callable[[], None] | None = None) -> HarnessLoop:
    config = wb.config
    try:
        hooks = registry_from_config(config.get("hooks") or {}, str(wb.root))
    except ValueError as err:
        raise Refused(f"config.yaml: hooks: {err}") from None
    tools = ToolBox(config.get("tools") or {}, wb.root, wb.paths.artifacts, config.get("redact") or [], wb.git)
    state = wb.load(detect_human=False).docs.state
    doc = {"status": state["status"], "session": copy.deepcopy(state["session"]), "counters": dict(state["counters"])}
    sink = WorkbenchSink(wb)
    sink.on_complete = on_complete
    loop = HarnessLoop(planner=planner, budget=budget, hooks=hooks, tools=tools, sink=sink,
                       approver=approver, state=doc, planner_name=getattr(planner, "__qualname__", "") or "",
                       approvals=approvals_of(config), pull_reason="tool_result_required:{tool}")
    if isinstance(planner, CommandPlanner):
        loop.reflect = planner.reflect
        planner.events = lambda: loop.events
    return loop


def run(wb: Workbench, goal: str, *, plan: Path | None = None, planner: str | None = None,
        max_turns: int | None = None, max_tool_calls: int | None = None, max_seconds: float | None = None,
        approver: Callable[[dict[str, Any]], bool] | None = None,
        on_complete: Callable[[], None] | None = None) -> Pending | Result:
    live = wb.load(detect_human=False).docs.state.get("session")
    if live:
        waiting = (live.get("pending") or {}).get("reason", "live")
        raise Busy(f"session {live['id']} is {live['harness_state']} ({waiting}): "
                   "`wb resume` continues it, `wb abort` ends it")
    # every command config.yaml declares, before the session records a thing: it came through git, or not
    trust.require(wb.root, trust.config_commands(wb.config))
    chosen = resolve_planner(wb, plan, planner)
    if chosen is None:
        raise UsageError("no planner: give --plan FILE or --planner CMD (or set planner: in .workbench/config.yaml)")
    if isinstance(chosen, FilePlanner):  # an agent writes the plan: it may not loosen the person's config
        tools = ToolBox(wb.config.get("tools") or {}, wb.root, wb.paths.artifacts)
        for step in chosen.steps:
            why = loosened(step.id, step.tool_name or "", step.mode, tools.spec(step.tool_name or ""))
            if why:
                raise Refused(f"{chosen.name}: {why}")
    limits = dict(wb.config.get("budget") or {})
    budget = Budget(max_turns if max_turns is not None else limits.get("max_turns"),
                    max_tool_calls if max_tool_calls is not None else limits.get("max_tool_calls"),
                    max_seconds if max_seconds is not None else limits.get("max_wall_seconds"))
    return build_loop(wb, chosen, budget, approver, on_complete).run(goal)


def parse_extend(items: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in EXTEND_KEYS:
            raise UsageError(f"--extend takes turns=N, tool_calls=N or seconds=N, not {item!r}")
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"--extend {name}: {value!r} is not a number") from None
        if number <= 0:
            raise UsageError(f"--extend {name}: must be positive")
        out[EXTEND_KEYS[name]] = int(number) if name != "seconds" else number
    return out


def resume(wb: Workbench, *, payload: Any = None, error: str | None = None, approve: bool | None = None,
           extend: dict[str, float] | None = None, yield_id: str | None = None, plan: Path | None = None,
           planner: str | None = None, approver: Callable[[dict[str, Any]], bool] | None = None,
           retry: bool = False, skip: bool = False, approved_by: str = "agent",
           on_complete: Callable[[], None] | None = None) -> Pending | Result:
    """Continue the live session. `approved_by` says who answers: "human" only for a person proven at a
    terminal (the caller proves it: api.Bench.resume), "agent" for everything else; under `approvals: human`
    (the default) an agent's approval or denial is refused."""
    session = wb.load(detect_human=False).docs.state.get("session")
    if not session:
        raise Refused("no session to resume (start one with `wb run GOAL --plan FILE`)")
    pending = session.get("pending") or {}
    if yield_id is not None and yield_id != pending.get("yield_id"):
        waits = (f"the session waits on yield {pending['yield_id']} ({pending.get('reason', '')})" if pending
                 else "the session waits on no yield")
        raise Refused(f"yield {yield_id} is not the pending one: {waits}")
    if approve is not None and pending.get("kind") == "approval" and approved_by != "human" and \
            approvals_of(wb.config) == "human":
        from workbench.errors import PersonRequired

        word = "--approve" if approve else "--deny"
        raise PersonRequired(f"{word[2:]} {pending.get('reason', '').split(':')[-1]} (approvals: human)",
                             f"wb resume {word}", "not a person")
    kind = pending.get("kind")
    if kind == "approval" and approve is None and approver is None:
        raise UsageError(f"the session waits for approval of {pending.get('reason', '').split(':')[-1]}: "
                         "`wb resume --approve` or `wb resume --deny`")
    if kind == "tool_result" and payload is None and error is None:
        raise UsageError("the session waits for a tool result: `wb resume --result JSON`, `--result-file F` "
                         "or `--error MSG`")
    if kind == "in_doubt" and payload is None and error is None and not approve:
        raise UsageError(f"{pending.get('reason', 'a tool call')} was started before a crash and never recorded, and "
                         f"{not_declared(pending.get('payload') or {})}: `wb resume --result JSON` (it ran), "
                         "`--error MSG` (it failed) or `--approve` (run it again)")
    failed_step = str(pending.get("reason", "")).startswith("step_failed:")
    if (retry or skip) and not failed_step:
        raise UsageError("--retry and --skip answer a failed step; the session is not paused on one")
    if failed_step and retry == skip:
        why = (pending.get("payload") or {}).get("error", "")
        raise UsageError(f"step {pending['reason'].split(':', 1)[1]} failed ({why}): `wb resume --retry` runs it "
                         "again, `wb resume --skip` goes on without it, `wb abort` ends the session")
    trust.require(wb.root, trust.config_commands(wb.config))  # a session can arrive through git with its config
    chosen = resolve_planner(wb, plan, planner)
    if chosen is None and session["harness_state"] == "PLANNING" or (
            session.get("paused_from") == "PLANNING" and chosen is None):
        raise UsageError("this session is planning: pass the planner again (--plan FILE or --planner CMD)")
    loop = build_loop(wb, chosen, None, approver, on_complete)
    record_changes(loop, wb, pending)  # issue 16
    try:
        return loop.resume(payload, approve=approve, error=error, extend=extend, yield_id=yield_id, retry=retry,
                           skip=skip, by=approved_by)
    except StaleYield as err:
        raise Refused(str(err)) from None


def record_changes(loop: HarnessLoop, wb: Workbench, pending: dict[str, Any]) -> None:
    """What changed since the yield, for the resume event (issue 16): the commits, files and dirty tree."""
    from workbench.errors import GitError
    from workbench.git.changes import since

    sink = loop.sink
    if not isinstance(sink, WorkbenchSink):
        return
    try:
        found = since(wb.root, pending.get("where"))
    except GitError:
        return
    if found is not None:
        found = {k: v for k, v in found.items() if k not in ("then", "now")}
        found["files_changed"] = list(found["files_changed"])[:200]
        sink.changed_since_yield = found


def abort(wb: Workbench, reason: str, on_complete: Callable[[], None] | None = None, by: str = "agent") -> Result:
    session = wb.load(detect_human=False).docs.state.get("session")
    if not session:
        raise Refused("no live session to abort")
    return build_loop(wb, on_complete=on_complete).abort(reason, by=by)
