"""Stage `set aside`: pending events that no longer apply to this branch (store/landing.py) go out of the
journal, into `refused.jsonl` beside it, and are named in this write's warnings — the rest of the journal
lands."""

from __future__ import annotations

from workbench.store.landing import describe

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    refused = tx.loaded.refused
    if not refused or tx.deferred or tx.dry:
        return
    void = [e for e in refused if e.get("void")]
    left = [e for e in refused if not e.get("void")]
    lines = []
    if left:
        where = tx.wb.pending.set_aside(left)
        lines.append(f"{len(left)} acknowledged event(s) that waited in the git directory no longer apply to "
                     f"this branch and were not written: {', '.join(describe(e) for e in left)} (kept in {where})")
    if void:
        lines.append(f"{len(void)} acknowledged event(s) that waited in the git directory name a task this "
                     f"branch archived: recorded, void, as a rebase keeps them: {', '.join(describe(e) for e in void)}")
    tx.aside = "; ".join(lines)
