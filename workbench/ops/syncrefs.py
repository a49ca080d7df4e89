"""What every part of `wb sync` (ops/sync.py) shares: the state ref of config git.ref and its remote, the tracking
ref a fetch fills, whether a sync was killed mid-write, the files a state commit holds, the attempts before a
sync gives up, and the report a sync returns."""

from __future__ import annotations

from dataclasses import dataclass, field

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.workbench import Workbench

SNAPSHOTS = ("events.jsonl", "board.json", "state.md", "calls.jsonl")
ATTEMPTS = 20  # pushes lost in a row before wb sync gives up (exit 6: run it again)


@dataclass
class SyncReport:
    remote: str | None
    ref: str
    local: str | None = None  # the state ref's commit after the sync
    remote_commit: str | None = None  # the remote's, after the sync (== local once pushed)
    taken: int = 0  # events taken up from the remote or another worktree
    pushed: bool = False
    merged: bool = False  # a merge commit was made
    attempts: int = 0
    renumbered: dict[str, str] = field(default_factory=dict)
    joined: bool = False  # a fresh worktree took up the existing state branch
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "ref": self.ref, "local": self.local, "remote_commit": self.remote_commit,
                "taken": self.taken, "pushed": self.pushed, "merged": self.merged, "attempts": self.attempts,
                "renumbered": self.renumbered, "joined": self.joined, "warnings": self.warnings,
                "up_to_date": not (self.taken or self.pushed or self.merged or self.joined)}


def state_ref(wb: Workbench) -> tuple[str, str] | None:
    """(full ref, branch name) of config git.ref, or None when state is recorded on the user's branch."""
    name = wb.config["git"].get("ref")
    if not name:
        return None
    ref = name if name.startswith("refs/") else "refs/heads/" + name
    return ref, ref.removeprefix("refs/heads/")


def default_remote(wb: Workbench, branch: str) -> str | None:
    """The upstream of the state branch (branch.B.remote), else `origin`; None when there is no remote."""
    remotes = wb.git.remotes()
    configured = wb.git.config_value(f"branch.{branch}.remote")
    if configured and configured in remotes:
        return configured
    return "origin" if "origin" in remotes else (remotes[0] if len(remotes) == 1 else None)


def tracking_ref(remote: str, branch: str) -> str:
    return f"refs/remotes/{remote}/{branch}"


def interrupted(wb: Workbench) -> bool:
    """Whether a sync was killed while it wrote a state commit into the work tree (the snapshots may then
    disagree with the log, so nothing loads them: `integrate` merges the work tree's log and the pending journal
    into the ref's tip as they are, renumbering any task written since)."""
    return wb.git.state_writing_marker.exists()
