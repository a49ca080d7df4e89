"""The reading verbs: status, log, board, a task's history, validate, replay."""

from __future__ import annotations

from collections.abc import Callable

from workbench.api.core import BenchCore
from workbench.errors import UsageError
from workbench.model import ids
from workbench.ops.status import STATUSES, status_of

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.ops.replay import ReplayReport


class ReadingVerbs(BenchCore):
    """The reading verbs: status, log, board, a task's history, validate, replay."""

    # -- reading ------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return status_of(self.wb)

    def log(self, *, type: str | None = None, session: str | None = None,
            limit: int | None = None) -> list[dict[str, Any]]:
        """`wb log`: the events of a type (`task.done`) or family (`task`) and of a session, oldest first; with
        `limit`, only the newest that many (read from the end of the log: as fast at 50,000 events as at 50)."""
        from workbench.ops import eventlist

        if limit:
            return eventlist.newest(self.wb.log, limit, type=type, session=session)[0]
        return eventlist.every(self.wb.log, type=type, session=session)

    def log_newest(self, limit: int, *, type: str | None = None,
                   session: str | None = None) -> tuple[list[dict[str, Any]], int]:
        """(the newest `limit` matching events, oldest first; how many earlier events match): `wb log`'s page."""
        from workbench.ops import eventlist

        return eventlist.newest(self.wb.log, limit, type=type, session=session, paths=self.wb.paths)

    def board(self, *, label: str | None = None, owner: str | None = None,
              status: str | None = None) -> dict[str, Any]:
        """`wb board`: the tasks in columns by status, each card with ready, waits, claim, scope and a forced
        done (ops/board.py), filtered by label, owner (or assignee) and status."""
        from workbench.ops.board import columns

        if status is not None and status not in STATUSES:
            raise UsageError(f"status {status!r}: one of {', '.join(STATUSES)}")
        from workbench.store.leases import first_seen

        board = self.wb.load(detect_human=False, need_body=False).docs.board
        now = ids.utc_now()
        return columns(board["tasks"], board, label=label, owner=owner, status=status, now=now,
                       seen=first_seen(self.wb.git.git_dir, board, now))

    def task_history(self, task_id: str) -> list[dict[str, Any]]:
        """The events that name the task, oldest first (`wb board`'s history key)."""
        from workbench.ops.board import history

        return history(self.wb, task_id)

    def validate(self, progress: Callable[[int, int], None] | None = None, *, full: bool = False) -> list[str]:
        """Every workbench file against its schema, the log's chain, the snapshots against the log. Sealed
        segments checked before on this machine are trusted by digest; `full` checks everything again."""
        from workbench.ops.validate import validate_workbench  # imported when used: no write needs it

        return validate_workbench(self.wb, progress, full=full)

    def replay(self, progress: Callable[[int, int], None] | None = None) -> ReplayReport:
        from workbench.ops.replay import replay  # imported when used: its dataclasses bring inspect, ast, tokenize

        return replay(self.wb, progress)

