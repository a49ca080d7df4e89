"""Timestamps, sortable unique ids, and the board's task ids (`T-001`)."""

from __future__ import annotations

import os
import re
import time

TASK_ID = re.compile(r"^T-\d{3,}$")  # as schemas/board.schema.json
_TASK_NUMBER = re.compile(r"^T-(\d+)$")


def task_number(task_id: object) -> int:
    """The number of a task id (`T-007` → 7); 0 for anything else. Lenient (`T-7` is 7): a merge meets ids
    of boards not yet validated."""
    m = _TASK_NUMBER.match(task_id) if isinstance(task_id, str) else None
    return int(m.group(1)) if m else 0


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def utc_now() -> str:
    """RFC 3339 UTC with milliseconds: 2026-11-30T02:16:33.123Z."""
    # test-only: WB_CLOCK_SKEW_S=SECONDS runs wb's clock that far ahead (negative: behind), as on a machine whose
    # clock is off — the scenarios of claims across skewed clocks (docs/sync.md, "Clocks")
    # time.gmtime, not datetime: a hook stamps its event without importing datetime
    now = time.time() + float(os.environ.get("WB_CLOCK_SKEW_S") or 0)
    return time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(now)) + f"{int(now * 1000) % 1000:03d}Z"


_last_ms = 0
_last_rand = 0


def new_id() -> str:
    """A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32, 26 characters.

    Within one millisecond of one process the random part is incremented, so ids stay strictly sortable.
    """
    global _last_ms, _last_rand
    ms = int(time.time() * 1000)
    if ms <= _last_ms:
        ms = _last_ms
        rand = (_last_rand + 1) & ((1 << 80) - 1)
    else:
        rand = int.from_bytes(os.urandom(10), "big")
    _last_ms, _last_rand = ms, rand
    value = (ms << 80) | rand
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))
