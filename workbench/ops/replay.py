"""`wb replay`: fold the whole event log from empty and compare the result with the snapshots."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.model import reducer
from workbench.progress import tick
from workbench.store.workbench import Workbench

if TYPE_CHECKING:
    from workbench.store.logcheck import SealedCheck


@dataclass
class ReplayReport:
    events: int
    seconds: float
    mismatches: list[str]
    docs: reducer.Docs | None = None
    # hand edits of the snapshots no event records yet (the next wb write records them as human.edit): the
    # snapshots are a person's, not a disagreement of the log's (issue 19)
    unrecorded: list[str] = field(default_factory=list)


def replay(wb: Workbench, progress: Callable[[int, int], None] | None = None) -> ReplayReport:
    """Fold the whole event log from empty and compare with the snapshots (as loaded). `progress(done, total)`
    is called every 5,000 events (total = the last seq)."""
    start = time.perf_counter()
    n = 0
    total = wb.log.tail().seq if progress else 0

    def counted() -> Iterator[dict[str, Any]]:
        nonlocal n
        for _line, event in wb.log.iter_all():
            tick(progress, n, total)
            yield event
            n += 1

    docs = reducer.fold(counted())
    return compare(wb, docs, n, time.perf_counter() - start)


def replay_sealed_once(wb: Workbench, check: SealedCheck) -> ReplayReport:
    """As replay, but the sealed segments' fold comes from the record of the last time they were folded on this
    machine (workbench/store/logcheck.py; `check` has run): only the segments sealed since, and events.jsonl,
    are folded. The first time, the whole log is folded and the fold at the end of the sealed segments kept."""
    start = time.perf_counter()
    chain = check.res.chain
    docs, k = check.folded()
    n = chain[k - 1].last if k else 0
    for header in chain[k:]:
        sealed = wb.log.sealed_events(header)
        docs = reducer.fold_more(docs, (event for _line, event in sealed))
        n += len(sealed)
    if chain[k:] and docs is not None:
        check.keep_folded(docs)
    unsealed = [event for _line, event in wb.log.iter_unsealed(check.res)]
    docs = reducer.fold_more(docs, unsealed)
    n += len(unsealed)
    return compare(wb, docs, n, time.perf_counter() - start)


def compare(wb: Workbench, docs: reducer.Docs | None, n: int, elapsed: float) -> ReplayReport:
    """The report of a replay that rebuilt `docs` from `n` events: where the snapshots differ from them."""
    from workbench.store import humanedit

    mismatches: list[str] = []
    if docs is not None and docs.state.get("last_event") == n:  # the whole log, from seq 1: the load's check
        humanedit.made_fold(wb, docs)  # for hand edits in a fresh clone need not fold it again
    current = wb.load(detect_human=True, thorough=True)
    if docs is None:
        return ReplayReport(0, elapsed, ["events.jsonl: empty log; nothing to replay"])
    if current.pending:  # acknowledged events a kill left in the pending journal alone: the load folds them
        # into the snapshots, and the next write appends them to the log; the log they belong to ends with them
        docs = reducer.fold_more(docs, [e for e in current.pending if e["seq"] > docs.state["last_event"]])
        assert docs is not None
    unrecorded = [f"{edit['file']}: an edit by hand not yet recorded (any wb write records it as human.edit)"
                  for edit in current.human_edits]
    edited = {edit["file"] for edit in current.human_edits}
    if "state.md" not in edited:
        mismatches += _compare("state.md", docs.state, current.docs.state)
        if docs.body != current.docs.body:
            mismatches.append("state.md: the decision log differs from the one the events rebuild")
    if "board.json" not in edited:
        mismatches += _compare("board.json", docs.board, current.docs.board)
    mismatches += _compare_segments(wb, docs)
    return ReplayReport(n, elapsed, mismatches, docs, unrecorded)


def _compare_segments(wb: Workbench, docs: reducer.Docs) -> list[str]:
    """The board's archive segments the log rebuilds against the files on disk, byte for byte (issue 20)."""
    from workbench.model.archive import refs
    from workbench.store.atomic import read_or_none

    out = []
    for ref in refs(docs.board):
        rel = str(ref["file"])
        rebuilt = docs.sealed.get(rel)
        if rebuilt is not None and read_or_none(wb.paths.wb / rel) != rebuilt:
            out.append(f"{rel}: differs from (or is missing beside) the segment the events rebuild")
    return out


def compare_docs(rebuilt: reducer.Docs, snapshot: reducer.Docs) -> list[str]:
    """Where the snapshots `snapshot` differ from the documents the log rebuilt (`wb doctor` on SQLite)."""
    out = _compare("state.md", rebuilt.state, snapshot.state)
    if rebuilt.body != snapshot.body:
        out.append("state.md: the decision log differs from the one the events rebuild")
    return out + _compare("board.json", rebuilt.board, snapshot.board)


def _compare(file: str, rebuilt: Any, snapshot: Any, path: str = "") -> list[str]:
    if isinstance(rebuilt, dict) and isinstance(snapshot, dict):
        out = []
        for key in sorted(set(rebuilt) | set(snapshot)):
            sub = f"{path}.{key}" if path else key
            if key not in snapshot:
                out.append(f"{file}: {sub}: missing from the snapshot")
            elif key not in rebuilt:
                out.append(f"{file}: {sub}: in the snapshot but not in the replayed log")
            else:
                out += _compare(file, rebuilt[key], snapshot[key], sub)
        return out
    if rebuilt != snapshot:
        return [f"{file}: {path}: snapshot has {json.dumps(snapshot)[:80]}, the log gives {json.dumps(rebuilt)[:80]}"]
    return []
