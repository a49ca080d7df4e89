#!/usr/bin/env python3
"""`wb diff A B` against `git diff A B` on the same two revisions of a repository with real history.

    python bench/diff_bench.py [--quick] [--rounds N] [--keep]

Builds a repository whose workbench holds a 5,000-task board and 1,000 commits of history (--quick: 500
tasks, 100 commits): the board's tasks are generated as task.add events through wb's own encoder and reducer
(chained, folded exactly as wb folds them), then every commit is a real mutation through the Python API with
its git commit: tasks started, finished, blocked, edited, notes, and a two-step harness session now and then.
Then `wb diff A B` (text, the default) and `git diff A B` between a revision near the start of that history
and HEAD run interleaved, their order alternating, and the ratio of their medians is printed:

    diff.ratio  wb diff X ms / git diff Y ms = Z×

The floor is `git diff --no-textconv A B`: git comparing the same bytes line by line. `wb init` registers
`wb textconv` as git's diff driver of the workbench files, so a plain `git diff A B` in such a repository
runs wb once per side of each file; that figure is printed too (`diff.ratio_textconv`, for information).
Last comes one `BENCH_SUMMARY {json}` line. Stdlib + workbench only; run it with the interpreter wb is
installed in.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PY = sys.executable
WB = [PY, "-m", "workbench.cli.main"]
GIT_ENV = {"GIT_AUTHOR_NAME": "wb bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "wb bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1", "CI": "1"}


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return proc.stdout


def generate_tasks(root: Path, count: int) -> None:
    """`count` task.add events appended in one write and folded into the snapshots, as wb would."""
    from workbench.model import ids, reducer, statefile
    from workbench.model.boardfile import encode_board
    from workbench.model.jsonl import encode, line_hash
    from workbench.store.atomic import atomic_write
    from workbench.store.workbench import Workbench

    wb = Workbench(root)
    loaded = wb.load(detect_human=False, need_node=True)
    docs, seq, prev = loaded.docs, loaded.tail.seq, loaded.tail.hash
    lines = []
    for n in range(1, count + 1):
        seq += 1
        ts = ids.utc_now()
        task = {"id": f"T-{n:04d}", "kind": "build", "title": f"bench task {n}: generated", "status": "todo",
                "owner": "builder", "acceptance": [], "depends_on": [f"T-{n - 1:04d}"] if n % 7 == 0 else [],
                "created_at": ts, "updated_at": ts}
        event = {"schema_version": 1, "seq": seq, "id": ids.new_id(), "ts": ts, "type": "task.add",
                 "actor": "agent", "session": None, "payload": {"task": task}, "prev": prev}
        line = encode(event)
        prev = line_hash(line)
        lines.append(line + b"\n")
        reducer.apply(docs, event)
    with open(wb.paths.events, "ab") as fh:
        fh.write(b"".join(lines))
    atomic_write(wb.paths.board, encode_board(docs.board))
    atomic_write(wb.paths.state, statefile.render(loaded.state_node, docs.state, docs.body))
    shutil.rmtree(wb.paths.cache, ignore_errors=True)  # wb rewrites it on the next write


def build(root: Path, tasks: int, commits: int, say: Any) -> tuple[str, str]:
    """The repository; returns (A, B): a revision just after the board was built, and HEAD."""
    from workbench.api import Bench, init
    from workbench.harness import bound

    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# bench\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial commit")
    init(root)
    generate_tasks(root, tasks - 1)
    bench = Bench.open(root)
    bench.add_task("the last task, added through the API (commits the generated board)")
    a = git(root, "rev-parse", "HEAD").strip()
    (root / "plan.json").write_text(json.dumps({"steps": [{"description": "Read the failing test"},
                                                          {"description": "Decide on the fix"}]}))
    started = time.perf_counter()
    made = n = 0
    while made < commits:
        n += 1
        tid = f"T-{(n * 37) % (tasks - 1) + 1:04d}"  # 37 is prime to tasks - 1: a different task each time
        kind = n % 10
        if kind == 9 and n % 100 == 99 and made + 5 < commits:
            bound.run(bench.wb, f"bench session {n}", plan=root / "plan.json")
            made = int(git(root, "rev-list", "--count", f"{a}..HEAD").strip())  # a commit per step, and one more
            continue
        if kind in (0, 5):
            bench.note(f"decision {n}: generated for the bench, with a little text to carry")
        elif kind in (1, 6):
            bench.start_task(tid)
        elif kind in (2, 7):
            bench.done_task(tid)
        elif kind == 3:
            bench.block_task(tid, f"waiting on decision {n}")
        elif kind == 4:
            bench.set_task(tid, {"title": f"bench task {tid} (renamed {n})"})
        elif kind == 8:
            bench.set_state({"next_action": f"continue with step {n}"})
        else:
            bench.add_task(f"bench follow-up {n}", depends_on=[tid])
        made += 1
        if made % 200 == 0:
            say(f"  {made} commits ({time.perf_counter() - started:.0f} s)")
    return a, git(root, "rev-parse", "HEAD").strip()


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return elapsed, proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 tasks, 100 commits, 5 rounds")
    parser.add_argument("--rounds", type=int, default=None, help="timed runs of each side (default 11; 5 quick)")
    parser.add_argument("--keep", action="store_true", help="keep the repository (its path is printed)")
    args = parser.parse_args(argv)
    tasks, commits = (500, 100) if args.quick else (5_000, 1_000)
    rounds = args.rounds or (5 if args.quick else 11)

    os.environ.update(GIT_ENV)
    env = {**os.environ, **GIT_ENV}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed wb has its .pyc files: let the warm-up write them
    tmp = Path(tempfile.mkdtemp(prefix="wb-diff-bench-"))
    root = tmp / "repo"
    try:
        say = print
        say(f"building: {tasks} tasks, {commits} commits in {root}")
        t0 = time.perf_counter()
        a, b = build(root, tasks, commits, say)
        build_s = time.perf_counter() - t0
        history = int(git(root, "rev-list", "--count", f"{a}..{b}").strip())
        say(f"built in {build_s:.1f} s: {history} commits between A={a[:10]} and B={b[:10]}")

        argvs = {"wb": [*WB, "diff", a, b], "git": ["git", "diff", "--no-textconv", a, b],
                 "git_textconv": ["git", "diff", a, b], "python": [PY, "-c", "pass"]}
        outputs = {name: timed(argv, root, env)[1] for name, argv in argvs.items()}  # warm up, and check
        data = json.loads(timed([*argvs["wb"], "--format", "json"], root, env)[1])
        assert data["events"]["appended"] == data["events"]["new_last_seq"] - data["events"]["old_last_seq"]
        assert not data["events"]["rewritten"] and data["board"]["changed"]
        times: dict[str, list[float]] = {name: [] for name in argvs}
        order = list(argvs)
        for i in range(rounds):
            for name in order if i % 2 == 0 else order[::-1]:
                times[name].append(timed(argvs[name], root, env)[0])
        from workbench.review.diff import diff

        core = []
        for _ in range(rounds):  # the work itself, in this process: what is left after start-up
            start = time.perf_counter()
            diff(root, [a, b])
            core.append(time.perf_counter() - start)
        times["core"] = core
        ms = {name: statistics.median(values) * 1000 for name, values in times.items()}
        ratio, ratio_tc = ms["wb"] / ms["git"], ms["wb"] / ms["git_textconv"]
        say(f"diff.ratio  wb diff {ms['wb']:.1f} ms / git diff {ms['git']:.1f} ms = {ratio:.2f}×"
            "   (git diff --no-textconv: git comparing the same bytes line by line)")
        say(f"diff.ratio_textconv  wb diff {ms['wb']:.1f} ms / git diff {ms['git_textconv']:.1f} ms = "
            f"{ratio_tc:.2f}×   (git diff through the textconv drivers wb init registers; information)")
        say(f"diff.parts  python -c pass {ms['python']:.1f} ms · workbench.review.diff.diff() in-process "
            f"{ms['core']:.1f} ms "
            "(the rest of wb diff is start-up: imports, the CLI)")
        summary = {
            "bench": "diff", "quick": args.quick, "tasks": tasks, "commits": history, "rounds": rounds,
            "build_seconds": round(build_s, 1),
            "wb_diff_ms": round(ms["wb"], 2), "git_diff_ms": round(ms["git"], 2), "ratio": round(ratio, 3),
            "git_diff_textconv_ms": round(ms["git_textconv"], 2), "ratio_textconv": round(ratio_tc, 3),
            "python_ms": round(ms["python"], 2), "core_ms": round(ms["core"], 2),
            "events_appended": data["events"]["appended"], "tasks_changed": len(data["board"]["changed"]),
            "tasks_added": len(data["board"]["added"]),
            "output_bytes": {name: len(out) for name, out in outputs.items()},
        }
        say("BENCH_SUMMARY " + json.dumps(summary, sort_keys=True))
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
