"""What `wb status` shows, without typer: the fast path of `wb status [--json]` runs this directly."""

from __future__ import annotations

from pathlib import Path

from workbench.cli import output

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def run(chdir: Path | None, as_json: bool) -> int:
    from workbench.ops.status import status_of
    from workbench.store import opening

    data = status_of(opening.discover(chdir))
    if as_json:  # one compact line: an agent reads it at the start of every session, whitespace and all
        import json
        import sys

        sys.stdout.write(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str) + "\n")
    else:
        render(data)
    return 0


# On a terminal with colour, what needs a human stands out: a status to act on, blockers, the pending yield.
STATUS_STYLE = {"running": "green", "completed": "green", "paused": "yellow", "awaiting_tool": "yellow",
                "failed": "red"}


def render(data: dict[str, Any]) -> None:
    active = data["active_task"]
    counts = data["board"]["by_status"]
    styles = {"status": STATUS_STYLE.get(str(data["status"]), ""), "blockers": "red" if data["blockers"] else "",
              "waiting for": "yellow", "hand edit": "yellow", "ready": "green", "trust": "yellow"}
    lines = [
        # issue 22: "idle" is the harness's word; with a task in progress the workbench is not idle
        ("status", f"working on {active['id']} (no harness session)"
         if data["status"] == "idle" and active and active.get("status") == "in_progress" else data["status"]),
        ("active task", f"{active['id']} {active['title']} ({active['status']})" if active else "none"),
    ]
    ready = data.get("ready") or {}
    # where to start: the first ready tasks, and the command (a blocked active task hides nothing)
    if (not active or active.get("status") != "in_progress") and ready.get("tasks"):
        more = ready["total"] - len(ready["tasks"])
        names = " · ".join(f"{t['id']} {t['title']}" for t in ready["tasks"]) + (f" (+{more} more)" if more else "")
        lines.append(("ready", f"{names} — start: {ready['command']}"))
    lines += [
        ("next action", data["next_action"] or "(not set: wb set next_action=...)"),
        ("blockers", "; ".join(data["blockers"]) if data["blockers"] else "none"),
    ]
    stale = data.get("stale_next_action")
    if stale:  # issue 22: what was set by hand, and why it no longer holds
        when = f" (set {stale['set_at']}, event {stale['event']})" if stale.get("set_at") else ""
        lines.append(("stale", f"next action set by hand \u201c{stale['text']}\u201d{when} dropped: {stale['why']}"))
    memory = data.get("memory")  # issue 22: what was remembered about paths a later commit changed
    if memory and memory["stale"]:
        from workbench.ops.memory import line

        lines += [("stale", line(item)) for item in memory["stale"]]
        if memory["more"]:
            lines.append(("stale", f"and {memory['more']} more stale item(s): wb status --json lists them"))
        styles["stale"] = "yellow"
    packet = data.get("handoff")  # issue 16: the latest handoff packet leads, with its next action
    if packet:
        nxt = packet["next_action"]
        lines.insert(0, ("handoff", f"{nxt['text']}" + (f": {nxt['command']}" if nxt["command"] else "")
                         + f" ({packet['path']}, {packet['risks']} open risk{'' if packet['risks'] == 1 else 's'})"))
    session = data["session"]
    if session:
        state = session.get("harness_state", "")
        if state == "IDLE":  # a live session at rest in IDLE is paused (model/session.STATUS_OF_STATE), as status says
            state = "PAUSED"
        lines.append(("session", f"{session['id']} {state} — {session.get('goal', '')}"))
        budget = session.get("budget") or {}
        limits, used = budget.get("limits") or {}, budget.get("used") or {}
        gauges = []
        for label, key, lim in (("turns", "turns", "max_turns"), ("tool calls", "tool_calls", "max_tool_calls"),
                                ("seconds", "seconds", "max_wall_seconds")):
            if key in used:
                value = round(used[key]) if key == "seconds" else used[key]
                cap = limits.get(lim)
                gauges.append(f"{label} {value}/{cap:g}" if isinstance(cap, int | float) else f"{label} {value}")
        if gauges:
            lines.append(("budget", " · ".join(gauges)))
    pending = data["pending"]
    hint = data.get("resume")
    if hint and not pending:  # a live session that records no yield: it runs, or a kill cut it short
        lines.append(("session", f"{hint['reason']}: {hint['command']}"))
    if pending:
        lines.append(("waiting for", f"{pending.get('reason', '')}: {pending.get('command', 'wb resume')}"))
        why = (pending.get("payload") or {}).get("error")
        if why:  # a failed step: say why it failed, not only that it did
            lines.append(("failed", str(why)))
    total = data["board"]["total"]
    lines.append(("board", f"{counts['todo']} todo · {counts['in_progress']} in progress · {counts['blocked']} "
                           f"blocked · {counts['done']} done ({total} task{'' if total == 1 else 's'})"
                           + (f" · {data['board']['archived']} archived" if data["board"].get("archived") else "")))
    unproven = data["board"].get("unproven") or []
    if unproven:  # issue 30: a done whose acceptance never passed is never shown as a proven one
        lines.append(("not proven", ", ".join(f"{u['id']} done ({u['why']})" for u in unproven[:5])
                      + (f" and {len(unproven) - 5} more" if len(unproven) > 5 else "")))
    last = data["last_event"]
    if last:
        lines.append(("last event", f"#{last['seq']} {last['type']} by {last['actor']} at {last['ts']}"))
    for file in data["unrecorded_human_edits"]:
        lines.append(("hand edit", f"{file} was edited by hand; the next wb write records it"))
    waiting = data.get("not_yet_written")
    if waiting:
        lines.append(("not committed", waiting["text"]))
    lines += sync_lines(data.get("sync"))
    untrusted = data.get("untrusted")  # issue 19: commands from git that wait for a person's review
    if untrusted:
        n = untrusted["count"]
        lines.append(("trust", f"{n} command{'' if n == 1 else 's'} not trusted on this clone (came through git, "
                               f"or by a hand edit): {untrusted['command']}"))
    if data.get("approvals") == "any":  # issue 19: the opt-in is said; the default (a person's) goes unsaid
        lines.append(("approvals", "any — an agent may approve confirm_once and mutating tool calls "
                                   "(config.yaml; the default, human, asks a person at a terminal)"))
        styles["approvals"] = "yellow"
    inbox = data.get("inbox") or []  # issue 32: what waits for a person leads, each with its command
    lines[:0] = [("inbox", f"{item['what']}: {item['command']}") for item in inbox]
    styles["inbox"] = "yellow"
    width = max(len(k) for k, _ in lines)
    if output.color_enabled():
        from rich.console import Console
        from rich.markup import escape

        console = Console(highlight=False)
        for key, value in lines:
            style = styles.get(key)
            shown = escape(output.shown(value))  # control characters visible, then no rich markup in it
            text = f"[{style}]{shown}[/{style}]" if style else shown
            # soft_wrap: a long line is folded by the terminal, not split by rich, so commands copy whole
            console.print(f"[bold]{key.ljust(width)}[/bold]  {text}", soft_wrap=True)
        return
    for key, value in lines:
        output.say(f"{key.ljust(width)}  {output.shown(value)}")


def sync_lines(sync: dict[str, Any] | None) -> list[tuple[str, str]]:
    """issue 15: the state ref against the last fetched remote state, and who holds which claims."""
    if not sync:
        return []
    if sync["remote"] is None:
        where = f"{sync['ref']} (no remote state fetched yet: wb sync)"
    elif sync["ahead"] is None:
        where = f"{sync['ref']} · {sync['remote']}"
    else:
        where = (f"{sync['ref']}: {sync['ahead']} ahead, {sync['behind']} behind {sync['remote']} (as last fetched)"
                 + (" · run wb sync" if sync["ahead"] or sync["behind"] else ""))
    out = [("sync", where)]
    if sync.get("interrupted"):
        out.append(("sync", "a wb sync was interrupted: run wb sync to finish it"))
    out += [("claim", f"{c['id']} by {c['agent']} until {c['until']}") for c in sync["claims"]]
    return out
