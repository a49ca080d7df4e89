#!/usr/bin/env python3
"""The `writers` bench (issue 20 goal 4, CONTRACT.md §8): 20 concurrent writers × 10 `wb task add` each, at
default settings (no WB_LOCK_TIMEOUT), against one workbench.

    python bench/writers.py [--quick]          # on its own; bench/run.py registers `bench_writers` as a group

  writers.ok         the share of the writes that exited 0 and are on the board, in the log and in git's history
                     with unique ids (bar: 100 %); the detail line counts lock timeouts (exit 6), lost writes,
                     duplicate ids, the commits that carried the writes (group commit) and the longest wait
  writers.per_write  the burst's wall time per write vs one lone `wb task add` (information, no bar): what a
                     write costs when twenty queue for the lock, against one that never waits

Quick runs use 20 writers × 4 adds. Stdlib only, like bench/run.py; Context and Result are bench/common.py's.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import common as R  # bench/common.py: what every bench shares (this module imports no other bench's)
from common import Context, Result

WRITERS = 20
EACH = 10
EACH_QUICK = 4

# One writer: waits for "go" on stdin, runs `wb task add` N times, prints one JSON line per add.
_WORKER = textwrap.dedent("""
    import json, subprocess, sys, time
    wb, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.stdin.readline()
    for i in range(n):
        title = f"{tag}-{i:02d}"
        t0 = time.perf_counter()
        p = subprocess.run([wb, "task", "add", title], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        print(json.dumps({"title": title, "code": p.returncode, "s": time.perf_counter() - t0,
                          "err": p.stderr.strip()[-300:]}), flush=True)
""")


def bench_writers(ctx: Context) -> list[Result]:
    each = ctx.settings.n(EACH, EACH_QUICK)
    total = WRITERS * each
    repo = ctx.workbench("writers")
    head0 = ctx.git(repo, "rev-parse", "HEAD").strip()
    env = dict(ctx.runner.env)
    env.pop("WB_LOCK_TIMEOUT", None)  # default settings: the figure is about them

    lone = ctx.workbench("writers-lone")  # a lone writer's add, the baseline of per_write
    add = ctx.runner.timer([ctx.wb, "task", "add", "alone"], lone)
    lone_s = [add() for _ in range(ctx.settings.n(7, 3))]

    procs = [subprocess.Popen([R.PY, "-c", _WORKER, ctx.wb, f"w{w:02d}", str(each)], cwd=repo, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(WRITERS)]
    start = time.perf_counter()
    for proc in procs:  # all at once
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    adds: list[dict[str, Any]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=1800)
        if proc.returncode != 0:
            raise R.BenchError(f"a writer crashed ({proc.returncode}): {err.strip()[-600:]}")
        adds.extend(json.loads(line) for line in out.splitlines() if line.strip())
    burst = time.perf_counter() - start

    timeouts = sum(1 for a in adds if a["code"] == 6)
    failed = [a for a in adds if a["code"] != 0]
    board = json.loads((repo / ".workbench" / "board.json").read_text())
    titles = [t["title"] for t in board["tasks"]]
    ids = [t["id"] for t in board["tasks"]]
    acked = {a["title"] for a in adds if a["code"] == 0}
    lost = len(acked - set(titles))
    duplicates = len(ids) - len(set(ids))
    events = [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    added = {e["payload"]["task"]["title"]: e["seq"] for e in events if e["type"] == "task.add"}
    trailers = ctx.git(repo, "log", "--format=%(trailers:key=Wb-Event,valueonly)", f"{head0}..HEAD").split()
    named = {int(v) for v in trailers}
    uncommitted = sum(1 for title in acked if added.get(title) not in named)
    commits = int(ctx.git(repo, "rev-list", "--count", f"{head0}..HEAD").strip())
    dirty = ctx.git(repo, "status", "--porcelain", "--", ".workbench").strip()
    for check in (["validate"], ["replay", "--verify"]):
        ctx.runner.run([ctx.wb, *check], repo, timeout=600)  # raises when it fails

    ok = len(acked) - lost - uncommitted - duplicates
    longest = max((a["s"] for a in adds), default=0.0)
    detail = (f"{WRITERS}×{each}: {timeouts} lock timeouts, {len(failed) - timeouts} other failures, {lost} lost, "
              f"{duplicates} duplicate ids, {uncommitted} not in git's history, {commits} commits carried "
              f"them{', .workbench/ left dirty' if dirty else ''}; longest add {R.fmt_s(longest)}")
    extra = {"writers": WRITERS, "each": each, "lock_timeouts": timeouts, "failed": len(failed), "lost": lost,
             "duplicate_ids": duplicates, "uncommitted": uncommitted, "commits": commits,
             "longest_add_ms": round(longest * 1000, 1), "burst_s": round(burst, 2)}
    if failed:
        extra["first_failure"] = failed[0]["err"]
    share = 100.0 * max(0, ok - (1 if dirty else 0)) / total if total else 0.0
    results = [R.Result("writers.ok", "rate", share, 100.0, "% of writes ok", n=total, detail=detail,
                        extra=extra)]
    per_write = burst / total
    results.append(R.Result("writers.per_write", "info", per_write / statistics.median(lone_s), None, "x",
                            "20 writers", per_write, "lone", statistics.median(lone_s), n=total,
                            detail=f"burst {R.fmt_s(burst)} for {total} writes"))
    return results


def main(argv: list[str] | None = None) -> int:
    """Run this bench alone, with bench/run.py's Context: its lines, then a BENCH_SUMMARY of its own."""
    import argparse
    import shutil
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"{WRITERS} writers × {EACH_QUICK} adds")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="wb-bench-writers-"))
    try:
        ctx = R.Context(R.Settings(quick=args.quick), tmp)
        results = bench_writers(ctx)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for res in results:
        print(res.line(), flush=True)
    missed = [r.name for r in results if r.ok is False]
    print("BENCH_SUMMARY " + json.dumps({"results": {r.name: r.summary() for r in results}, "missed": missed},
                                        separators=(",", ":")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
