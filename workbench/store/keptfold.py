"""The fold of the sealed log, kept for the hand-edit check of the next write (issue 33).

When board.json or state.md is not what wb last wrote here but is what is committed (a pull brought another
clone's write, a person committed an edit with plain git), the next write asks what the log folds to at the
snapshot's last_event (store/humanedit.py `fold_at`). Folding 50,000 events from the first is most of a second;
after a fast-forward pull the sealed segments are the same files as before, and only the events after them are
new. So the first such fold keeps what the sealed chain folds to, and later ones start from it.

The record is this machine's (`<git dir>/wb/cache/fold.json`, never in `.workbench/`): what it holds was folded
here, from segments read and checked against the digests in their headers. It applies to a chain whose segments
are the same files — each one's header digest, size and modification time as recorded (as git trusts its index
by stat) — and to a prefix of it: the segments sealed since are read and folded on top. Anything else (another
chain, a rewritten segment, a record that does not parse) and the fold starts from the first event again.
"""

from __future__ import annotations

import json
import os

from workbench.errors import Refused
from workbench.model import reducer
from workbench.store.atomic import atomic_write
from workbench.store.caches import read_json

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from workbench.model.layout import Paths
    from workbench.model.segments import Header
    from workbench.store.eventlog import EventLog

NAME = "fold.json"
EMPTY_TS = "1970-01-01T00:00:00Z"  # the stamp of empty documents, as every fold_at makes them


def fold_at(log: EventLog, p: Paths, seq: int, *, keep: bool = True) -> reducer.Docs | None:
    """What events 1..seq fold to (None for no events). Refused (a WorkbenchError) where the log cannot be read.
    Not `keep`: a fold from the first event records nothing (a fresh clone's first command: the first write after
    a pull records it)."""
    res = log.resolution()
    if res.problem:
        raise Refused(res.problem)
    chain = list(res.chain)
    keys = _keys(log, chain)
    docs, k = _kept(p, keys)
    if docs is not None and chain[k - 1].last <= seq:
        for header in chain[k:]:
            if header.first > seq:
                return docs
            docs = reducer.fold_more(docs, (e for _line, e in log.sealed_events(header) if e["seq"] <= seq))
        if chain[k:] and chain[-1].last <= seq and docs is not None:
            _keep(p, keys, docs)
        return reducer.fold_more(docs, _unsealed(log, res, seq))
    if not keep or not chain or chain[-1].last > seq:
        return reducer.fold(_upto(log.iter_for_fold(reducer.stamp_only, seq), seq), empty_ts=EMPTY_TS)
    end = chain[-1].last
    docs = reducer.fold(_upto(log.iter_for_fold(reducer.stamp_only, end), end), empty_ts=EMPTY_TS)
    if docs is not None:
        _keep(p, keys, docs)
    return reducer.fold_more(docs, _unsealed(log, res, seq))


def _upto(events: Iterator[dict[str, Any]], last: int) -> Iterator[dict[str, Any]]:
    for event in events:
        if event["seq"] > last:
            return
        yield event


def _unsealed(log: EventLog, res: Any, seq: int) -> Iterator[dict[str, Any]]:
    for _line, event in log.iter_unsealed(res):
        if event["seq"] > seq:
            return
        yield event


def _keys(log: EventLog, chain: list[Header]) -> list[list[Any]]:
    """Each chain segment as the record names it: [header digest, size, mtime_ns]."""
    out = []
    for header in chain:
        try:
            st = os.stat(log.log_dir / header.name)
        except OSError:
            return []  # gone since the chain was read: the reads that follow say what happened
        out.append([header.sha256, st.st_size, st.st_mtime_ns])
    return out


def _kept(p: Paths, keys: list[list[Any]]) -> tuple[reducer.Docs | None, int]:
    """(the kept fold, the number of chain segments it covers) when it covers a prefix of `keys`, else (None, 0)."""
    kept = read_json(p.cache / NAME)
    if not isinstance(kept, dict) or not isinstance(kept.get("keys"), list):
        return None, 0
    k = len(kept["keys"])
    if not k or k > len(keys) or keys[:k] != kept["keys"]:
        return None, 0
    state, body, board = kept.get("state"), kept.get("body"), kept.get("board")
    if not isinstance(state, dict) or not isinstance(body, str) or not isinstance(board, dict):
        return None, 0
    return reducer.Docs(state, body, board), k


def _keep(p: Paths, keys: list[list[Any]], docs: reducer.Docs) -> None:
    """Record the fold of the whole chain `keys` names (written at once: the caller goes on folding into docs)."""
    if not keys or not p.git_dir.is_dir():
        return
    try:
        raw = json.dumps({"keys": keys, "state": docs.state, "body": docs.body, "board": docs.board},
                         ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        p.cache.mkdir(parents=True, exist_ok=True)
        atomic_write(p.cache / NAME, raw, durable=False)
    except (OSError, TypeError, ValueError):
        pass  # a cache: the next fold starts from the first event again
