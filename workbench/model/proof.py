"""Whether a done task was proven done (issue 30): its acceptance passed under `wb task done`, which records the
proof on the task. A forced done, or a done with no proof at all — set by a hand edit, a merge, an import of a
`- [x]` line — is flagged wherever done tasks are shown (status, prime, the handoff, `wb task list`, the diff,
`wb board` and the web page), never indistinguishable from a proven one."""

from __future__ import annotations

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any
FORCED = "forced"  # done with `--force` by a person: the proof records the failures it overrode
NO_PROOF = "no proof"  # done without `wb task done`: a hand edit, a merge, an import


def unproven(task: dict[str, Any]) -> str | None:
    """Why a done task is not proven done (FORCED, NO_PROOF), or None: not done, or proven."""
    if task.get("status") != "done":
        return None
    proof = task.get("proof")
    if task.get("forced_done") or (isinstance(proof, dict) and proof.get("forced")):
        return FORCED
    if not isinstance(proof, dict):
        return NO_PROOF
    return None


def mark(task: dict[str, Any]) -> str:
    """" (forced)", " (no proof)" or "": what follows a done task's status wherever it is shown."""
    why = unproven(task)
    return f" ({why})" if why else ""


def unproven_tasks(tasks: list[dict[str, Any]]) -> list[dict[str, str]]:
    """[{id, why}] of the board's done tasks that are not proven done, in board order."""
    return [{"id": str(t.get("id")), "why": why} for t in tasks for why in [unproven(t)] if why]
