"""How `wb run` and `wb resume` report where the loop stopped, and their exit codes (0 done, 1 a step failed
with `on_error: fail` or the session ended `incomplete` — a step denied or skipped —, 3 yield, 4 pause)."""

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
        # 1: the session ended without doing its work — a step failed, or one was denied or skipped
        return 1 if str(outcome.reason).startswith("step_failed:") or outcome.reason == "incomplete" else 0
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
    """Ask inline, on /dev/tty, when a person can be proven there (ops/person.why_not_person): the answer is
    confirmed by the code ops/person.require_person shows, so a `y` is recorded as a proven person's. Off a
    terminal, in an agent's environment or in CI, None: the loop yields instead."""
    from workbench.ops.person import why_not_person

    if why_not_person() is not None:
        return None

    def ask(request: dict[str, Any]) -> bool | None:
        from workbench.errors import PersonRequired
        from workbench.ops.person import read_line, require_person

        try:
            tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        except OSError:
            return None
        try:
            # every value shown, never obeyed: the person approves what they see
            os.write(tty, (output.shown(f"wb: step {request['step']} wants to run `{request['tool']}` "
                                        f"({request['mode']}) with {json.dumps(request['args'])}.")
                           + " Allow? [y/N] ").encode())
            yes = read_line(tty).strip().lower() in ("y", "yes")
        finally:
            os.close(tty)
        flag = "--approve" if yes else "--deny"
        try:
            require_person(f"{'approving' if yes else 'denying'} `{request['tool']}` ({request['mode']})",
                           f"wb resume {flag}")
        except PersonRequired as err:  # not confirmed: the yield stands, and says so
            sys.stderr.write(output.shown(str(err)) + "\n")
            return None
        return yes

    # a person proven at the terminal answers: the loop records their answers as `human`
    ask.by = "human"  # type: ignore[attr-defined]
    return ask

