"""Sharing one board: sync and claims."""

from __future__ import annotations

from workbench.api.core import BenchCore
from workbench.api.rules import lease_seconds
from workbench.model import ids

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class SharingVerbs(BenchCore):
    """Sharing one board: sync and claims."""

    # -- sync and claims (issue 15: docs/sync.md) ---------------------------------------------------------
    def sync(self, remote: str | None = None, *, push_branch: bool = False) -> dict[str, Any]:
        """`wb sync [REMOTE]`: fetch, merge the remote's state by wb's rules, commit, push (ops/sync.py).
        Returns the report as data (`up_to_date`, `pushed`, `taken`, `renumbered`…)."""
        from workbench.ops import sync as syncop

        return syncop.sync(self.wb, remote, push_branch=push_branch).as_dict()

    def claim(self, task_id: str, *, agent: str | None = None, lease: str | int | None = None,
              remote: str | None = None) -> dict[str, Any]:
        """`wb task claim ID`: win the task for `agent` across clones (ops/claims.py); Busy (exit 6) when
        another agent holds it. `lease`: seconds, or a duration such as "30m" (default 1 h)."""
        from workbench.ops import claims

        return claims.claim(self.wb, task_id, agent=agent, lease_s=lease_seconds(lease), remote=remote)

    def claim_next(self, *, agent: str | None = None, lease: str | int | None = None,
                   remote: str | None = None) -> dict[str, Any] | None:
        """`wb task next --claim`: claim the first ready task no other agent holds; None when none is ready."""
        from workbench.ops import claims

        return claims.claim_next(self.wb, agent=agent, lease_s=lease_seconds(lease), remote=remote)

    def claims(self) -> list[dict[str, Any]]:
        """The claims held now: [{id, agent, until, since, took_over_from?}]."""
        from workbench.ops import claims

        board = self.wb.load(detect_human=False, need_body=False).docs.board
        now = ids.utc_now()
        return claims.claims_held(board, now, claims.seen_leases(self.wb, board, now))

