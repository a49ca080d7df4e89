"""The harness state machine as data: six states, the transitions between them, checked at import.

`HarnessLoop._transition` is the only function that changes a loop's state, and it asks `check()` first.
`render_markdown()` writes the table into docs/harness.md (a test keeps the two in step).
"""

from __future__ import annotations

from enum import Enum


class State(str, Enum):  # noqa: UP042 - str so states compare equal to their names
    IDLE = "IDLE"
    PLANNING = "PLANNING"
    EXECUTING = "EXECUTING"
    AWAITING_TOOL = "AWAITING_TOOL"
    REFLECTING = "REFLECTING"
    DONE = "DONE"


INITIAL = State.IDLE
FINAL = State.DONE
ACTIVE = (State.PLANNING, State.EXECUTING, State.AWAITING_TOOL, State.REFLECTING)

# (from, to): when it happens
TRANSITIONS: dict[tuple[State, State], str] = {
    (State.IDLE, State.PLANNING): "run(goal); or resume after a pause during planning",
    (State.PLANNING, State.EXECUTING): "plan committed",
    (State.PLANNING, State.DONE): "empty plan (no_plan)",
    (State.EXECUTING, State.AWAITING_TOOL): "the step needs a tool result or an approval",
    (State.EXECUTING, State.REFLECTING): "a step without a tool is done (or skipped, or aborted by a hook)",
    (State.AWAITING_TOOL, State.REFLECTING): "the tool's result or error is recorded",
    (State.REFLECTING, State.EXECUTING): "next step",
    (State.REFLECTING, State.PLANNING): "replan",
    (State.REFLECTING, State.DONE): "goal met, or the plan is exhausted (goal_met)",
    (State.IDLE, State.EXECUTING): "resume after a pause between steps",
    (State.IDLE, State.AWAITING_TOOL): "resume after a pause while a tool was awaited",
    (State.IDLE, State.REFLECTING): "resume after a pause while reflecting",
    (State.IDLE, State.DONE): "abort of a paused session",
}
for _active in ACTIVE:
    TRANSITIONS[(_active, State.IDLE)] = "pause: budget exceeded, or a hook asked for review"
    TRANSITIONS[(_active, State.DONE)] = TRANSITIONS.get((_active, State.DONE), "abort")

# The seed lesson's table is the nine edges of its diagram plus the pauses; the rest are wb's (resuming a paused
# session, aborting one) and are legal only with a live session and their reason.
SEED_EDGES = frozenset({
    (State.IDLE, State.PLANNING), (State.PLANNING, State.EXECUTING), (State.PLANNING, State.DONE),
    (State.EXECUTING, State.AWAITING_TOOL), (State.EXECUTING, State.REFLECTING),
    (State.AWAITING_TOOL, State.REFLECTING),
    (State.REFLECTING, State.EXECUTING), (State.REFLECTING, State.PLANNING), (State.REFLECTING, State.DONE),
    *((active, State.IDLE) for active in ACTIVE),
})


class IllegalTransition(RuntimeError):
    pass


def check(src: State, dst: State, *, live: bool = True, reason: str | None = "checked") -> None:
    """Raise IllegalTransition unless src → dst is in the table; wb's own edges also need a live session and
    a reason (the loop passes both; `check(src, dst)` asks about the table alone)."""
    if (src, dst) not in TRANSITIONS:
        raise IllegalTransition(f"illegal harness transition {src.value} → {dst.value}")
    if (src, dst) not in SEED_EDGES and (not live or not reason):
        raise IllegalTransition(f"harness transition {src.value} → {dst.value} is wb's: it needs a live session "
                                "and its reason")


def _validate_table() -> None:
    states = set(State)
    outgoing = {s: {d for (f, d) in TRANSITIONS if f == s} for s in states}
    incoming = {s: {f for (f, d) in TRANSITIONS if d == s} for s in states}
    if incoming[INITIAL] - set(ACTIVE):
        raise AssertionError("only a pause may lead back to IDLE")
    if outgoing[FINAL]:
        raise AssertionError("DONE is final: no transitions out of it")
    reachable, frontier = {INITIAL}, [INITIAL]
    while frontier:
        for nxt in outgoing[frontier.pop()]:
            if nxt not in reachable:
                reachable.add(nxt)
                frontier.append(nxt)
    if reachable != states:
        raise AssertionError(f"unreachable states: {states - reachable}")
    for state in states - {FINAL}:
        if not outgoing[state]:
            raise AssertionError(f"{state} is a dead end")


_validate_table()


def render_markdown() -> str:
    lines = ["| from | to | when | table |", "|---|---|---|---|"]
    order = list(State)
    for (src, dst), when in sorted(TRANSITIONS.items(), key=lambda kv: (order.index(kv[0][0]), order.index(kv[0][1]))):
        table = "seed" if (src, dst) in SEED_EDGES else "wb (live session + reason)"
        lines.append(f"| {src.value} | {dst.value} | {when} | {table} |")
    return "\n".join(lines) + "\n"
