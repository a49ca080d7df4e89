"""The Python API side of the `scale` bench (bench/scale.py).

    python bench/_scale_worker.py fill ROOT TOTAL   record agent.tool_call events through ONE
                                                    Bench.record_events call until the log holds TOTAL
                                                    events; prints the seconds it took
    python bench/_scale_worker.py add ROOT          print `ready`, then for each line `N` on stdin make N
                                                    Bench.add_task calls (each its own transaction, and on
                                                    the files backend its own commit) and print the seconds
                                                    each took, on one line; `quit` ends it

Run it with the interpreter wb is installed in. Either backend: on SQLite a write makes no git commit, so
what is checked there is that it recorded its event.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.api import Bench


def _recorded(bench: Bench) -> bool:
    """Whether the last write made its commit (files) or recorded its events (SQLite: no commit)."""
    from workbench.store.sqlitedb import SqliteWorkbench

    return bool(bench.last.seqs) if isinstance(bench.wb, SqliteWorkbench) else bench.last.commit is not None


def fill(root: str, total: int) -> int:
    from workbench.api import Bench

    bench = Bench.open(root)
    have = bench.wb.log.tail().seq
    if have > total:
        raise SystemExit(f"the log already holds {have} events; cannot make it {total}")
    events = [{"type": "agent.tool_call",
               "payload": {"tool": "Bash", "agent": "bench", "agent_session": f"s-{seq // 500}",
                           "input": {"command": f"pytest -q tests/test_module_{seq % 97}.py",
                                     "description": "Run the tests of one module"},
                           "output": {"exit": 0, "tail": f"{seq % 13 + 1} passed in 0.{seq % 90 + 10}s"}}}
              for seq in range(have + 1, total + 1)]
    start = time.perf_counter()
    bench.record_events(events)
    print(repr(time.perf_counter() - start), flush=True)
    if bench.wb.log.tail().seq != total:
        raise SystemExit(f"the log holds {bench.wb.log.tail().seq} events, wanted {total}")
    if not _recorded(bench):
        raise SystemExit(f"record_events made no commit: {bench.last.warnings}")
    return 0


def add(root: str) -> int:
    from workbench.api import Bench

    bench = Bench.open(root)
    done = 0
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "quit":
            break
        took = []
        for _ in range(int(cmd)):
            done += 1
            start = time.perf_counter()
            bench.add_task(f"scale api task {done}")
            took.append(time.perf_counter() - start)
            if not _recorded(bench):
                print(f"error: add_task {done} made no commit: {bench.last.warnings}", flush=True)
                return 1
        print(" ".join(repr(t) for t in took), flush=True)
    bench.close()
    return 0


if __name__ == "__main__":
    mode = sys.argv[1]
    sys.exit(fill(sys.argv[2], int(sys.argv[3])) if mode == "fill" else add(sys.argv[2]))
