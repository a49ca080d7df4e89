"""The tool kind of the harness loop (HarnessLoop's third layer, on harness/planstep.py): a step's tool call —
its approval (a yield, or an approver), the call itself or a pull the caller answers, a shared tool's journal
(a call made elsewhere is not made twice), its outcome or error under the step's failure policy, and what comes
after it."""

from __future__ import annotations

from typing import Any

from workbench import faults
from workbench.harness.loopcore import actor_of
from workbench.harness.machine import State
from workbench.harness.planstep import PlanSteps
from workbench.harness.tools import failure
from workbench.harness.types import (
    Pending,
    Result,
    Step,
    ToolError,
)
from workbench.model import ids


class ToolSteps(PlanSteps):
    """A step's tool call (HarnessLoop's third layer)."""

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
                who = actor_of(by)
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


def _summary(result: Any) -> str:
    if isinstance(result, dict) and "exit_code" in result:
        return f"exit {result['exit_code']}"
    import json

    text = json.dumps(result, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"
