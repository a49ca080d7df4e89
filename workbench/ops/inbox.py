"""What waits for a person (issue 32), from `wb status`'s own sections: one list, each item with the exact
command that answers it. `wb status` shows it first and `--json` carries it (`inbox`); `wb serve` puts it at
the top of its landing page. Read-only: it derives, never decides.

Kinds, in the order shown: `approval` (a harness yield a person must approve or deny), `yield` (a harness
session waiting for a tool result), `trust` (commands that came through git and wait for `wb trust`),
`unproven` (a task done without proof: forced, or done by a hand edit, a merge or an import), `stale` (a
remembered note or assumption a later commit changed; a next action set by hand that no longer holds).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any
SHOWN = 20  # items of one kind listed; the rest counted in one more item


def items(status: dict[str, Any]) -> list[dict[str, str]]:
    """[{kind, what, command}] from a `wb status` payload (ops/status.status_of)."""
    out: list[dict[str, str]] = []
    pending = status.get("pending")
    if isinstance(pending, dict):
        reason = str(pending.get("reason", ""))
        approval = pending.get("kind") == "approval" or reason.startswith("approval")
        session = status.get("session") if isinstance(status.get("session"), dict) else {}
        goal = str((session or {}).get("goal") or "")
        out.append({"kind": "approval" if approval else "yield",
                    "what": (f"session \u201c{goal}\u201d waits: {reason}" if goal else f"a session waits: {reason}"),
                    "command": str(pending.get("command") or "wb resume")})
    untrusted = status.get("untrusted")
    if isinstance(untrusted, dict) and untrusted.get("count"):
        n = int(untrusted["count"])
        names = ", ".join(str(c) for c in (untrusted.get("commands") or [])[:3])
        more = f" and {n - 3} more" if n > 3 else ""
        out.append({"kind": "trust", "what": f"{n} command{'' if n == 1 else 's'} from git not trusted yet: "
                                             f"{names}{more}",
                    "command": str(untrusted.get("command") or "wb trust")})
    unproven = ((status.get("board") or {}).get("unproven")) or []
    for u in unproven[:SHOWN]:
        out.append({"kind": "unproven", "what": f"{u['id']} is done without proof ({u['why']}): review it",
                    "command": f"wb task show {u['id']}"})
    if len(unproven) > SHOWN:
        out.append({"kind": "unproven", "what": f"and {len(unproven) - SHOWN} more done without proof",
                    "command": "wb task list --status done"})
    memory = status.get("memory")
    if isinstance(memory, dict):
        for item in memory.get("stale") or []:
            about = ", ".join(str(a) for a in (item.get("about") or [])[:3])
            out.append({"kind": "stale", "what": f"{item['id']} {item.get('kind', 'note')} about {about} is stale: "
                                                 "a later commit changed what it is about",
                        "command": str(item.get("command") or f"wb verify {item['id']}")})
        if memory.get("more"):
            out.append({"kind": "stale", "what": f"and {memory['more']} more stale item(s)",
                        "command": "wb status --json"})
    stale = status.get("stale_next_action")
    if isinstance(stale, dict):
        out.append({"kind": "stale", "what": f"the next action set by hand no longer holds ({stale.get('why')})",
                    "command": "wb set next_action=TEXT"})
    return out
