"""When this clone first saw each lease on the board: the observer's side of a claim (model/claims.py).

A lease is stamped by its claimer's clock, which may be hours or years off. Each clone therefore keeps, in its
git directory (`.git/wb/leases-seen.json`, per clone: no other clone reads it), when it first saw each lease —
on its own clock — and judges a lease from then, never longer than its length (`observed_until`). A renewal
has a new `until`, so it is a new lease to observe. Written only when a lease appears that it has not seen,
atomically; a lost write (a crash, a read-only git directory) only makes the next look see it anew.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.model.claims import lease_key
from workbench.store.atomic import atomic_write

SEEN = "leases-seen.json"


def first_seen(git_dir: Path, board: dict[str, Any], now: str) -> dict[str, str]:
    """{task id: when this clone first saw the lease its claim holds now}, for every claimed task of `board`;
    a lease seen for the first time is recorded as seen `now`. Leases no longer on the board are forgotten."""
    if not any(isinstance(t, dict) and isinstance(t.get("claim"), dict) for t in board.get("tasks", [])):
        return {}  # no claim on the board (the usual case): nothing read, nothing written
    path = git_dir / "wb" / SEEN
    try:
        seen = json.loads(path.read_bytes())
        if not isinstance(seen, dict):
            seen = {}
    except (OSError, ValueError):
        seen = {}
    out: dict[str, str] = {}
    keep: dict[str, str] = {}
    for task in board.get("tasks", []):
        claim = task.get("claim") if isinstance(task, dict) else None
        if not isinstance(claim, dict) or task.get("status") in ("done", "cancelled"):
            continue
        key = lease_key(str(task.get("id")), claim)
        when = seen.get(key)
        if not isinstance(when, str):
            when = now
        keep[key] = out[str(task.get("id"))] = when
    if keep != seen:
        try:
            path.parent.mkdir(exist_ok=True)
            atomic_write(path, json.dumps(keep, indent=0, sort_keys=True).encode() + b"\n", durable=False)
        except OSError:
            pass
    return out
