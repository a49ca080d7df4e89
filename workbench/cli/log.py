"""`wb log`: the event log, filtered by type or session."""

from __future__ import annotations

import json

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def log_command(
    type_: str = typer.Option(None, "--type", metavar="T",
                              help="Only events of this type (task.done) or family (task)."),
    session: str = typer.Option(None, "--session", metavar="S", help="Only events of this harness session."),
    limit: int = typer.Option(None, "--limit", "-n", min=1, help="Only the last N matching events."),
    json_: bool = typer.Option(False, "--json", help="One JSON array of events (see docs/json.md)."),
) -> int:
    """Show the event log: what happened, by whom, in order."""
    from workbench.api import Bench

    events = Bench.open(start_dir()).log(type=type_, session=session, limit=limit)
    if json_:
        output.emit_json(events)
        return 0
    for e in events:
        output.say(f"#{e['seq']:<5} {e['ts']}  {e['actor']:<5}  {e['type']:<16} {summarize(e['payload'])}")
    if not events:
        output.say("no events match")
    return 0


def summarize(payload: dict) -> str:
    """One line of what an event says, from the payload keys people look for first."""
    if "task" in payload and isinstance(payload["task"], dict):
        return f"{payload['task'].get('id')} {payload['task'].get('title', '')}"
    parts = []
    for key in ("id", "step", "from", "to", "status", "tool", "args", "reason", "text", "goal", "changes", "file",
                "forced", "error", "summary", "limit"):
        if key in payload and payload[key] not in (None, "", {}, []):
            value = payload[key]
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(text if key in ("id", "step", "text", "goal") else f"{key}={text}")
    if isinstance(payload.get("yield"), dict):
        parts.append(f"waits: {payload['yield'].get('reason', '')}")
    line = " ".join(parts)
    return line if len(line) <= 110 else line[:109] + "…"
