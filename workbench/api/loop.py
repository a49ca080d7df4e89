"""The harness's verbs: run, resume (approve, deny), abort."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from workbench.api.core import BenchCore
from workbench.api.rules import extend_items, person_only
from workbench.errors import UsageError, WorkbenchError
from workbench.model import provenance
from workbench.store.transaction import LastWrite

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:  # the harness, review, doctor and migrate load only when their verb is called
    from typing import Any

    from workbench.harness.types import Pending, Result


class LoopVerbs(BenchCore):
    """The harness's verbs: run, resume (approve, deny), abort."""

    # -- the harness: `wb run`, `wb resume`, `wb abort` -----------------------------------------------------
    def run(self, goal: str, *, plan: str | Path | None = None, steps: list[dict[str, Any]] | None = None,
            planner: str | None = None, max_turns: int | None = None, max_tool_calls: int | None = None,
            max_seconds: float | None = None,
            approver: Callable[[dict[str, Any]], bool] | None = None) -> Pending | Result:
        """`wb run GOAL`: start a harness session and drive it until it is done or yields.

        The plan comes from `plan` (a YAML or JSON plan file; a relative path is read from the current
        directory), `steps` (an inline plan: `[{"description", "tool"?, "args"?, "mode"?}]`, checked by the
        same schema as a file), `planner` (a command: the request as JSON on stdin, the plan as JSON on
        stdout), or else `planner:` in config.yaml. The budgets default to config.yaml `budget`. `approver`,
        when given, is asked inline (`approver(request) -> bool`) for a tool call that needs approval;
        without it the session yields instead.

        Returns a `Result` (`.done` is True: `.state`, `.reason`, `.steps`; `wb run` exits 0) or a `Pending`
        (`.kind` is "approval", "tool_result" or "in_doubt" — exit 3 — or "pause" — exit 4; `.yield_id`,
        `.payload`, `.reason`). Raises `Busy` while another session is live."""
        from workbench.harness import bound

        if not goal.strip():
            raise UsageError("a run needs a goal: what the session is for, in one line")
        if plan is not None and steps is not None:
            raise UsageError("give plan (a plan file) or steps (an inline plan), not both")

        def go(path: Path | None) -> Pending | Result:
            return bound.run(self.wb, goal, plan=path, planner=planner, max_turns=max_turns,
                             max_tool_calls=max_tool_calls, max_seconds=max_seconds, approver=approver,
                             on_complete=self._session_ends)

        if steps is None:
            return go(Path(plan) if plan is not None else None)
        # inline steps go through the plan-file path, so they are validated by the same schema and code
        import tempfile  # here: every `wb task add` imports this module (issue 33)

        with tempfile.TemporaryDirectory(prefix="wb-plan-") as tmp:
            inline = Path(tmp) / "inline-plan.json"
            inline.write_text(json.dumps({"steps": steps}), encoding="utf-8")
            return go(inline)

    def resume(self, *, result: Any = None, error: str | None = None, approve: bool = False, deny: bool = False,
               extend: Mapping[str, float] | Sequence[str] | None = None, yield_id: str | None = None,
               plan: str | Path | None = None, planner: str | None = None,
               approver: Callable[[dict[str, Any]], bool] | None = None, retry: bool = False, skip: bool = False,
               approved_by: str = "agent") -> Pending | Result:
        """`wb resume`: continue the live session from where it stopped (a yield, a pause, or a crash).

        Answer what it waits for: `result` (the awaited tool's result, any JSON value) or `error` (why that
        tool failed); `approve=True` or `deny=True` for a tool call waiting for approval (denied, the step
        ends denied and the session goes on). `extend` raises budgets: `{"turns": N, "tool_calls": N,
        "seconds": N}` (or the CLI's `["turns=N"]`). `yield_id` refuses unless it is the pending yield.
        `plan`/`planner` are needed again when the session must replan. `retry`/`skip` answer a failed step's
        pause (`step_failed:<id>`). Approving or denying a confirm_once/mutating call is a person's under
        config.yaml `approvals: human` (the default): asked on /dev/tty, PersonRequired (exit 5) off a terminal
        and always over MCP; `approved_by="human"` is a claim proven the same way. Returns as `run`."""
        from workbench.harness import bound

        if approve and deny:
            raise UsageError("approve or deny, not both")
        if result is not None and error is not None:
            raise UsageError("give a result or an error, not both")
        if approve or deny:
            approved_by = self._approver_of(approve, approved_by)
        grow = bound.parse_extend(extend_items(extend))
        return bound.resume(self.wb, payload=result, error=error,
                            approve=True if approve else (False if deny else None), extend=grow,
                            yield_id=yield_id, plan=Path(plan) if plan is not None else None, planner=planner,
                            approver=approver, retry=retry, skip=skip, approved_by=approved_by,
                            on_complete=self._session_ends)

    def _approver_of(self, approve: bool, claimed: str) -> str:
        """Who answers the pending approval (issue 19): a proven person under `approvals: human` or when one is
        claimed; under `approvals: any`, whoever runs this (an agent unless a person is at the terminal)."""
        from workbench.harness.bound import approvals_of

        session = self.wb.load(detect_human=False).docs.state.get("session") or {}
        pending = session.get("pending") or {}
        if pending.get("kind") == "in_doubt" and approve:
            # running a call in doubt again is approving it again: a person's, for a tool that asks one
            request = pending.get("payload") or {}
            mode = self._mode_of(session, request)
            if mode in ("confirm_once", "mutating") and approvals_of(self.wb.config) == "human":
                return person_only(f"running `{request.get('tool', '?')}` ({mode}) again, in doubt",
                                   "wb resume --approve")
            return claimed
        if pending.get("kind") != "approval":
            return claimed
        if approvals_of(self.wb.config) == "human" or claimed == "human":
            request = pending.get("payload") or {}
            verb, flag = ("approving", "--approve") if approve else ("denying", "--deny")
            return person_only(f"{verb} `{request.get('tool', '?')}` ({request.get('mode', 'mutating')})",
                               f"wb resume {flag}")
        return "human" if provenance.current().proven_person else "agent"

    def _mode_of(self, session: dict[str, Any], request: dict[str, Any]) -> str:
        """The mode a pending call's step runs in: the step's own, else its tool's, else `mutating` (a tool wb
        does not know)."""
        plan = session.get("plan") or []
        step = next((s for s in plan if isinstance(s, dict) and s.get("id") == request.get("step")), {})
        tool = (self.wb.config.get("tools") or {}).get(request.get("tool")) or {}
        return str(step.get("mode") or (tool.get("mode") if isinstance(tool, dict) else None) or "mutating")

    def _session_ends(self) -> None:
        """The end of a `wb run` session (issue 16): the handoff packet is written into the commit that ends
        it (no event of its own: `session.complete` is what it describes). A packet that cannot be written
        does not undo the session: its reason is a warning in `self.last`."""
        from workbench.ops.handoff import write_packet

        try:
            write_packet(self.wb)
        except (WorkbenchError, OSError) as err:
            self.last = LastWrite(warnings=[f"the handoff packet was not written: {err}"])

    def abort(self, reason: str | None = None) -> Result:
        """`wb abort --reason TEXT`: end the live session (paused or waiting); its events stay in the log and
        `reason` is recorded on the abort (default: who aborted, from how this process was started). The
        abort's actor is this process's (model/provenance.py). Returns the `Result` (its `.steps` with their
        final status); `Refused` when no session is live."""
        from workbench.harness import bound

        who = provenance.current()
        if not reason:
            reason = ("aborted by a person at a terminal" if who.actor == "human"
                      else f"aborted by an agent (via {who.via})")
        return bound.abort(self.wb, reason, on_complete=self._session_ends, by=who.actor)

