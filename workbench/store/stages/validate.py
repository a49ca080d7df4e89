"""Stage `validate`: every event, state, board and call record checked before anything is written
(store/writecheck.py); and a snapshot a person saved since the load is loaded again — their edit recorded as
`human.edit` — with this write's own events applied after it, until no save comes between."""

from __future__ import annotations

import time

from workbench import faults
from workbench.errors import Busy, Refused
from workbench.model import reducer
from workbench.store import humanedit, writecheck
from workbench.store.atomic import read_or_none

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext

# how long a write keeps loading again because a person saved state.md or board.json since its last load, before
# it gives up (nothing written) and asks to be run again
HAND_SAVE_SECONDS = 10.0


def run(tx: StageContext) -> None:
    if tx.dry:  # `wb doctor`: every check, once, whatever the events
        tx.board_changed = tx.board_changed or bool(tx.events)
        check(tx)
        return
    if not tx.events:
        return
    deadline = time.monotonic() + HAND_SAVE_SECONDS
    while True:
        check(tx)
        faults.point("before_event_append")
        saved = saved_by_hand(tx)
        if saved is None:
            return
        if time.monotonic() > deadline:
            raise Busy(f"{saved} kept being saved by hand for {HAND_SAVE_SECONDS:g}s while this write ran; "
                       "nothing was written: run the command again")
        # a person saved it since the load: nothing is written yet, so load again — their edit is then
        # recorded as human.edit — and apply this write's own events after it
        rebase(tx, saved)


def check(tx: StageContext) -> None:
    writecheck.check(tx, "events.jsonl")
    if tx.actor == "agent":  # after validation: a broken hand edit is reported as such, not as busy
        humanedit.check_guard(tx.wb.paths, tx.wb.config, "state.md")
        if tx.agent_board_changed:  # recording the human's own edit is not an agent write
            humanedit.check_guard(tx.wb.paths, tx.wb.config, "board.json")


def saved_by_hand(tx: StageContext) -> str | None:
    """The snapshot a person saved since the load (its bytes are not the ones the load read), or None. Not
    asked when the work tree is not written (deferred) or is rebuilt whole (`wb doctor --fix`)."""
    loaded = tx.loaded
    if tx.deferred or tx.rebuild:
        return None
    p = tx.wb.paths
    if "state.md" not in loaded.rebuilt and read_or_none(p.state) not in (loaded.state_raw, None):
        return "state.md"
    if "board.json" not in loaded.rebuilt and read_or_none(p.board) not in (tx.board_seen, None):
        return "board.json"
    return None


def rebase(tx: StageContext, saved: str) -> None:
    """Load again and apply this write's own events after what the person saved (and its human.edit)."""
    own = tx.events[tx.begun:]
    if not tx.create:  # the user's own git (a checkout, a stash) may be what changed it: let it finish
        tx.wb.git.wait_for_users_git()
    tx.begin()
    for event in own:
        event["seq"] = tx.tail.seq + len(tx.events) + 1
        tx.events.append(event)
        try:
            changed = reducer.apply(tx.docs, event)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as err:
            raise Refused(f"{saved} was saved by hand while this write ran, and the write no longer applies "
                          f"to it ({event['type']}: {err}); nothing was written: run the command again") from None
        if changed:
            tx.board_changed = True
            if event["actor"] != "human":
                tx.agent_board_changed = True
