"""`wb set KEY=VALUE…`: set state fields such as next_action."""

from __future__ import annotations

import json
from typing import Any

import typer

from workbench.cli import output
from workbench.cli.app import start_dir
from workbench.errors import UsageError

LIST_KEYS = ("touched_files", "assumptions", "blockers")


def parse_assignments(pairs: list[str], list_keys: tuple[str, ...]) -> dict[str, Any]:
    """KEY=VALUE pairs. List fields take a JSON array or one item; `null` and empty clear nullable fields."""
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"expected KEY=VALUE, got {pair!r}")
        if key in list_keys:
            if value == "null":
                changes[key] = None  # the schema refuses it: a list field is never null
            elif value.startswith("["):
                try:
                    changes[key] = json.loads(value)
                except (ValueError, RecursionError):
                    raise UsageError(f"{key}: not a JSON array: {value}") from None
            else:
                changes[key] = [value] if value else []
        elif value == "null":
            changes[key] = None
        else:
            changes[key] = value
    return changes


def set_command(
    assignments: list[str] = typer.Argument(..., metavar="KEY=VALUE...",
                                            help="Fields to set, e.g. next_action='Write the parser'."),
    actor: str = typer.Option(None, "--actor", help="Who sets it: agent or human (default: human on a "
                                                    "terminal, agent otherwise)."),
    json_: bool = typer.Option(False, "--json", help="Print the new state as JSON."),
) -> int:
    """Set state fields: next_action, status, active_task_id, touched_files, assumptions, blockers.

    List fields take a JSON array (assumptions='["a","b"]') or one item; active_task_id=null clears it.
    """
    from workbench.api import Bench
    from workbench.cli.note import actor_of

    changes = parse_assignments(assignments, LIST_KEYS)
    if changes.get("active_task_id") == "":
        changes["active_task_id"] = None
    bench = Bench.open(start_dir())
    state = bench.set_state(changes, actor=actor_of(actor))
    if json_:
        output.emit_json(state)
    elif bench.last.seqs:
        output.say(f"set {', '.join(sorted(changes))} (event {bench.last.seqs[-1]})")
    else:
        output.say("nothing changed")
    output.report_write(bench)
    return 0
