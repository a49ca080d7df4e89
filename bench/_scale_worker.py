"""The Python API side of the `scale` bench (bench/scale.py).

    python bench/_scale_worker.py fill ROOT TOTAL   record agent.tool_call events through ONE
                                                    Bench.record_events call until the log holds TOTAL
                                                    events; prints the seconds it took
    python bench/_scale_worker.py add ROOT          print `ready`, then for each line `N` on stdin make N
                                                    Bench.add_task calls (each its own transaction and
                                                    commit) and print the seconds they took; `quit` ends it

Run it with the interpreter wb is installed in.
"""

from __future__ import annotations

import sys
import time


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
    if bench.last.commit is None:
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
        start = time.perf_counter()
        for _ in range(int(cmd)):
            done += 1
            bench.add_task(f"scale api task {done}")
            if bench.last.commit is None:
                print(f"error: add_task {done} made no commit: {bench.last.warnings}", flush=True)
                return 1
        print(repr(time.perf_counter() - start), flush=True)
    return 0


if __name__ == "__main__":
    mode = sys.argv[1]
    sys.exit(fill(sys.argv[2], int(sys.argv[3])) if mode == "fill" else add(sys.argv[2]))
