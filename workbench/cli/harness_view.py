"""How `wb run` and `wb resume` report where the loop stopped, and their exit codes (0 done, 1 a step failed
with `on_error: fail`, 3 yield, 4 pause)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from workbench.cli import output
from workbench.ops.yields import commands, headline


def outcome_exit(outcome: Any, as_json: bool) -> int:
    if outcome.done:
        if as_json:
            output.emit_json({"done": True, "state": outcome.state.value, "reason": outcome.reason,
                              "steps": outcome.steps})
        else:
            done = sum(1 for s in outcome.steps if s["status"] == "done")
            output.say(f"DONE ({outcome.reason}): {done} of {len(outcome.steps)} steps done")
            for s in outcome.steps:
                why = f" — {s['error']}" if s.get("error") else ""
                output.say(output.shown(f"  {s.get('ordinal', '?')}. [{s['status']}] {s['description']}{why}"))
        return 1 if str(outcome.reason).startswith("step_failed:") else 0
    code = 4 if outcome.kind == "pause" else 3
    if as_json:
        output.emit_json({"done": False, "state": outcome.state.value, "reason": outcome.reason,
                          "kind": outcome.kind, "yield_id": outcome.yield_id, "payload": outcome.payload,
                          "commands": commands(outcome)})
        return code
    output.say(output.shown(headline(outcome)))
    for line in commands(outcome):
        output.say(f"  {output.shown(line)}")
    return code


def tty_approver() -> Any:
    """Ask inline on a terminal; without one (or in CI) the loop yields instead."""
    if not sys.stdin.isatty() or os.environ.get("CI"):
        return None

    def ask(request: dict[str, Any]) -> bool:
        # every value shown, never obeyed: the person approves what they see
        sys.stderr.write(output.shown(f"wb: step {request['step']} wants to run `{request['tool']}` "
                                      f"({request['mode']}) with {json.dumps(request['args'])}.") + " Allow? [y/N] ")
        sys.stderr.flush()
        return sys.stdin.readline().strip().lower() in ("y", "yes")

    # a person at the terminal answers: the loop records their approvals as `human`
    ask.by = "human"  # type: ignore[attr-defined]
    return ask


def approval_source() -> str:
    """Who answers `wb resume --approve`: a person when it is typed at a terminal, else an agent."""
    return "human" if sys.stdin.isatty() and not os.environ.get("CI") else "agent"
