"""What a load read (`Workbench.load`): the documents, the log's tail, state.md as read, the hand edits and the
pending events found. Its own module, below the write path: the stages read it through their context
(store/stagecontext.py) without naming the Workbench that made it. `workbench.store.workbench.Loaded` is this."""

from __future__ import annotations

from workbench.model.docs import Docs
from workbench.store.eventlog import Tail

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class Loaded:
    """What a load read. A plain class: a dataclass would import inspect, a NamedTuple compile its
    annotations, and `wb status` makes one."""

    __slots__ = ("docs", "tail", "state_node", "state_raw", "file_state", "human_edits", "replayed", "rebuilt",
                 "pending", "refused", "renumbered")

    def __init__(self, docs: Docs, tail: Tail, state_node: Any, state_raw: bytes, file_state: dict[str, Any],
                 human_edits: list[dict[str, Any]] | None = None, replayed: int = 0,
                 rebuilt: tuple[str, ...] = (), pending: list[dict[str, Any]] | None = None,
                 refused: list[dict[str, Any]] | None = None, renumbered: bool = False) -> None:
        self.docs = docs
        self.tail = tail
        self.state_node = state_node  # round-trip node of state.md, None when not parsed
        self.state_raw = state_raw  # state.md as read
        self.file_state = file_state  # its frontmatter as read, before the events after it were folded in
        self.human_edits = human_edits if human_edits is not None else []
        self.replayed = replayed  # events after the snapshot folded in on load (crash recovery)
        self.rebuilt = rebuilt  # snapshots that were missing, read as the log rebuilds them (`wb init`)
        # acknowledged events the work tree's log lacks (workbench.store.pending), chained after `tail` and
        # folded into `docs`: deferred while git is mid-operation, or taken from the work tree by the user's git
        self.pending = pending if pending is not None else []
        # pending events that no longer apply to this branch (store/landing.py): left out of `pending`, named
        # by the write that lands the rest, which keeps them aside (store/pending.py `set_aside`)
        self.refused = refused if refused is not None else []
        # board.json's tasks are the log's but its last_event was another branch's numbering (git took the file
        # whole in a merge or rebase): docs.board has the log's, and the next write writes board.json
        self.renumbered = renumbered

    @property
    def virtual_tail(self) -> Tail:
        """The log's tail with the pending events after it: where the next event chains."""
        if not self.pending:
            return self.tail
        from workbench.model.jsonl import encode, line_hash

        last = self.pending[-1]
        return Tail(last["seq"], line_hash(encode(last)), self.tail.good_size, self.tail.torn)
