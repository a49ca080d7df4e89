"""The `scale` group of bench/run.py (issue 20): does the cost of the present stay flat as the work grows?

Two workbenches, built through wb's bulk paths (the build is part of the point: it must be fast):
  big    5,000 tasks (4,800 done) by ONE `wb task import` of a Markdown checklist, then agent.tool_call events
         by ONE `Bench.record_events` call until the log holds 50,000 events
  small  50 tasks (48 done) and 500 events, built the same way
and each row of issue 20 beside its bar:
  scale.import        `wb task import` of the 5,000 tasks into a fresh workbench, seconds (≤ 3 s)
  scale.record_events the `Bench.record_events` call of the ~45,000 events     (information)
  scale.cli_mutation  `wb task add X` big vs small                             (≤ 1.25×)
  scale.api_add_task  `Bench.add_task` in a long-lived process, big vs small   (≤ 1.25×)
  scale.api_add_task_p99  issue 33: the p99 of single `Bench.add_task` latencies on the big workbench, a run
                      of consecutive writes (pack runs, seals and archive moves included), vs their median
                                                                               (≤ 3×; the largest beside it)
  scale.sqlite_api_add_task  the same as scale.api_add_task on the SQLite backend: both workbenches moved there
                      by `wb export` / `wb import --backend sqlite` right after the build   (issue 33: ≤ 1.5×)
  scale.sqlite_api_add_task_p99  the p99 row on that SQLite workbench          (≤ 3×)
  scale.handoff       `wb handoff` big vs small                                (≤ 1.5×)
  scale.log_type      `wb log --type task` big vs small                        (≤ 1.5×)
  scale.git_log_p     `git log -p -5` with wb's textconv vs `--no-textconv`, big (≤ 1.5×)
  scale.validate      `wb validate` at 50,000 events, seconds                  (≤ 1 s; the small one beside it)
  scale.doctor        `wb doctor` at 50,000 events, seconds                    (≤ 1 s; likewise)
  scale.git_bytes     bytes one `wb task add` adds to .git/objects (before any gc) vs a plain `git commit` of a
                      one-line change in the same repository                   (≤ 2×); wb packs its own objects
                      every git.pack_every (16) commits, so its side is the net growth from one of its pack
                      runs to the next, per add, after a warm-up of two runs (the first packs the history,
                      the second seals that pack and stores each file whole once, as every seal does)
The same sizes in --quick (fewer rounds): the ratios are only meaningful at 5,000 / 50,000.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import time
from pathlib import Path

import common as R  # bench/common.py: what every bench shares (this module imports no other bench's)

BIG_TASKS, BIG_DONE, BIG_EVENTS = 5_000, 4_800, 50_000
SMALL_TASKS, SMALL_DONE, SMALL_EVENTS = 50, 48, 500
GIT_PACK_EVERY = 16  # wb's default git.pack_every (workbench/git/packs.py DEFAULT_EVERY)
QUICK_BUDGET_S, FULL_BUDGET_S = 6.0, 60.0  # seconds of measuring per row, after the first round
RACY_WAIT_S = 2.5  # git/blobstat.py's RACY_NS (2 s) and a margin: a file that old is hashed once, then trusted
P99_WRITES_QUICK, P99_WRITES_FULL = 160, 1_000  # consecutive single writes a p99 row times (10 / 62 pack runs)
R.BARS.update({
    "scale.import": 3.0,  # seconds, at most
    "scale.cli_mutation": 1.25,
    "scale.api_add_task": 1.25,
    "scale.api_add_task_p99": 3.0,  # issue 33: p99 of single writes at most 3× their median
    "scale.sqlite_api_add_task": 1.5,  # issue 33
    "scale.sqlite_api_add_task_p99": 3.0,
    "scale.handoff": 1.5,
    "scale.log_type": 1.5,
    "scale.git_log_p": 1.5,
    "scale.validate": 1.0,  # seconds, at most
    "scale.doctor": 1.0,
    "scale.git_bytes": 2.0,
})


def checklist(tasks: int, done: int) -> str:
    """A Markdown checklist: `done` tasks done, the rest to do, each open one with an acceptance command and
    depending on the one before it (the file's own ids, as `wb task import` maps them)."""
    lines = []
    for i in range(1, tasks + 1):
        if i <= done:
            lines.append(f"- [x] scale task {i}: finished work\n  id: T-{i:03d}")
        else:
            lines.append(f"- [ ] scale task {i}: open work\n  id: T-{i:03d}\n  accept: true\n"
                         f"  depends: T-{i - 1:03d}")
    return "\n".join(lines) + "\n"


def build(ctx: R.Context, name: str, tasks: int, done: int, events: int) -> tuple[Path, float, float]:
    """A repository with a workbench of `tasks` tasks and `events` events; the seconds the import and the
    record_events call took."""
    repo = ctx.git_repo(name)
    ctx.runner.run([ctx.wb, "init"], repo)
    source = ctx.tmp / f"{name}-tasks.md"
    source.write_text(checklist(tasks, done))
    start = time.perf_counter()
    out = ctx.runner.run([ctx.wb, "task", "import", str(source)], repo, timeout=600).stdout.decode()
    imported = time.perf_counter() - start
    if f"imported {tasks} tasks" not in out:
        raise R.BenchError(f"`wb task import` said {out.strip()!r}")
    filled = float(ctx.runner.run([R.PY, str(R.HERE / "_scale_worker.py"), "fill", str(repo), str(events)],
                                  repo, timeout=900).stdout.decode().strip())
    dirty = ctx.git(repo, "status", "--porcelain", "--", ".workbench")
    if dirty.strip():
        raise R.BenchError(f"{name}: git status shows changes under .workbench/ after the build:\n{dirty}")
    return repo, imported, filled


def budgeted(ctx: R.Context, sides: list, rounds: int, warmup: int) -> list[list[float]]:
    """As run.py's side_by_side, within a time budget per row (QUICK_BUDGET_S, FULL_BUDGET_S): after the warm-up
    rounds, the first measured round tells what one costs, then as many more as fit (at most `rounds` in all, at
    least one). On a workbench whose cost grows with history the slow rows get fewer samples (their detail says
    n=) instead of stretching the quick bench past its 3 minutes; once they are fast, they get every round."""
    budget = QUICK_BUDGET_S if ctx.settings.quick else FULL_BUDGET_S
    for _ in range(warmup):
        for side in sides:
            side()
    start = time.perf_counter()
    first = [side() for side in sides]
    per_round = max(time.perf_counter() - start, 1e-6)
    rounds = max(1, min(rounds, 1 + int(budget / per_round)))
    rest = R.side_by_side(sides, rounds - 1, 0) if rounds > 1 else [[] for _ in sides]
    return [[one, *more] for one, more in zip(first, rest, strict=True)]


def limit(name: str, label: str, samples: list[float], small: list[float] | None = None) -> R.Result:
    """An absolute bar (seconds, at most), with the small workbench's median beside it for information."""
    med = statistics.median(samples)
    detail = f"n={len(samples)}, IQR {R.spread(samples):.0%}"
    if small:
        detail += f"; at {SMALL_TASKS} tasks / {SMALL_EVENTS} events {R.fmt_s(statistics.median(small))}"
    res = R.Result(name, "limit", med, R.BARS[name], "s", label, med, n=len(samples), detail=detail)
    if small:
        res.extra["small_median_ms"] = round(statistics.median(small) * 1000, 3)
    return res


def objects_bytes(repo: Path) -> int:
    """Bytes under .git/objects (loose objects and packs): what git keeps until a gc packs it."""
    total = 0
    for path in (repo / ".git" / "objects").rglob("*"):
        if path.is_file() and path.parent.name != "info":
            total += path.stat().st_size
    return total


def journalled_commits(repo: Path) -> int:
    """The wb commits whose objects are still loose, waiting for wb's next pack run (.git/wb/objects.journal)."""
    try:
        return (repo / ".git" / "wb" / "objects.journal").read_bytes().count(b" commit ")
    except FileNotFoundError:
        return 0


def api_sides(ctx: R.Context, repos: list[Path], batch: int) -> tuple[list[subprocess.Popen[str]], list]:
    """One long-lived `_scale_worker.py add` process per repository, and for each a side: `batch` add_task
    calls, returning the mean seconds per call. `singles(worker, n)` times `n` calls one by one."""
    workers, sides = [], []
    for repo in repos:
        worker = subprocess.Popen([R.PY, str(R.HERE / "_scale_worker.py"), "add", str(repo)], cwd=repo,
                                  env=ctx.runner.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        workers.append(worker)
        if (worker.stdout.readline().strip() if worker.stdout else "") != "ready":
            raise R.BenchError("the add_task worker did not start")

        def side(worker: subprocess.Popen[str] = worker) -> float:
            return sum(singles(worker, batch)) / batch

        sides.append(side)
    return workers, sides


def singles(worker: subprocess.Popen[str], count: int) -> list[float]:
    """The seconds each of `count` consecutive add_task calls of `worker` took."""
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(f"{count}\n")
    worker.stdin.flush()
    line = worker.stdout.readline().strip()
    if not line or line.startswith("error"):
        raise R.BenchError(f"add_task worker: {line or 'died'}")
    return [float(t) for t in line.split()]


def end_workers(workers: list[subprocess.Popen[str]]) -> None:
    for worker in workers:
        try:
            if worker.stdin:
                worker.stdin.write("quit\n")
                worker.stdin.close()
        except OSError:  # it died already: its error was raised
            pass
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def api_rows(ctx: R.Context, prefix: str, small: Path, big: Path) -> list[R.Result]:
    """`scale.<prefix>api_add_task` (big vs small, the mean of a batch per sample) and its p99 row: a run of
    consecutive single writes on the big workbench, their p99 against their median."""
    s = ctx.settings
    out: list[R.Result] = []
    name = f"scale.{prefix}api_add_task"
    workers, sides = api_sides(ctx, [small, big], s.n(10, 3))
    try:
        if R.wanted(ctx, name):
            b, a = budgeted(ctx, sides, s.n(10, 4), 1)
            out.append(R.ratio(name, f"{BIG_TASKS:,} tasks", a, f"{SMALL_TASKS} tasks", b))
        if R.wanted(ctx, name + "_p99"):
            singles(workers[1], 2)  # warm: the worker's first write loads what the rest reuse
            took = singles(workers[1], s.n(P99_WRITES_FULL, P99_WRITES_QUICK))
            med, p99 = statistics.median(took), statistics.quantiles(took, n=100)[98]
            over = sum(t > 3 * med for t in took)
            res = R.Result(name + "_p99", "ratio", p99 / med, R.BARS[name + "_p99"], "x", "p99", p99, "median",
                           med, n=len(took), detail=f"{len(took)} consecutive add_task at {BIG_TASKS:,} tasks, "
                                                    f"largest {R.fmt_s(max(took))}, {over} over 3x the median")
            res.extra.update({"max_ms": round(max(took) * 1000, 3), "over_3x": over})
            out.append(res)
    finally:
        end_workers(workers)
    return out


def sqlite_copy(ctx: R.Context, repo: Path, name: str) -> Path:
    """A new repository holding `repo`'s workbench on the SQLite backend (`wb export`, then `wb import --backend
    sqlite`: the same events; the database in its git directory)."""
    dump = ctx.tmp / f"{name}.dump"
    ctx.runner.run([ctx.wb, "export", str(dump)], repo, timeout=600)
    copy = ctx.git_repo(name)
    ctx.runner.run([ctx.wb, "import", str(dump), "--backend", "sqlite"], copy, timeout=600)
    return copy


def bench_scale(ctx: R.Context) -> list[R.Result]:
    s = ctx.settings
    r = ctx.runner
    out: list[R.Result] = []
    big, imported, filled = build(ctx, "scale-big", BIG_TASKS, BIG_DONE, BIG_EVENTS)
    small, _, _ = build(ctx, "scale-small", SMALL_TASKS, SMALL_DONE, SMALL_EVENTS)
    imports = [imported]
    for k in range(s.n(4, 2)):  # more samples: the same import into a fresh workbench each time
        fresh = ctx.git_repo(f"scale-import-{k}")
        r.run([ctx.wb, "init"], fresh)
        start = time.perf_counter()
        r.run([ctx.wb, "task", "import", str(ctx.tmp / "scale-big-tasks.md")], fresh, timeout=600)
        imports.append(time.perf_counter() - start)
    res = limit("scale.import", f"wb task import of {BIG_TASKS:,} tasks", imports)
    res.detail += f"; {BIG_DONE:,} of them done, one commit each import"
    out.append(res)
    out.append(R.Result("scale.record_events", "info", filled, None, "s", detail=(
        f"one Bench.record_events call of {BIG_EVENTS - BIG_TASKS:,}-odd events, one commit: "
        f"{R.fmt_s(filled)}")))
    big_label, small_label = f"{BIG_TASKS:,} tasks", f"{SMALL_TASKS} tasks"
    sqlite_pair = None  # moved now, before the rows below add to the files workbenches
    if any(R.wanted(ctx, f"scale.sqlite_api_add_task{p}") for p in ("", "_p99")):
        sqlite_pair = (sqlite_copy(ctx, small, "scale-sqlite-small"), sqlite_copy(ctx, big, "scale-sqlite-big"))

    if R.wanted(ctx, "scale.cli_mutation"):
        add = [ctx.wb, "task", "add", "X"]
        b, a = budgeted(ctx, [r.timer(add, small), r.timer(add, big)], s.n(20, 6), s.n(2, 1))
        out.append(R.ratio("scale.cli_mutation", big_label, a, small_label, b))

    if any(R.wanted(ctx, f"scale.api_add_task{p}") for p in ("", "_p99")):
        # on copies: the p99 row's thousand writes would otherwise grow the board the rows below measure
        copies = []
        for repo in (small, big):
            copies.append(ctx.tmp / f"{repo.name}-api")
            shutil.copytree(repo, copies[-1], symlinks=True)
        # a copy's files all changed just now: for git/blobstat.py's racy window (RACY_NS, 2 s) a commit hashes
        # every file of .workbench/ again (sealed segments, archive) rather than trust a stat it took in the same
        # moment — ~100 ms a write at 5,000 tasks, the first ~17 writes of CI7's row (6.85x). What the row
        # measures is a long-lived process's write, so the copies age past that window first (untimed)
        time.sleep(RACY_WAIT_S)
        out.extend(api_rows(ctx, "", *copies))

    if sqlite_pair is not None:
        out.extend(api_rows(ctx, "sqlite_", *sqlite_pair))

    if R.wanted(ctx, "scale.handoff"):
        b, a = budgeted(ctx, [r.timer([ctx.wb, "handoff"], small), r.timer([ctx.wb, "handoff"], big)],
                        s.n(10, 4), 1)  # the warm-up writes the packet; the rounds find it unchanged
        out.append(R.ratio("scale.handoff", big_label, a, small_label, b))

    if R.wanted(ctx, "scale.log_type"):
        b, a = budgeted(ctx, [r.timer([ctx.wb, "log", "--type", "task"], small),
                              r.timer([ctx.wb, "log", "--type", "task"], big)], s.n(10, 4), 0)
        out.append(R.ratio("scale.log_type", big_label, a, small_label, b))

    if R.wanted(ctx, "scale.git_log_p"):  # the last five commits are wb's (the rows above made them)
        plain = r.timer(["git", "log", "-p", "-5", "--no-textconv"], big)
        view = r.timer(["git", "log", "-p", "-5"], big)
        p, v = budgeted(ctx, [plain, view], s.n(5, 3), 0)
        out.append(R.ratio("scale.git_log_p", "textconv", v, "--no-textconv", p))

    for name, argv in (("scale.validate", [ctx.wb, "validate"]), ("scale.doctor", [ctx.wb, "doctor"])):
        if R.wanted(ctx, name):
            # the first check on a machine reads every sealed segment once (then trusts each by its digest):
            # timed apart, shown beside the bar, which is for every check after it
            first = r.timer(argv, big)()
            b, a = budgeted(ctx, [r.timer(argv, small), r.timer(argv, big)], s.n(10, 4), 0)
            res = limit(name, f"{' '.join(argv[1:])} at {BIG_EVENTS:,} events", a, b)
            res.detail += f"; the first on this machine {R.fmt_s(first)}"
            out.append(res)

    if R.wanted(ctx, "scale.git_bytes"):
        # wb folds its loose objects into its own packs every git.pack_every commits (docs/git.md): one add
        # leaves ~7 KB of loose copies and the add that packs takes them back. The honest figure is the net
        # bytes from one pack run to the next (a window of `every` adds, no wb loose object at either end), per
        # add. Loose copies of a growing file at both ends of an unaligned window would count its growth again.
        notes = big / "NOTES.txt"
        notes.write_text("a file of the user's, one line per plain commit\n")
        ctx.git(big, "add", "NOTES.txt")
        ctx.git(big, "commit", "-q", "-m", "notes")
        wb_add = [ctx.wb, "task", "add", "X"]
        # warm-up: to the end of wb's second pack run. The first packs the whole history the build made (its log
        # segments: over 1 MiB), the second seals that pack and starts the recent one, storing each file whole
        # once — as every seal does (each 4,096 objects or 1 MiB, ~700 adds: a few KB, up to ~70 KB with the log's
        # tail near its 512 KiB, until two sealed packs merge and those copies become deltas): the steady state
        runs = 0
        for _ in range(3 * GIT_PACK_EVERY + 1):
            r.run(wb_add, big)
            runs += journalled_commits(big) == 0
            if runs == 2:
                break
        else:
            raise R.BenchError("wb never packed its objects (is git.pack_every the default?)")
        windows, git_bytes = [], []
        for w in range(s.n(3, 1)):
            net = 0
            for i in range(GIT_PACK_EVERY):
                before = objects_bytes(big)
                r.run(wb_add, big)
                net += objects_bytes(big) - before
                before = objects_bytes(big)
                with notes.open("a") as f:
                    f.write(f"line {w}.{i}\n")
                ctx.git(big, "commit", "-q", "-am", f"a one-line change {w}.{i}")
                git_bytes.append(objects_bytes(big) - before)
            if journalled_commits(big):
                raise R.BenchError("a window of wb adds did not end with wb's pack run")
            windows.append(net / GIT_PACK_EVERY)
        mw, mg = statistics.median(windows), statistics.median(git_bytes)
        res = R.Result("scale.git_bytes", "ratio", mw / mg, R.BARS["scale.git_bytes"], "x", n=len(windows),
                       detail=f"wb task add {mw:,.0f} B / plain commit {mg:,.0f} B of new objects, before gc (wb: "
                              f"net bytes from one of its pack runs to the next, {GIT_PACK_EVERY} adds, per add, "
                              f"median of {len(windows)}; plain: median of {len(git_bytes)} commits)")
        res.extra.update({"wb_bytes": mw, "git_bytes": mg})
        out.append(res)
    return out
