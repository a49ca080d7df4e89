"""What a write checks before its first byte, on both backends (stage `validate` of store/pipeline.py, and
SQLite's): the events chain from the log's tail and each matches its schema, state.md and board.json are valid
and state.md reads back, every call record matches its schema."""

from __future__ import annotations

from workbench.errors import Refused, SchemaRefused
from workbench.model import schemas
from workbench.model.boardfile import check_board
from workbench.store.eventlog import chain

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def check(tx: StageContext, log_name: str) -> None:
    """Raises what the write would refuse; `log_name` names the log in the message ("events.jsonl", "events")."""
    from workbench.model.statefile import too_deep  # statefile is kept off the read-only path of `wb status`

    try:
        chain(tx.events, tx.tail)
    except UnicodeEncodeError:
        raise Refused("refused: the change holds text that is not valid Unicode (a lone surrogate, such as "
                      "bytes that are not UTF-8 in a command-line argument)") from None
    for event in tx.events:
        schemas.check("event", event, f"{log_name} (seq {event['seq']})")
    schemas.check("state", tx.docs.state, "state.md")
    if too_deep(tx.docs.state.get("session"), 56):  # state.md must read back (yamlio.MAX_DEPTH)
        raise SchemaRefused("state.md", "session", "nested more than 56 levels deep (a step's args?)")
    if tx.board_changed:
        check_board(tx.docs)
    for record in tx.calls:
        schemas.check("call", record, "calls.jsonl")
