#!/usr/bin/env python3
"""The `backends` bench (issue 24, docs/storage.md): the files backend against the SQLite one on the same
workbench, moved there with `wb export` / `wb import` (so both hold the same events).

    backends.task_add  `wb task add X` on SQLite vs on files, both with BACKEND_EVENTS events of history
                       (information, no bar): a mutation is one database transaction against an fsynced append,
                       two renames and a git commit
    backends.status    `wb status` on SQLite vs on files, the same history (information, no bar)

Full runs use 50,000 events (note events, bench/_gen.py), quick runs 2,000. bench/run.py registers
`bench_backends` as a group; Context and Result are bench/common.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from common import Context, Result

BACKEND_EVENTS = 50_000
QUICK_EVENTS = 2_000


def bench_backends(ctx: Context) -> list[Result]:
    from common import ratio, side_by_side

    s = ctx.settings
    r = ctx.runner
    events = s.n(BACKEND_EVENTS, QUICK_EVENTS)
    files = ctx.workbench(f"backends-files-{events}", "note", events)
    dump = ctx.tmp / "backends.dump"
    r.run([ctx.wb, "export", str(dump)], files, timeout=900)
    scratch = ctx.tmp / f"backends-sqlite-{events}"
    scratch.mkdir()
    r.run([ctx.wb, "import", str(dump), "--backend", "sqlite", "--no-git"], scratch, timeout=900)
    r.run([ctx.wb, "replay", "--verify"], scratch, timeout=900)
    out = []
    f, q = side_by_side([r.timer([ctx.wb, "status"], files), r.timer([ctx.wb, "status"], scratch)],
                        s.n(20, 6), s.n(2, 1))
    res = ratio("backends.status", "sqlite", q, "files", f, info=True)
    res.detail += f", {events:,} events"
    out.append(res)
    f, q = side_by_side([r.timer([ctx.wb, "task", "add", "X"], files), r.timer([ctx.wb, "task", "add", "X"], scratch)],
                        s.n(20, 6), s.n(2, 1))
    res = ratio("backends.task_add", "sqlite", q, "files", f, info=True)
    res.detail += f", {events:,} events"
    out.append(res)
    return out


if __name__ == "__main__":
    import sys

    sys.exit(__import__("run").main(["--only", "backends", *sys.argv[1:]]))
