"""Listing the event log: every matching event, or the newest N and how many earlier ones match.

The newest N are read from the end of the log, and the reading stops there, so `wb log` costs about the same
at 50 events and at 50,000. The newest CHECKED events read are checked as they are read (seq and hash chain:
`wb validate` checks the whole log); past them, matching events are picked out by the bytes of their lines
and parsed, and the earlier matching events are only counted, from those bytes. wb writes every line with
one encoding (model/jsonl.py `encode`: the keys in a fixed order, `type` and `session` before `payload`), so
the first `,"type":` of a line is the event's own; a line that does not begin as wb writes it is parsed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from workbench.model.jsonl import read_line, split_lines
from workbench.model.layout import Paths
from workbench.store import caches
from workbench.store.eventlog import EventLog


def matches(event: dict[str, Any], type: str | None, session: str | None) -> bool:
    """`type` is a type (`task.done`) or a family (`task`); `session` a harness session id."""
    return ((type is None or event["type"] == type or str(event["type"]).startswith(type + "."))
            and (session is None or event.get("session") == session))


def every(log: EventLog, *, type: str | None = None, session: str | None = None) -> list[dict[str, Any]]:
    """Every matching event, oldest first, the whole log checked."""
    return list(each(log, type=type, session=session))


def each(log: EventLog, *, type: str | None = None, session: str | None = None) -> Iterator[dict[str, Any]]:
    """`every`, one event at a time: a caller that keeps only what it shows holds no more of the log than that."""
    return (e for _line, e in log.iter_all() if matches(e, type, session))


CHECKED = 1000  # events read back and checked (seq, hash chain) before the rest are only looked at as bytes


def newest(log: EventLog, limit: int, *, type: str | None = None, session: str | None = None,
           checked: int = CHECKED, paths: Paths | None = None) -> tuple[list[dict[str, Any]], int]:
    """(the newest `limit` matching events, oldest first; how many earlier events match). The newest `checked`
    events are read and checked; past them, a rare type's events are picked out by their bytes and parsed.
    `paths`: the workbench whose per-machine cache keeps each sealed segment's count by type (a sealed segment
    never changes: its count is kept by its digest), so counting the earlier events reads only what is not
    sealed."""
    shown: list[dict[str, Any]] = []
    oldest_read: bytes | None = None
    oldest_seq = 0
    for read, (line, event) in enumerate(log.iter_backwards(), start=1):
        oldest_read, oldest_seq = line, event["seq"]
        if matches(event, type, session):
            shown.append(event)
            if len(shown) == limit:
                break
        if read == checked:
            break
    else:
        return shown[::-1], 0
    wanted_type = None if type is None else _encoded(type)[:-1]  # `"task`: then `"` or `.`
    wanted_session = None if session is None else _encoded(session)
    if len(shown) == limit and type is not None and session is None:
        return shown[::-1], _count_earlier(log, oldest_read, oldest_seq, wanted_type or b"", type, paths)
    if len(shown) < limit and type is not None and session is None and paths is not None:
        older = _older_lines(log, oldest_read, oldest_seq, wanted_type or b"", type, paths)
    else:
        older = _past(log.lines_backwards(), oldest_read)
    rest = _matching(older, wanted_type, wanted_session, type, session)
    if len(shown) < limit:
        for line in rest:
            event = read_line(line, "events.jsonl", "an earlier line")
            shown.append(event)
            if len(shown) == limit:
                oldest_read, oldest_seq = line, event["seq"]
                break
        else:
            return shown[::-1], 0
    if type is not None and session is None:  # counted as above, from the oldest line shown
        return shown[::-1], _count_earlier(log, oldest_read, oldest_seq, wanted_type or b"", type, paths)
    return shown[::-1], sum(1 for _line in rest)


def _count_earlier(log: EventLog, oldest_read: bytes | None, oldest_seq: int, wanted: bytes, type: str,
                   paths: Paths | None) -> int:
    """The events of `type` before `oldest_read` (seq `oldest_seq`): the sealed segments wholly before it counted
    once per machine and kept by digest, the rest (where it lies, and what follows) from its bytes."""
    chain = log.sealed_chain()
    if not chain:
        return _count_type(log.complete_bytes(), oldest_read, wanted, type)
    kept = caches.read_type_counts(paths) if paths is not None else {}
    total, changed = 0, False
    for header in chain:
        if header.last < oldest_seq:  # wholly before the line: all of it counts
            key = f"{header.sha256}:{type}"
            n = kept.get(key)
            if not isinstance(n, int):
                n = _count_type(log.sealed_body(header), None, wanted, type, whole=True)
                kept[key], changed = n, True
            total += n
        elif header.first <= oldest_seq:  # the line is in this segment
            return total + _count_type(log.sealed_body(header), oldest_read, wanted, type)
    if changed and paths is not None:
        caches.write_type_counts(paths, kept)
    return total + _count_type(log.unsealed_bytes(), oldest_read, wanted, type)


def _older_lines(log: EventLog, oldest_read: bytes | None, oldest_seq: int, wanted: bytes, type: str,
                 paths: Paths) -> Iterator[bytes]:
    """The lines older than `oldest_read` (seq `oldest_seq`), newest first, as `_past` gives them, less the
    sealed segments wholly before it that hold no event of `type`: a segment's count by type is kept per
    machine under its digest, and a segment is passed over only when its bytes still have that digest."""
    chain = log.sealed_chain()
    older_segments = [h for h in chain if h.last < oldest_seq]
    if not older_segments:
        yield from _past(log.lines_backwards(), oldest_read)
        return
    # the lines between oldest_read and the newest wholly older segment: one line a seq
    within = oldest_seq - older_segments[-1].last - 1
    yield from islice(_past(log.lines_backwards(), oldest_read), max(within, 0))
    kept = caches.read_type_counts(paths)
    changed = False
    for header in reversed(older_segments):
        body = log.sealed_body(header)
        if hashlib.sha256(body).hexdigest() == header.sha256:
            key = f"{header.sha256}:{type}"
            n = kept.get(key)
            if not isinstance(n, int):
                n = _count_type(body, None, wanted, type, whole=True)
                kept[key], changed = n, True
            if n == 0:
                continue
        if changed:
            caches.write_type_counts(paths, kept)
            changed = False
        yield from reversed(split_lines(body)[0])
    if changed:
        caches.write_type_counts(paths, kept)


def _count_type(data: bytes, oldest_read: bytes | None, wanted: bytes, type: str, *, whole: bool = False) -> int:
    """The events of `type` in `data` (the log's complete lines) before the line `oldest_read`. When the
    lines name as many `,"type":` keys as there are lines (so no payload names one: each line's is its own),
    counting the bytes of `,"type":"task"` and `,"type":"task.` is the answer; otherwise each line is looked
    at. (A line rewritten by hand in another form and a payload naming a type elsewhere could offset each
    other: the count is a hint, and such a line breaks the hash chain `wb validate` checks.)"""
    if whole:
        at = len(data)
    else:
        at = (b"\n" + data).rfind(b"\n" + (oldest_read or b"") + b"\n")
        if at <= 0:  # the first line (nothing before it), or not found
            return 0
    if data.count(b',"type":', 0, at) == data.count(b"\n", 0, at):  # one type key a line: each line's own
        return data.count(b',"type":' + wanted + b'"', 0, at) + data.count(b',"type":' + wanted + b".", 0, at)
    return sum(1 for _line in _matching(reversed(data[:at].split(b"\n")[:-1]), wanted, None, type, None))


def _matching(lines: Iterable[bytes], wanted_type: bytes | None, wanted_session: bytes | None, type: str | None,
              session: str | None) -> Iterator[bytes]:
    # a line in wb's encoding without the wanted value after its key cannot match: passed over unread
    needle = (b',"type":' + wanted_type if wanted_type is not None
              else b',"session":' + wanted_session if wanted_session is not None else b"")
    for line in lines:
        if (needle in line or not line.startswith(_START)) and _line_matches(
                line, wanted_type, wanted_session, type, session):
            yield line


def _past(lines: Iterable[bytes], oldest_read: bytes | None) -> Iterator[bytes]:
    """The lines older than the line `oldest_read`, found again by its bytes (events appended since the first
    read are newer: they come before it)."""
    it = iter(lines)
    for line in it:
        if line == oldest_read:
            break
    return it


_START = b'{"schema_version":'


def _encoded(value: str) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _value_at(line: bytes, key: bytes) -> int | None:
    """Where the value of the event's own `key` begins, when the line is in wb's encoding; else None."""
    at = line.find(b',"' + key + b'":')
    payload = line.find(b',"payload":')
    if at == -1 or payload == -1 or at > payload or not line.startswith(_START):
        return None
    return at + len(key) + 4


def _line_matches(line: bytes, wanted_type: bytes | None, wanted_session: bytes | None,
                  type: str | None, session: str | None) -> bool:
    if wanted_type is not None:
        at = _value_at(line, b"type")
        if at is None:
            return matches(read_line(line, "events.jsonl", "an earlier line"), type, session)
        if not line.startswith(wanted_type, at) or line[at + len(wanted_type):at + len(wanted_type) + 1] not in (
                b'"', b"."):
            return False
    if wanted_session is not None:
        at = _value_at(line, b"session")
        if at is None:
            return matches(read_line(line, "events.jsonl", "an earlier line"), type, session)
        if not line.startswith(wanted_session, at) or line[at + len(wanted_session):at + len(wanted_session) + 1] \
                not in (b",", b"}"):
            return False
    return True
