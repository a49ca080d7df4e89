"""Checks of the sealed log that scale: each sealed segment is checked once in full (digest, seq, chain, every
event's schema), then trusted by the digest of its bytes; and the documents the sealed log folds to are kept,
so `wb validate` and `wb doctor` replay only events.jsonl.

The record is per machine, in the git directory (`<git dir>/wb/cache/segments.json`, beside the caches of
workbench/store/caches.py), never in `.workbench/`: a clone, a merge or an agent's edit cannot vouch for a
segment. A segment whose bytes changed is not the one that was checked: it is checked again, and reported
when its bytes no longer match its header. `--full` ignores the record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator

from workbench.errors import Refused
from workbench.model import reducer
from workbench.model.layout import Paths
from workbench.model.segments import Header, Resolved, check_body, header_of
from workbench.store.atomic import atomic_write
from workbench.store.caches import read_json
from workbench.store.eventlog import EventLog

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

_NAME = "segments.json"


def _record(p: Paths) -> dict[str, Any]:
    data = read_json(p.cache / _NAME) or {}
    checked = data.get("checked")
    return {"checked": checked if isinstance(checked, dict) else {}, "fold": data.get("fold")}


def _save(p: Paths, record: dict[str, Any]) -> None:
    if not p.git_dir.is_dir():
        return
    try:
        p.cache.mkdir(parents=True, exist_ok=True)
        atomic_write(p.cache / _NAME, json.dumps(record, separators=(",", ":")).encode(), durable=False)
    except OSError:
        pass  # a cache: the next check does the work again


class SealedCheck:
    """The sealed segments of `log`, checked (`full`: all of them; otherwise those not checked before)."""

    def __init__(self, log: EventLog, p: Paths, *, full: bool = False) -> None:
        self.log, self.p, self.full = log, p, full
        self.record = _record(p)
        self.problems: list[str] = []
        self.digests: list[str] = []  # of each chain segment's bytes, header included
        self.res: Resolved = Resolved([], [], 0)
        self.checked = 0  # segments read and checked in full by this run
        self.trusted = 0  # segments taken by digest

    def run(self, on_segment: Callable[[Header], None] | None = None) -> bool:
        """Check every sealed segment of the chain: those not checked before (all of them with `full`) in
        full — digest, seq, hash chain and every event's schema. False when the sealed log is damaged or an
        event is invalid (`problems` says where); what passed is recorded, the rest is checked again next time."""
        import gc

        res = self.log.resolution()
        self.res = res
        if res.problem:
            self.problems.append(res.problem)
            return False
        collecting = gc.isenabled()
        gc.disable()  # the events read are trees of plain values, no cycle: a collection would only walk them all
        try:
            return self._run(res, on_segment)
        finally:
            if collecting:
                gc.enable()

    def _run(self, res: Resolved, on_segment: Callable[[Header], None] | None) -> bool:
        from workbench.model import schemas

        known: dict[str, str] = self.record["checked"]
        fresh: dict[str, str] = {}
        # the fold of the segments read in full by this run, from the first on: a first validate or doctor (a
        # fresh clone, a lost cache) reads the sealed log once, to check it and to fold it (issue 33); given up
        # at the first segment taken by digest (the recorded fold serves then) or that does not fold
        docs: reducer.Docs | None = None
        folding = not self.full
        for h in res.chain:
            raw = (self.log.log_dir / h.name).read_bytes()
            digest = hashlib.sha256(raw).hexdigest()
            self.digests.append(digest)
            if not self.full and known.get(h.name) == digest:
                fresh[h.name] = digest
                self.trusted += 1
                folding = False
                if on_segment:
                    on_segment(h)
                continue
            try:
                events = check_body(raw, header_of(raw, h.name))
            except Refused as err:
                self.problems.append(str(err))
                continue
            before = len(self.problems)
            for _line, event in events:
                if not schemas.is_valid("event", event):
                    self.problems.extend(str(e) for e in schemas.iter_errors(
                        "event", event, f"log/{h.name} (seq {event['seq']})"))
            if len(self.problems) == before:
                fresh[h.name] = digest
            if folding:
                try:
                    # a segment of valid events folds as its fold-relevant ones (the fold is recorded only then)
                    docs = reducer.fold_more(docs, (_fold_relevant(events, docs is None)
                                                    if len(self.problems) == before
                                                    else (event for _line, event in events)))
                except Refused:
                    folding = False  # the replay after says where, as it reads the segment again
            self.checked += 1
            if on_segment:
                on_segment(h)
        folded = folding and docs is not None and not self.problems
        if folded:
            assert docs is not None
            self.record["fold"] = {"digests": self.digests, "through": res.chain[-1].last,
                                   "state": docs.state, "body": docs.body, "board": docs.board}
        if fresh != known or folded:
            self.record["checked"] = fresh
            _save(self.p, self.record)
        return not self.problems

    def orphans_missing(self) -> list[str]:
        """Segments a merge left over that hold events the log lacks (by id): these need `wb doctor --fix`."""
        if not self.res.orphans:
            return []
        from workbench.model.jsonl import records, split_lines

        have = {e["id"] for _line, e in self.log.iter_all()}
        out = []
        for h in self.res.orphans:
            events = records(split_lines((self.log.log_dir / h.name).read_bytes()[h.size:])[0])[0]
            lacking = [e for e in events if e.get("id") not in have]
            if lacking:
                out.append(f"log/{h.name}: a segment left by a merge holds {len(lacking)} event(s) the log lacks; "
                           "`wb doctor --fix` appends them")
        return out

    # -- the fold of the sealed log ----------------------------------------------------------------
    def folded(self) -> tuple[reducer.Docs | None, int]:
        """(the documents the first k sealed segments fold to, k), as recorded when they were last folded on
        this machine: the longest recorded prefix of the chain whose digests still match (a seal since then
        adds a segment; only that one is folded again). (None, 0) when nothing recorded applies."""
        fold = self.record.get("fold")
        if self.full or not self.digests or not isinstance(fold, dict):
            return None, 0
        digests = fold.get("digests")
        k = len(digests) if isinstance(digests, list) else 0
        if not k or k > len(self.digests) or self.digests[:k] != digests:
            return None, 0
        try:
            return reducer.Docs(fold["state"], fold["body"], fold["board"]), k
        except (KeyError, TypeError):
            return None, 0

    def keep_folded(self, docs: reducer.Docs) -> None:
        """Record the documents the whole sealed chain folds to (called once it is folded, before events.jsonl:
        the record is written at once, so the caller may go on folding into `docs`)."""
        if not self.digests:
            return
        self.record["fold"] = {"digests": self.digests, "through": self.res.chain[-1].last,
                               "state": docs.state, "body": docs.body, "board": docs.board}
        _save(self.p, self.record)


def _fold_relevant(events: list[tuple[bytes, dict[str, Any]]], first: bool) -> Iterator[dict[str, Any]]:
    """Valid events as a fold needs them: of a run of events no reducer reads (reducer.stamp_only: an agent's
    tool calls) only the last — folding one sets state.md's updated_at and last_event, which the last sets
    again — and, when `first`, the log's first event (it stamps the empty documents)."""
    kinds: dict[str, bool] = {}
    for i, (_line, event) in enumerate(events):
        if i + 1 < len(events) and not (first and i == 0):
            kind, after = event["type"], events[i + 1][1]["type"]
            for k in (kind, after):
                if k not in kinds:
                    kinds[k] = reducer.stamp_only(k)
            if kinds[kind] and kinds[after]:
                continue
        yield event


def sealed_through(res: Resolved) -> Header | None:
    return res.chain[-1] if res.chain else None
