"""The `cost` group of bench/run.py (issue 33): what a user meets first — a long task list, one `wb task add`
against git's own cost, the first command after a clone (no `<git dir>/wb/cache`), the SQLite backend — each row
a ratio of medians measured side by side in this run (or, where the issue asks seconds or MiB, beside them).

  cost.task_list        `wb task list` at 2,000 tasks, 1,000 waiting on a dependency, vs python -c pass (≤ 3×)
  cost.task_list_json   the same with --json                                                     (≤ 3×)
  cost.task_add         one `wb task add X` vs `python -c pass` then a plain `git commit` of a one-line change in
                        another repository ("python start + one git commit")                     (≤ 2×)
  cost.create_growth    `wb task add X` on that 2,000-task board vs on an empty one               (≤ 1.1×)
  cost.cold_<verb>      at the scale group's 5,000 tasks / 50,000 events (bench/scale.py; --quick: 1,000 /
                        10,000): `wb task add`, `wb validate`, `wb doctor`, `wb replay --verify` with
                        `<git dir>/wb/cache` removed first (as after a clone) vs the same with the cache warm
                        (as the commands before it left it; `wb replay` keeps no record of its own and folds
                        the whole log either way, so its warm side is the caches of config, state.md and
                        board.json only, and its row says so)                                    (≤ 1.5×)
  cost.cold_<verb>_floor  for task add, validate and doctor, for information (no bar): the warm time plus the
                        leanest read, in-process, of what the first command must check that it has never seen —
                        for validate and doctor one parse of every event of the log with the duplicate-key check,
                        the schema's quick yes for each and each line's sha256 for the hash chain (one parse per
                        file: quicker than validate's own); for task add, the sealed segments against their
                        digests and one parse of the events a fold reads (the hand-edit check), not folding
                        them — over the warm time: where it is over 1.5×, so is any cold run (its detail gives
                        the cold run over warm + that read)
  cost.pulled_task_add  on that workbench, `wb task add` right after a fast-forward `git pull` that brings
                        another clone's `wb task add` (the pull, and the other clone's write, untimed) vs the
                        same with nothing pulled: the pulled board.json is not what wb last wrote here, so the
                        write folds the log to judge it (store/keptfold.py keeps the sealed log's fold) (≤ 1.5×)
  cost.cold_git_log_p   on that workbench, `git log -p -5` through wb's textconv with git's textconv cache
                        cold as in a fresh clone once its first wb command ran: refs/notes/textconv/*, wb's own
                        `<git dir>/wb/textconv`, wb's driver config and launcher removed, then `wb status`
                        (untimed: it registers the drivers and fills git's textconv cache of the recent
                        commits, as a clone's first command does) vs `git log -p -5 --no-textconv`
                        (≤ 3×; scale.git_log_p is the warm one)
  cost.sqlite_validate  `wb validate` on SQLite vs on files, the same 50,000 note events (--quick: 10,000)
  cost.sqlite_doctor    `wb doctor` likewise                                                     (≤ 1× each)
  cost.sqlite_diff      `wb diff @-1` on that SQLite workbench: seconds (≤ 0.2 s) and its peak memory beside
                        it (cost.sqlite_diff_mib, ≤ 60 MiB)
  cost.peak_first_add  peak memory of the first `wb task add` after that build, in MiB            (≤ 64)
  cost.peak_first_doctor  of the first `wb doctor` after it                                       (≤ 64)
  cost.peak_log_all     of `wb log --all` on it                                                  (≤ 64)
The first MCP `tools/call` is the mcp group's row (mcp.first_call_*: ≤ 25× the floor, ≤ 0.3 s).
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

import common as R  # bench/common.py: what every bench shares (this module imports no other bench's)
import scale

LIST_TASKS = 2_000  # half of them waiting on one of the other half
SQLITE_EVENTS, SQLITE_QUICK = 50_000, 10_000
COLD_FULL = (scale.BIG_TASKS, scale.BIG_DONE, scale.BIG_EVENTS)
COLD_QUICK = (1_000, 960, 10_000)
R.BARS.update({
    "cost.task_list": 3.0,
    "cost.task_list_json": 3.0,
    "cost.task_add": 2.0,
    "cost.create_growth": 1.1,
    "cost.cold_task_add": 1.5,
    "cost.cold_validate": 1.5,
    "cost.cold_doctor": 1.5,
    "cost.cold_replay": 1.5,
    "cost.cold_git_log_p": 3.0,
    "cost.pulled_task_add": 1.5,
    "cost.sqlite_validate": 1.0,
    "cost.sqlite_doctor": 1.0,
    "cost.sqlite_diff": 0.2,  # seconds, at most
    "cost.sqlite_diff_mib": 60.0,  # MiB of peak memory, at most
    "cost.peak_first_add": 64.0,  # MiB, at most
    "cost.peak_first_doctor": 64.0,
    "cost.peak_log_all": 64.0,
})


def list_board(ctx: R.Context) -> Path:
    """A workbench of LIST_TASKS tasks by one `wb task import`: the second half each waits on one of the first."""
    repo = ctx.git_repo("cost-list")
    ctx.runner.run([ctx.wb, "init"], repo)
    half = LIST_TASKS // 2
    tasks = [{"title": f"list task {i}", "id": f"T-{i:03d}"} | ({"depends_on": [f"T-{i - half:03d}"]} if i > half
                                                                 else {}) for i in range(1, LIST_TASKS + 1)]
    source = ctx.tmp / "cost-list.json"
    source.write_text(json.dumps(tasks))
    out = ctx.runner.run([ctx.wb, "task", "import", str(source)], repo, timeout=600).stdout.decode()
    if f"imported {LIST_TASKS} tasks" not in out:
        raise R.BenchError(f"`wb task import` said {out.strip()!r}")
    return repo


def without_cache(ctx: R.Context, argv: list[str], repo: Path) -> Callable[[], float]:
    """`argv` timed after removing `<git dir>/wb/cache` (untimed): the first command after a clone."""
    timed = ctx.runner.timer(argv, repo)

    def once() -> float:
        shutil.rmtree(repo / ".git" / "wb" / "cache", ignore_errors=True)
        return timed()

    return once


def after_a_pull(ctx: R.Context, argv: list[str], repo: Path) -> Callable[[], float]:
    """`argv` timed right after a fast-forward pull (untimed) of another clone's `wb task add` (untimed): the
    other clone first pulls `repo`'s own commits, so each round's pull is a fast-forward."""
    other = ctx.tmp / f"{repo.name}-other"
    if not other.exists():
        ctx.git(ctx.tmp, "clone", "-q", str(repo), str(other))
    timed = ctx.runner.timer(argv, repo)
    n = [0]

    def once() -> float:
        n[0] += 1
        ctx.git(other, "pull", "-q", "--ff-only", str(repo), "HEAD")
        ctx.runner.run([ctx.wb, "task", "add", f"from the other clone {n[0]}"], other)
        ctx.git(repo, "pull", "-q", "--ff-only", str(other), "HEAD")
        return timed()

    return once


def without_textconv_cache(ctx: R.Context, argv: list[str], repo: Path) -> Callable[[], float]:
    """`argv` timed in a fresh clone's state once its first wb command has run: untimed first, what a clone has
    not — git's textconv cache (refs/notes/textconv/*), wb's own (`<git dir>/wb/textconv`), wb's driver config
    (`diff.wb-*`, `merge.wb-*`) and its launcher (`<git dir>/wb/driver`) — removed, then one `wb status` run,
    which registers the drivers as a clone's first command does and, doing so, fills git's textconv cache for
    the recent commits (review/textconv_notes.py): a clone's user runs wb before git knows the drivers at all."""
    timed = ctx.runner.timer(argv, repo)

    def once() -> float:
        refs = ctx.git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/textconv/").split()
        for ref in refs:
            ctx.git(repo, "update-ref", "-d", ref)
        shutil.rmtree(repo / ".git" / "wb" / "textconv", ignore_errors=True)
        (repo / ".git" / "wb" / "driver").unlink(missing_ok=True)
        sections = {key.rsplit(".", 1)[0] for key in ctx.git(repo, "config", "--local", "--name-only",
                                                             "--get-regexp", r"^(diff|merge)\.wb-").split()}
        for section in sections:
            ctx.git(repo, "config", "--local", "--remove-section", section)
        ctx.runner.run([ctx.wb, "status"], repo)
        return timed()

    return once


# Runs argv[1:] and prints its seconds and ru_maxrss (KiB). Linux counts into a child's ru_maxrss the resident
# size of the process it was forked from (bench/run.py's own, 35 MiB or more once a board is built), so the
# command is started from this small interpreter and only its own peak, or this launcher's, is read.
_PEAK_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


# Prints the seconds of the quickest of 5 checks of every line of the log (sealed segments and events.jsonl) as
# lean as they come: one parse per file with the duplicate-key check `wb validate` keeps (json's C decoder over
# `[line,line,...]`, quicker than validate's own line-by-line parse, which must tell each line's object apart),
# the schema's quick yes for each event (model/eventcheck.py) and each line's sha256 for the hash chain.
_PARSE_FLOOR = """
import sys, time
from pathlib import Path
import hashlib
from workbench.model.eventcheck import surely_valid
from workbench.model.jsonl import loads_unique
wb = Path(sys.argv[1])
data = [f.read_bytes() for f in sorted((wb / "log").glob("*.jsonl"))] + [(wb / "events.jsonl").read_bytes()]
batches = [b"[" + raw.rstrip(b"\\n").replace(b"\\n", b",") + b"]" for raw in data]
lines = [raw.split(b"\\n")[:-1] for raw in data]
sha256 = hashlib.sha256
best = float("inf")
for _ in range(5):
    start = time.perf_counter()
    events = [e for batch in batches for e in loads_unique(batch)]
    checked = sum(map(surely_valid, events))
    chain = [sha256(line).hexdigest() for part in lines for line in part]
    best = min(best, time.perf_counter() - start)
print(best, len(events))
"""


# Prints the seconds of the quickest of 5 reads of what a first write's hand-edit check must read of the sealed log
# to fold it (contract: a snapshot that differs from the fold of the log is a hand edit, whoever committed it), as
# lean as they come: each segment's bytes against its sealed digest, the stamps of its lines in one scan, and the
# events a reducer reads in one parse per segment with the duplicate-key check. Folding them is not counted.
_FOLD_FLOOR = """
import sys, time, hashlib
from pathlib import Path
from workbench.model import reducer
from workbench.model.jsonl import loads_unique, stamps
from workbench.model.segments import header_of
wb = Path(sys.argv[1])
raws = [(f.name, f.read_bytes()) for f in sorted((wb / "log").glob("*.jsonl"))]
kinds = {}
best = float("inf")
for _ in range(5):
    start = time.perf_counter()
    events = 0
    for name, raw in raws:
        body = raw[header_of(raw, name).size:]
        hashlib.sha256(body).hexdigest()
        lines = body.split(b"\\n")[:-1]
        for kind in {k for _s, _t, k in stamps(body)} - kinds.keys():
            kinds[kind] = reducer.stamp_only(kind.decode())
        read = [line for line, (_s, _t, k) in zip(lines, stamps(body)) if not kinds[k]]
        events += len(loads_unique(b"[" + b",".join(read) + b"]"))
    best = min(best, time.perf_counter() - start)
print(best, events)
"""


def parse_floor(ctx: R.Context, big: Path, name: str, warm: float, cold: float) -> R.Result:
    """cost.cold_<name>_floor: (warm + the leanest read of what a first run must check) / warm, for information;
    its detail says how far the cold run itself is from it."""
    snippet = _FOLD_FLOOR if name == "task_add" else _PARSE_FLOOR
    out = ctx.runner.run([R.PY, "-c", snippet, str(big / ".workbench")], big).stdout.decode().split()
    parse, events = float(out[0]), int(out[1])
    res = R.Result(f"cost.cold_{name}_floor", "info", (warm + parse) / warm, None, "x",
                   "warm + reading the sealed log" if name == "task_add" else "warm + checking the log",
                   warm + parse, "warm", warm, n=5)
    what = (f"sealed segments hashed and the {events:,} events a fold reads parsed" if name == "task_add" else
            f"{events:,} events parsed, schema- and chain-checked")
    res.detail = (f"{what} in {parse * 1000:.0f} ms, in-process; cost.cold_{name} is {cold / (warm + parse):.2f}x "
                  f"this (its bar, 1.5x warm, is under it wherever this row is over 1.5x)")
    return res


def peak(ctx: R.Context, argv: list[str], repo: Path) -> tuple[float, float]:
    """Seconds and peak resident MiB of one run of `argv` (its output discarded)."""
    proc = subprocess.run([R.PY, "-c", _PEAK_LAUNCHER, *map(str, argv)], cwd=repo, env=ctx.runner.env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    try:
        line = proc.stdout.strip().splitlines()[-1]
        elapsed, maxrss, code = line.split()
    except (IndexError, ValueError):
        raise R.BenchError(f"`{' '.join(map(str, argv))}` could not be measured: {proc.stderr.strip()[-600:]}") \
            from None
    if int(code) != 0:
        raise R.BenchError(f"`{' '.join(map(str, argv))}` exited {code}: {proc.stderr.strip()[-600:]}")
    return float(elapsed), int(maxrss) / 1024  # KiB on Linux


def peak_rows(ctx: R.Context, big: Path, names: list[str], size: str) -> list[R.Result]:
    """cost.peak_*: the peak resident memory of the first `wb task add` and the first `wb doctor` after the
    build (each on its own copy of the workbench as the build left it: a first run happens once) and of
    `wb log --all`, in MiB (≤ 64 each); the seconds beside them."""
    out: list[R.Result] = []
    argvs = {"first_add": [ctx.wb, "task", "add", "X"], "first_doctor": [ctx.wb, "doctor"],
             "log_all": [ctx.wb, "log", "--all"]}
    for name in names:
        runs = []
        for i in range(ctx.settings.n(3, 1)):
            repo = big
            if name != "log_all":
                repo = ctx.tmp / f"{big.name}-{name}-{i}"
                shutil.copytree(big, repo, symlinks=True)
            runs.append(peak(ctx, argvs[name], repo))
        mib = max(m for _, m in runs)
        out.append(R.Result(f"cost.peak_{name}", "limit", mib, R.BARS[f"cost.peak_{name}"], "MiB",
                            f"{' '.join(argvs[name][1:])}: peak memory", None, n=len(runs),
                            detail=f"the largest of {len(runs)} runs, {size}, "
                                   f"{statistics.median(t for t, _ in runs):.2f} s"))
    return out


def bench_cost(ctx: R.Context) -> list[R.Result]:
    s = ctx.settings
    r = ctx.runner
    out: list[R.Result] = []
    floor = r.timer([R.PY, "-c", "pass"], ctx.tmp)

    if R.wanted(ctx, "cost.task_list") or R.wanted(ctx, "cost.task_list_json") or R.wanted(ctx, "cost.create_growth"):
        board = list_board(ctx)
        f, a, b = R.side_by_side([floor, r.timer([ctx.wb, "task", "list"], board),
                                  r.timer([ctx.wb, "task", "list", "--json"], board)], s.n(15, 5), s.n(2, 1))
        label = f"{LIST_TASKS:,} tasks"
        out += [R.ratio("cost.task_list", label, a, "floor", f), R.ratio("cost.task_list_json", label, b, "floor", f)]
        empty = ctx.git_repo("cost-empty")
        r.run([ctx.wb, "init"], empty)
        add = [ctx.wb, "task", "add", "X"]
        e, g = R.side_by_side([r.timer(add, empty), r.timer(add, board)], s.n(15, 5), s.n(2, 1))
        out.append(R.ratio("cost.create_growth", label, g, "empty board", e))

    if R.wanted(ctx, "cost.task_add"):
        repo = ctx.workbench("cost-add")
        plain = ctx.git_repo("cost-plain")
        (plain / "NOTES.txt").write_text("one line per commit\n")
        ctx.git(plain, "add", "NOTES.txt")
        ctx.git(plain, "commit", "-q", "-m", "notes")
        git_floor = r.timer(["sh", "-c", f"'{R.PY}' -c pass && echo x >> NOTES.txt && git commit -q -am x"], plain)
        g, w = R.side_by_side([git_floor, r.timer([ctx.wb, "task", "add", "X"], repo)], s.n(20, 6), s.n(2, 1))
        out.append(R.ratio("cost.task_add", "wb task add", w, "python start + git commit", g))

    cold = [n for n in ("task_add", "validate", "doctor", "replay") if R.wanted(ctx, f"cost.cold_{n}")]
    peaks = [n for n in ("first_add", "first_doctor", "log_all") if R.wanted(ctx, f"cost.peak_{n}")]
    log_p = R.wanted(ctx, "cost.cold_git_log_p")
    pulled = R.wanted(ctx, "cost.pulled_task_add")
    if cold or peaks or log_p or pulled:
        tasks, done, events = COLD_QUICK if s.quick else COLD_FULL
        big, _, _ = scale.build(ctx, f"cost-cold-{events}", tasks, done, events)
        size = f"{tasks:,} tasks / {events:,} events"
        out += peak_rows(ctx, big, peaks, size)
        for name in cold:
            argv = {"task_add": [ctx.wb, "task", "add", "X"], "validate": [ctx.wb, "validate"],
                    "doctor": [ctx.wb, "doctor"], "replay": [ctx.wb, "replay", "--verify"]}[name]
            w, c = scale.budgeted(ctx, [r.timer(argv, big), without_cache(ctx, argv, big)], s.n(7, 3), 1)
            res = R.ratio(f"cost.cold_{name}", "no wb/cache", c, "warm", w)
            res.detail += f", {size}"
            if name == "replay":
                res.detail += "; warm: the caches of config, state.md and board.json (replay folds the whole log " \
                              "either way: it keeps no record of its own)"
            out.append(res)
            if name != "replay":
                out.append(parse_floor(ctx, big, name, statistics.median(w), statistics.median(c)))
        if pulled:
            argv = [ctx.wb, "task", "add", "X"]
            w, a = scale.budgeted(ctx, [r.timer(argv, big), after_a_pull(ctx, argv, big)], s.n(7, 3), 1)
            res = R.ratio("cost.pulled_task_add", "after a pull", a, "warm", w)
            res.detail += f", {size}"
            out.append(res)
        if log_p:  # the last five commits are wb's: the cold task adds above made them
            plain = r.timer(["git", "log", "-p", "-5", "--no-textconv"], big)
            view = without_textconv_cache(ctx, ["git", "log", "-p", "-5"], big)
            p, v = scale.budgeted(ctx, [plain, view], s.n(7, 3), 0)  # each round of the cold side is a first
            res = R.ratio("cost.cold_git_log_p", "textconv, cache cold", v, "--no-textconv", p)
            res.detail += f", {size}"
            out.append(res)

    sqlite_rows = [n for n in ("validate", "doctor", "diff") if R.wanted(ctx, f"cost.sqlite_{n}")]
    if sqlite_rows:
        events = s.n(SQLITE_EVENTS, SQLITE_QUICK)
        files = ctx.workbench(f"cost-files-{events}", "note", events)
        dump = ctx.tmp / f"cost-{events}.dump"
        r.run([ctx.wb, "export", str(dump)], files, timeout=900)
        db = ctx.tmp / f"cost-sqlite-{events}"
        db.mkdir()
        r.run([ctx.wb, "import", str(dump), "--backend", "sqlite", "--no-git"], db, timeout=900)
        for name in ("validate", "doctor"):
            if name in sqlite_rows:
                argv = [ctx.wb, name]
                f, q = scale.budgeted(ctx, [r.timer(argv, files), r.timer(argv, db)], s.n(7, 3), 1)
                res = R.ratio(f"cost.sqlite_{name}", "sqlite", q, "files", f)
                res.detail += f", {events:,} events"
                out.append(res)
        if "diff" in sqlite_rows:
            runs = [peak(ctx, [ctx.wb, "diff", "@-1"], db) for _ in range(s.n(7, 3))]
            secs, mib = statistics.median(t for t, _ in runs), max(m for _, m in runs)
            out.append(R.Result("cost.sqlite_diff", "limit", secs, R.BARS["cost.sqlite_diff"], "s",
                                f"wb diff @-1 at {events:,} events", secs, n=len(runs),
                                detail=f"n={len(runs)}, peak {mib:.0f} MiB"))
            out.append(R.Result("cost.sqlite_diff_mib", "limit", mib,
                                R.BARS["cost.sqlite_diff_mib"], "MiB", "peak memory", None, n=len(runs),
                                detail=f"the largest of {len(runs)} runs' peak resident memory"))
    return out
