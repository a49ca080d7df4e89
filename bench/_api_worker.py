"""One long-lived process making committed mutations through the Python API, on request.

    python bench/_api_worker.py ROOT

Prints `ready`, then for each line `N` on stdin makes N mutations (alternating `add_task` and `note`, each
its own transaction and git commit) and prints the seconds they took; `quit` ends it. A mutation that did not
produce a commit is an error (the git floor always commits).
"""

from __future__ import annotations

import sys
import time


def main(root: str) -> int:
    from workbench.api import Bench

    bench = Bench.open(root)
    done = 0
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "quit":
            break
        n = int(cmd)
        start = time.perf_counter()
        for _ in range(n):
            done += 1
            if done % 2:
                bench.add_task(f"api task {done}")
            else:
                bench.note(f"api note {done}: a decision recorded through the Python API")
            if bench.last.commit is None:
                print(f"error: mutation {done} made no commit: {bench.last.warnings}", flush=True)
                return 1
        print(repr(time.perf_counter() - start), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
