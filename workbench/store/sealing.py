"""Sealing: events.jsonl's events move into an immutable segment under `.workbench/log/` once it holds
`log.segment_events` events or `log.segment_bytes` bytes (config.yaml; defaults 1000 and 512 KiB), so git
stores per commit a small events.jsonl and, once per segment, the sealed one — never the whole history again.

Called by the transaction after its append and snapshot writes, under its lock, so the commit that follows
carries the seal with the write. Crash-safe in two steps, each durable before the next:
1. every new segment is written atomically (temp file, fsync, rename, fsync of log/): a crash here leaves the
   segment and events.jsonl both holding its events; the log reads the same (workbench.model.segments.resolve
   skips events.jsonl's sealed copy), and the next seal finishes the job;
2. events.jsonl is replaced atomically by the events not sealed.
A torn tail of events.jsonl (never acknowledged) is not sealed and stays where it was.

A long single events.jsonl (a workbench from before segments) is sealed the same way, into as many
segments as it takes, by its next write or by `wb doctor --fix`.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench import faults
from workbench.model.jsonl import split_lines
from workbench.model.segments import LOG_DIR, SEGMENT_BYTES, SEGMENT_EVENTS, Header, encode_segment, segment_name
from workbench.store.atomic import atomic_write, fsync_dir
from workbench.store.eventlog import EventLog

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.model.segments import Resolved


def limits(config: dict[str, Any] | None) -> tuple[int, int]:
    log = (config or {}).get("log") or {}
    return int(log.get("segment_events") or SEGMENT_EVENTS), int(log.get("segment_bytes") or SEGMENT_BYTES)


def unsealed(log: EventLog) -> tuple[Header | None, list[bytes], int, bytes]:
    """(the last sealed segment, the complete lines of events.jsonl it does not hold yet, how many leading lines it
    holds already (a seal cut short), the torn bytes after the complete lines)."""
    res = log.resolution()
    if res.problem:
        from workbench.errors import Refused

        raise Refused(res.problem)
    tail = log.tail()
    raw = log.path.read_bytes() if log.path.exists() else b""
    lines = split_lines(raw[:tail.good_size])[0]
    last = res.chain[-1] if res.chain else None
    return last, lines[res.overlap:], res.overlap, raw[tail.good_size:]


def due(log: EventLog, config: dict[str, Any] | None, res: Resolved | None = None) -> bool:
    """Whether events.jsonl holds enough to seal (or still holds events a seal cut short had sealed). `res`: the
    log's resolution as the caller just read it (else read here)."""
    max_events, max_bytes = limits(config)
    tail = log.tail()
    if tail.good_size >= max_bytes:
        return True
    if tail.seq == 0:
        return False
    res = res if res is not None else log.resolution()
    if res.overlap or res.problem:
        return bool(res.overlap)
    first = res.chain[-1].last if res.chain else 0
    return tail.seq - first >= max_events


def seal(log: EventLog, config: dict[str, Any] | None, *, force: bool = False, res: Resolved | None = None) -> int:
    """Seal what is due; the number of segments written. The caller holds the workbench lock. `force`: seal
    whole segments even when the tail is under the threshold by events (doctor --fix of an old long log). `res`:
    the log's resolution as the caller just read it, for telling whether one is due."""
    if not force and not due(log, config, res):
        return 0
    max_events, max_bytes = limits(config)
    last, lines, overlap, torn = unsealed(log)
    chunks: list[list[bytes]] = []
    current: list[bytes] = []
    size = 0
    for line in lines:
        current.append(line)
        size += len(line) + 1
        if len(current) >= max_events or size >= max_bytes:
            chunks.append(current)
            current, size = [], 0
    if not chunks and not overlap:
        return 0
    log_dir = log.log_dir
    log_dir.mkdir(exist_ok=True)
    number = last.number if last else 0
    new: dict[str, bytes] = {}
    for chunk in chunks:
        number += 1
        new[segment_name(number)], last = encode_segment(number, chunk, last)
    if new and log.before_sealed_change is not None:  # a name may be a segment's a merge left over
        log.before_sealed_change(dict(new))
    for name, data in new.items():
        atomic_write(log_dir / name, data, sync_dir=False)
        faults.point("after_segment_write")
    if chunks:
        fsync_dir(log_dir)
    faults.point("before_tail_rewrite")
    atomic_write(log.path, b"".join(line + b"\n" for line in current) + torn)
    faults.point("after_tail_rewrite")
    return len(chunks)


def seal_log(log: EventLog, config: dict[str, Any] | None) -> None:
    """The transaction's one call, after its append: seal what is due and drop the segments a merge left over.
    Never fails the write it follows (that write is acknowledged already): a seal that cannot be made now
    (a full disk, a damaged segment `wb doctor` reports) is made by a later write."""
    from workbench.errors import WorkbenchError

    try:
        # read once for both (it takes a stat of every segment and events.jsonl's first line)
        res: Resolved | None = log.resolution()
        if remove_orphans(log, res):
            res = None  # segments went: read again
        seal(log, config, res=res)
    except (OSError, WorkbenchError):
        pass


def remove_orphans(log: EventLog, res: Resolved | None = None) -> list[str]:
    """Remove the segments a merge left over whose every event the log holds (by id); the names removed.
    Those holding an event the log lacks are kept, for `wb doctor` to report. `res`: the log's resolution as the
    caller just read it."""
    res = res if res is not None else log.resolution()
    if not res.orphans or res.problem:
        return []
    from workbench.model.jsonl import records

    have = {e["id"] for _line, e in log.iter_all()}
    removed = []
    for h in res.orphans:
        path: Path = log.log_dir / h.name
        try:
            events = records(split_lines(path.read_bytes()[h.size:])[0])[0]
        except OSError:
            continue
        if all(e.get("id") in have for e in events):
            removed.append(h.name)
    if removed and log.before_sealed_change is not None:
        log.before_sealed_change(dict.fromkeys(removed))
    for name in removed:
        os.unlink(log.log_dir / name)
    if removed:
        fsync_dir(log.log_dir)
    return removed


__all__ = ["LOG_DIR", "due", "limits", "remove_orphans", "seal", "seal_log", "unsealed"]
