"""A harness session's path through the state machine as a Mermaid state diagram, for a pull request's
description (GitHub draws a ```mermaid block): the transitions the session took, in order — each edge labelled
with the ordinals of the times it was taken, how many, and why — and each yield as a note on the state the
session waited in, with how it was answered and by whom (`agent (script)`, `human (proven at a terminal)`).

Every label passes model/display.escape (a control character, an ANSI escape or a bidi control is written as its
escape, as the terminal shows it), then every character Mermaid could read as syntax — quotes, brackets, `:`,
`;`, `#`, `%`, `<`, `>`, a newline — is written as Mermaid's entity code (`#35;`), so a step's description can
neither end a label nor add a state or an arrow. A plain function of the session's events (`wb log --session S
--json`), for the command line and any other view.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.model.display import escape
from workbench.review.eventview import cut, who_shown

STATES = ("IDLE", "PLANNING", "EXECUTING", "AWAITING_TOOL", "REFLECTING", "DONE")  # harness/machine.State
LABEL = 72  # characters of a reason shown on an edge; the ordinals are never cut
ORDINALS = 8  # ordinals listed on one edge before "…"
_SAFE = re.compile(r"[A-Za-z0-9 _.,/+=*@()'!?-]")


def label(text: object, width: int = LABEL) -> str:
    """`text` as Mermaid label text: controls shown as escapes, cut at `width`, every other character but the
    plainest written as an entity code (`#34;` for a quote), so it cannot be read as syntax."""
    shown = escape(text)
    shown = cut(shown, width)
    return "".join(c if _SAFE.fullmatch(c) else f"#{ord(c)};" for c in shown)


def state_id(name: object) -> str:
    """A state as a Mermaid id: the machine's six by name, anything else (a hand-edited log) made an id."""
    text = str(name)
    return text if text in STATES else "S_" + (re.sub(r"\W", "_", text)[:40] or "unknown")


def newest_session(events: list[dict[str, Any]]) -> str | None:
    """The session of the newest harness event in `events`."""
    for e in reversed(events):
        if e.get("session") and str(e.get("type", "")).split(".")[0] in ("harness", "session", "step", "tool",
                                                                          "approval", "plan"):
            return str(e["session"])
    return None


def transitions(events: list[dict[str, Any]]) -> list[tuple[int, str, str, str]]:
    """(seq, from, to, reason) of each `harness.transition`, in the log's order."""
    out = []
    for e in events:
        if e.get("type") == "harness.transition":
            raw = e.get("payload")
            p: dict[str, Any] = raw if isinstance(raw, dict) else {}
            out.append((int(e.get("seq") or 0), str(p.get("from")), str(p.get("to")), str(p.get("reason") or "")))
    return out


def yields(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each yield (an event whose payload holds `yield`): the state the session waited in, what it waited for,
    and its answer — the `session.resume` naming its id, its action, who gave it — or None while it waits."""
    state = "IDLE"
    out: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for e in events:
        raw = e.get("payload")
        p: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = e.get("type")
        if kind == "harness.transition":
            state = str(p.get("to"))
            continue
        y = p.get("yield")
        if isinstance(y, dict):
            item = {"seq": e.get("seq"), "state": state, "kind": str(y.get("kind") or "?"),
                    "reason": str(y.get("reason") or ""), "answer": None}
            out.append(item)
            by_id[str(y.get("yield_id"))] = item
        elif kind == "session.resume":
            asked = by_id.get(str(p.get("yield_id")))
            if asked is not None and asked["answer"] is None:
                asked["answer"] = {"seq": e.get("seq"), "action": str(p.get("action") or "resume"),
                                  "who": who_shown(e)}
    return out


def _edge_label(taken: list[tuple[int, str]]) -> str:
    ords = [str(n) for n, _reason in taken]
    shown = ", ".join(ords[:ORDINALS]) + (", …" if len(ords) > ORDINALS else "")
    reasons: list[str] = []
    for _n, reason in taken:
        if reason and reason not in reasons:
            reasons.append(reason)
    why = " / ".join(reasons[:2]) + (" / …" if len(reasons) > 2 else "")
    count = f" ({len(taken)} times)" if len(taken) > 1 else ""
    return label(shown, 10_000) + label(count, 100) + (" " + label(why) if why else "")


def session_mermaid(events: list[dict[str, Any]], session: str | None = None) -> str:
    """A ```mermaid block (stateDiagram-v2) of `session`'s path (default: the newest session in `events`)."""
    session = session or newest_session(events)
    mine = [e for e in events if session is not None and e.get("session") == session]
    path = transitions(mine)
    goal = next((e["payload"].get("goal") for e in mine if e.get("type") == "session.start"
                 and isinstance(e.get("payload"), dict)), None)
    waits = yields(mine)
    out = ["```mermaid", "stateDiagram-v2",
           f"    %% wb session {label(session or 'none', 40)}"
           + (f" {label(goal, 60)}" if goal else "")
           + f": {len(path)} transitions, {len(waits)} yields"]
    edges: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for n, (_seq, src, dst, reason) in enumerate(path, start=1):
        edges.setdefault((state_id(src), state_id(dst)), []).append((n, reason))
    if path:
        out.append(f"    [*] --> {state_id(path[0][1])}")
    for (src, dst), taken in edges.items():  # in the order each edge was first taken
        out.append(f"    {src} --> {dst} : {_edge_label(taken)}")
    notes: dict[str, list[str]] = {}
    for i, y in enumerate(waits, start=1):
        lines = notes.setdefault(state_id(y["state"]), [])
        lines.append(f"yield {i} at event {y['seq']}, {label(y['kind'], 30)} {label(y['reason'])}")
        a = y["answer"]
        if a is None:
            lines.append("waiting for an answer")
        else:
            lines.append(f"answered at event {a['seq']}, {label(a['action'], 30)} by {label(a['who'], 60)}")
    for state, lines in notes.items():
        out += [f"    note right of {state}", *(f"        {line}" for line in lines), "    end note"]
    if path and state_id(path[-1][2]) == "DONE":
        out.append("    DONE --> [*]")
    out.append("```")
    return "\n".join(out) + "\n"
