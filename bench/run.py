#!/usr/bin/env python3
"""wb benchmarks: every quality bar of CONTRACT.md §8, each a ratio of two medians measured side by side.

    python bench/run.py [--quick] [--only NAME[,NAME…]] [--strict] [--keep]

Run it with the interpreter wb is installed in (e.g. `.venv/bin/python bench/run.py`): the floor is that
interpreter (`python -c pass`) and `wb` is the console script next to it. The machine may be noisy and
shared, so no figure is an absolute timing: the two sides of each ratio run interleaved, round by round
(their order alternating), in the same run, and the ratio is of their medians. Two bars are absolute rates
(API mutations/s, replay events/s); the API one is also given as a ratio to the git floor.

Benches (for --only: a group name or a full result name):
  startup       wb --version, wb status            vs python -c pass           (≤ 5×, ≤ 4×)
  cli_mutation  wb task add X (with its commit)     vs python -c pass           (≤ 10×)
  api_mutation  Bench.add_task / Bench.note in one process: ≥ 100 committed mutations/s, and per mutation
                ≤ 1.5× a shell loop of `git add FILE && git commit -q -m x` in another repo
  history       wb status with 100,000 events vs with 10 (≤ 1.3×); `history.status` uses note.add events
                (the decision log in state.md grows with them), `history.status_state` uses state.set
                events (only the log grows); `history.mutation` (full runs only) is wb task add, for
                information, no bar
  board         wb task add on a 5,000-task board vs on a 10-task board (≤ 2×)
  replay        wb replay --verify --json on the 100,000-event logs (≥ 50,000 events/s, as wb reports it;
                the wall-clock rate of the whole command is printed beside it)
  hooks         wb hook claude-code for a PreToolUse and a PostToolUse payload (stdin piped), spooled in the
                git directory, vs python -c pass (≤ 2× each); the spool is folded by a Stop afterwards, untimed
  mcp           `wb mcp`: spawn to the answered `initialize` vs python -c pass (≤ 10×; issue 13 asks
                ≤ 0.5 s, the median is printed beside it); `mcp.tools_list`, spawn to the answered
                `tools/list`, for information; `mcp.first_answer_legacy|auto`, the official SDK client
                (bench/mcp_client.py) in each mode, spawn to the first answer it can use (`tools/list`
                after `initialize`, or `server/discover`) vs spawning python -c pass from that client
                (≤ 10×; issue 20 asks ≤ 0.3 s, the median is printed beside it with its verdict), and
                `mcp.first_call_*`, spawn to the first `tools/call` answered (the SDK loaded), for
                information; `mcp.first_call_*`, spawn to the first `tools/call` answered (issue 33: ≤ 25× the
                floor, ≤ 0.3 s, the median printed beside it with its verdict). Skipped when the MCP SDK is not
                installed.
  sync          wb sync with nothing to do, and with 100 events another clone pushed to merge with one of
                ours, vs `git fetch && git push` of the same ref, to a bare remote on the same disk
                (information, no bar)
  scale         issue 20 (bench/scale.py): a 5,000-task (4,800 done) / 50,000-event workbench built by one
                `wb task import` and one `Bench.record_events`, against a 50-task one: the import (≤ 3 s),
                wb task add and Bench.add_task (≤ 1.25×; issue 33: the p99 of single Bench.add_task writes ≤ 3×
                their median, and Bench.add_task on SQLite ≤ 1.5×, its p99 ≤ 3×), wb handoff and wb log --type
                task (≤ 1.5×), git log -p -5 with wb's textconv vs --no-textconv (≤ 1.5×), wb validate and wb doctor
                (≤ 1 s), the bytes a mutation adds to .git vs a plain one-line commit (≤ 2×)
  writers       issue 20 (bench/writers.py, skipped while it does not exist): 20 concurrent writers × 10 adds
  cost          issue 33 (bench/cost.py): `wb task list` at 2,000 tasks vs the floor (≤ 3×), one `wb task add`
                vs python start + one git commit (≤ 2×), a create at 2,000 tasks vs 0 (≤ 1.1×), the first
                task add / validate / doctor / replay without `<git dir>/wb/cache` vs warm (≤ 1.5×), `git log -p
                -5` with git's textconv cache cold vs --no-textconv (≤ 3×), SQLite
                validate / doctor vs files (≤ 1×), SQLite `diff @-1` (≤ 0.2 s, ≤ 60 MiB), the peak memory of
                the first task add and the first doctor after a build, and of `wb log --all` (≤ 64 MiB each)
  web           issue 21 (bench/web.py): `wb serve`'s board of 1,000 tasks painted in headless Chromium from
                a fresh page load (≤ 1 s), and against 10 tasks (information); skipped without a browser
                (tools/browser.sh)

Each result prints one line; the last line is `BENCH_SUMMARY {json}`. Exit status: 0 even when a bar is
missed (1 with --strict), 1 when a bench could not run. Stdlib only; everything happens in a temp dir that
is removed afterwards (--keep leaves it, for profiling).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from common import (
    BARS,
    BOARD_SMALL,
    BOARD_TASKS,
    GROUPS,
    HERE,
    HISTORY_EVENTS,
    HISTORY_SMALL,
    ONLY,
    PY,
    BenchError,
    Context,
    Result,
    Settings,
    fmt_s,
    ratio,
    side_by_side,
    wanted,
)

# -- the benches ----------------------------------------------------------------------------------------


def bench_startup(ctx: Context) -> list[Result]:
    s = ctx.settings
    repo = ctx.workbench("startup", "task", 12)  # a workbench with a few tasks on its board
    r = ctx.runner
    floor = r.timer([PY, "-c", "pass"], repo)
    version = r.timer([ctx.wb, "--version"], repo)
    status = r.timer([ctx.wb, "status"], repo)
    f, v, st = side_by_side([floor, version, status], s.n(40, 10), s.n(3, 2))
    return [ratio("startup.version", "wb", v, "floor", f), ratio("startup.status", "wb", st, "floor", f)]


def bench_cli_mutation(ctx: Context) -> list[Result]:
    s = ctx.settings
    repo = ctx.workbench("cli")
    r = ctx.runner
    floor = r.timer([PY, "-c", "pass"], repo)
    add = r.timer([ctx.wb, "task", "add", "X"], repo)
    rounds, warmup = s.n(30, 8), s.n(2, 1)
    before = ctx.commits(repo)
    f, a = side_by_side([floor, add], rounds, warmup)
    made = ctx.commits(repo) - before
    if made != rounds + warmup:
        raise BenchError(f"{rounds + warmup} `wb task add` made {made} commits")
    return [ratio("cli_mutation.task_add", "wb", a, "floor", f)]


def bench_api_mutation(ctx: Context) -> list[Result]:
    s = ctx.settings
    repo = ctx.workbench("api")
    floor_repo = ctx.git_repo("gitfloor")
    batch, rounds = s.n(20, 10), s.n(20, 5)
    loop = ('i=0; while [ "$i" -lt "$1" ]; do echo "$i" > FILE; git add FILE && git commit -q -m x || exit 1; '
            'i=$((i+1)); done')
    git_loop = ctx.runner.timer(["sh", "-c", loop, "sh", str(batch)], floor_repo)
    errlog = ctx.tmp / "api_worker.stderr"
    with open(errlog, "wb") as errfile:  # a file, not a pipe: nothing the worker says can block it
        worker = subprocess.Popen([PY, str(HERE / "_api_worker.py"), str(repo)], cwd=repo, env=ctx.runner.env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errfile, text=True)
    assert worker.stdin is not None and worker.stdout is not None

    def reply() -> str:
        line = worker.stdout.readline().strip()  # type: ignore[union-attr]
        if not line or line.startswith("error"):
            worker.kill()
            worker.wait()
            err = errlog.read_text(errors="replace")
            raise BenchError(f"API worker: {line or 'died'} {err.strip()[-600:]}")
        return line

    def api_batch() -> float:
        worker.stdin.write(f"{batch}\n")  # type: ignore[union-attr]
        worker.stdin.flush()  # type: ignore[union-attr]
        return float(reply())

    before = ctx.commits(repo)
    try:
        if reply() != "ready":
            raise BenchError("API worker did not start")
        api, git = side_by_side([api_batch, git_loop], rounds, 1)
        worker.stdin.write("quit\n")
        worker.stdin.flush()
        worker.wait(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    made = ctx.commits(repo) - before
    if made != batch * (rounds + 1):
        raise BenchError(f"{batch * (rounds + 1)} API mutations made {made} commits")
    per_api = [t / batch for t in api]
    per_git = [t / batch for t in git]
    per_mutation = statistics.median(per_api)
    rate = Result("api_mutation.rate", "rate", 1 / per_mutation, BARS["api_mutation.rate"], "mutations/s",
                  "api", per_mutation, n=len(per_api),
                  detail=f"median {fmt_s(per_mutation)} per committed mutation, {len(per_api)} rounds of {batch}")
    return [rate, ratio("api_mutation.vs_git", "api", per_api, "git add+commit", per_git)]


def bench_history(ctx: Context) -> list[Result]:
    s = ctx.settings
    r = ctx.runner
    out = []
    for name, kind in (("history.status", "note"), ("history.status_state", "state")):
        if not wanted(ctx, name):
            continue
        small = ctx.workbench(f"history-{kind}-{HISTORY_SMALL}", kind, HISTORY_SMALL)
        big = ctx.workbench(f"history-{kind}-{HISTORY_EVENTS}", kind, HISTORY_EVENTS)
        b, a = side_by_side([r.timer([ctx.wb, "status"], small), r.timer([ctx.wb, "status"], big)],
                            s.n(30, 8), s.n(2, 1))
        res = ratio(name, f"{HISTORY_EVENTS:,} events", a, f"{HISTORY_SMALL}", b)
        res.extra["state_md_bytes"] = (big / ".workbench" / "state.md").stat().st_size
        res.extra["events_jsonl_bytes"] = (big / ".workbench" / "events.jsonl").stat().st_size
        res.detail += (f", {kind} events; state.md {res.extra['state_md_bytes'] / 1e6:.1f} MB, "
                       f"events.jsonl {res.extra['events_jsonl_bytes'] / 1e6:.1f} MB")
        out.append(res)
    if not s.quick and wanted(ctx, "history.mutation"):
        # For information: what a commit costs when the log (and the decision log) is long. Runs last: it
        # adds tasks to the history repos.
        small = ctx.workbench(f"history-note-{HISTORY_SMALL}", "note", HISTORY_SMALL)
        big = ctx.workbench(f"history-note-{HISTORY_EVENTS}", "note", HISTORY_EVENTS)
        b, a = side_by_side([r.timer([ctx.wb, "task", "add", "X"], small),
                             r.timer([ctx.wb, "task", "add", "X"], big)], 8, 1)
        out.append(ratio("history.mutation", f"{HISTORY_EVENTS:,} events", a, f"{HISTORY_SMALL}", b, info=True))
    return out


def bench_board(ctx: Context) -> list[Result]:
    s = ctx.settings
    r = ctx.runner
    out = []
    if wanted(ctx, "board.task_add"):
        small = ctx.workbench(f"board-{BOARD_SMALL}", "task", BOARD_SMALL)
        big = ctx.workbench(f"board-{BOARD_TASKS}", "task", BOARD_TASKS)
        b, a = side_by_side([r.timer([ctx.wb, "task", "add", "X"], small),
                             r.timer([ctx.wb, "task", "add", "X"], big)], s.n(20, 6), s.n(2, 1))
        out.append(ratio("board.task_add", f"{BOARD_TASKS:,} tasks", a, f"{BOARD_SMALL} tasks", b))
    if wanted(ctx, "board.history"):
        # the history key of `wb board` (Bench.task_history) on a task added after 100,000 events: the first
        # look indexes the sealed segments (the warm-up); each later look reads the segments naming the task
        few = ctx.workbench(f"history-note-{HISTORY_SMALL}", "note", HISTORY_SMALL)
        many = ctx.workbench(f"history-note-{HISTORY_EVENTS}", "note", HISTORY_EVENTS)
        look = ("import sys; from workbench.api import Bench; b = Bench.open('.'); "
                "t = [t['id'] for t in b.wb.load().docs.board['tasks']]; "
                "sys.exit(0 if b.task_history(t[-1]) else 1)")
        for repo in (few, many):
            r.run([ctx.wb, "task", "add", "the task looked at"], repo)
        b, a = side_by_side([r.timer([PY, "-c", look], few), r.timer([PY, "-c", look], many)],
                            s.n(20, 6), s.n(2, 1))
        out.append(ratio("board.history", f"{HISTORY_EVENTS:,} events", a, f"{HISTORY_SMALL} events", b))
    return out


def bench_replay(ctx: Context) -> list[Result]:
    s = ctx.settings
    out = []
    for name, kind, timeout in (("replay.notes", "note", s.n(60, 8)), ("replay.state", "state", s.n(300, 30))):
        if not wanted(ctx, name):
            continue
        repo = ctx.workbench(f"history-{kind}-{HISTORY_EVENTS}", kind, HISTORY_EVENTS)
        argv = [ctx.wb, "replay", "--verify", "--json"]
        rates, walls, events = [], [], 0
        timed_out = False
        for _ in range(s.n(3, 1)):
            start = time.perf_counter()
            try:
                proc = subprocess.run(argv, cwd=repo, env=ctx.runner.env, capture_output=True, timeout=timeout,
                                      stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                timed_out = True
                break
            wall = time.perf_counter() - start
            try:
                report = json.loads(proc.stdout)
            except ValueError:
                raise BenchError(f"`wb replay --verify --json` exited {proc.returncode}: "
                                 f"{proc.stderr.decode(errors='replace').strip()[-600:]}") from None
            if proc.returncode != 0 or not report.get("matches"):
                raise BenchError(f"`wb replay --verify` on the generated log does not match: "
                                 f"{report.get('mismatches')}")
            events = report["events"]
            rates.append(report["events_per_second"])
            walls.append(wall)
        if timed_out and not rates:
            bound = HISTORY_EVENTS / timeout
            res = Result(name, "rate", bound, BARS[name], "events/s", n=0,
                         detail=f"did not finish {HISTORY_EVENTS:,} {kind} events within {timeout}s: "
                                f"below {bound:,.0f} events/s; killed")
            res.extra.update({"timed_out": True, "timeout_s": timeout, "upper_bound": True})
        else:
            wall = statistics.median(walls)
            res = Result(name, "rate", statistics.median(rates), BARS[name], "events/s", n=len(rates),
                         detail=f"{events:,} {kind} events; whole command {fmt_s(wall)} wall = "
                                f"{events / wall:,.0f} events/s")
            res.extra.update({"events": events, "wall_median_ms": round(wall * 1000, 1),
                              "wall_events_per_second": round(events / wall)})
        out.append(res)
    return out


def bench_hooks(ctx: Context) -> list[Result]:
    """A coding agent's hooks on each tool call: spooled, never the write path (issue 13 item 4)."""
    s = ctx.settings
    repo = ctx.workbench("hooks", "task", 12)
    r = ctx.runner
    common = {"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": str(repo),
              "permission_mode": "default"}
    tool_input = {"command": "pytest -q", "description": "Run the tests"}
    pre = {**common, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": tool_input,
           "tool_use_id": "toolu_bench"}
    post = {**common, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": tool_input,
            "tool_response": {"stdout": "12 passed in 0.40s\n", "stderr": "", "interrupted": False},
            "tool_use_id": "toolu_bench"}
    hook = [ctx.wb, "hook", "claude-code"]
    floor = r.timer([PY, "-c", "pass"], repo)
    f, a, b = side_by_side([floor, r.piped(hook, repo, json.dumps(pre).encode()),
                            r.piped(hook, repo, json.dumps(post).encode())], s.n(40, 10), s.n(3, 2))
    if ctx.git(repo, "status", "--porcelain").strip():
        raise BenchError("the hooks left the work tree dirty")
    before = ctx.commits(repo)
    r.run(hook, repo, input=json.dumps({**common, "hook_event_name": "Stop", "stop_hook_active": False}).encode())
    if ctx.commits(repo) != before + 1 or ctx.git(repo, "status", "--porcelain").strip():
        raise BenchError("the Stop hook did not commit the turn's events")
    return [ratio("hooks.pre_tool_use", "wb hook", a, "floor", f),
            ratio("hooks.post_tool_use", "wb hook", b, "floor", f)]


def bench_mcp(ctx: Context) -> list[Result]:
    """`wb mcp` as a client starts it: spawn, `initialize`, and (for information) `tools/list`."""
    s = ctx.settings
    probe = subprocess.run([PY, "-c", "import mcp_types, anyio"], capture_output=True, env=ctx.runner.env)
    if probe.returncode != 0:
        print("mcp                    SKIPPED: the MCP SDK is not installed (pip install -e '.[mcp]')", flush=True)
        return []
    repo = ctx.workbench("mcp", "task", 12)
    floor = ctx.runner.timer([PY, "-c", "pass"], repo)
    initialize = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
        + "\n").encode()
    listing = (b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
               b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
    listed: list[float] = []

    def session() -> float:
        start = time.perf_counter()
        proc = subprocess.Popen([ctx.wb, "mcp"], cwd=repo, env=ctx.runner.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(initialize)
            proc.stdin.flush()
            first = proc.stdout.readline()
            answered = time.perf_counter() - start
            proc.stdin.write(listing)
            proc.stdin.flush()
            second = proc.stdout.readline()
            listed.append(time.perf_counter() - start)
            proc.stdin.close()
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if b'"id":1' not in first or b'"tools"' not in second:
            raise BenchError(f"`wb mcp` did not answer: {first[:200]!r} {second[:200]!r}")
        return answered

    f, m = side_by_side([floor, session], s.n(20, 6), s.n(2, 1))
    res = ratio("mcp.startup", "initialize", m, "floor", f)
    res.detail += f", median {fmt_s(statistics.median(m))} (issue 13: ≤ 500ms)"
    listed = listed[-len(m):]  # the warm-up rounds' are dropped, as side_by_side drops theirs
    info = ratio("mcp.tools_list", "tools/list", listed, "floor", f, info=True)
    info.detail += f", median {fmt_s(statistics.median(listed))}"
    return [res, info, *bench_mcp_clients(ctx, repo)]


MCP_FIRST_ANSWER_S = 0.3  # issue 20: spawn → the first answer a client can use, both handshakes
MCP_FIRST_ANSWER_X = 10.0  # the same bar as mcp.startup, as a ratio to the floor
MCP_FIRST_CALL_S = 0.3  # issue 33: spawn → the first tools/call answered
MCP_FIRST_CALL_X = 25.0


def bench_mcp_clients(ctx: Context, repo: Path) -> list[Result]:
    """issue 20: the official SDK client (bench/mcp_client.py) in `legacy` and `auto` modes, spawn → the first
    answer it can use (`tools/list` after `initialize`; the answered `server/discover`), against spawning
    `python -c pass` from the same client; and spawn → the first `tools/call` answered (the SDK loaded in the
    server), for information."""
    s = ctx.settings
    proc = subprocess.run([PY, str(HERE / "mcp_client.py"), str(s.n(12, 3)), str(s.n(2, 1)), ctx.wb], cwd=repo,
                          env=ctx.runner.env, capture_output=True, timeout=900)
    if proc.returncode != 0:
        raise BenchError(f"bench/mcp_client.py exited {proc.returncode}: {proc.stderr.decode()[-600:]}")
    samples = json.loads(proc.stdout.decode().splitlines()[-1])
    out = []
    for mode, first in (("legacy", "tools/list"), ("auto", "server/discover")):
        res = ratio(f"mcp.first_answer_{mode}", f"{mode}: {first}", samples[mode], "floor", samples["floor"],
                    bar=MCP_FIRST_ANSWER_X)
        median = statistics.median(samples[mode])
        verdict = "PASS" if median <= MCP_FIRST_ANSWER_S else "FAIL"
        res.detail += (f", median {fmt_s(median)} ({verdict} issue 20: ≤ {fmt_s(MCP_FIRST_ANSWER_S)}; "
                       f"tools listed {fmt_s(statistics.median(samples[mode + '_tools']))})")
        res.extra["median_s"] = median
        res.extra["absolute_ok"] = median <= MCP_FIRST_ANSWER_S
        out.append(res)
    for mode in ("legacy", "auto"):  # issue 33: the first tools/call answered, ≤ 25× the floor and ≤ 0.3 s
        call = ratio(f"mcp.first_call_{mode}", f"{mode}: tools/call", samples[mode + "_call"], "floor",
                     samples["floor"], bar=MCP_FIRST_CALL_X)
        median = statistics.median(samples[mode + "_call"])
        verdict = "PASS" if median <= MCP_FIRST_CALL_S else "FAIL"
        call.detail += f", median {fmt_s(median)} ({verdict} issue 33: ≤ {fmt_s(MCP_FIRST_CALL_S)})"
        call.extra["median_s"] = median
        call.extra["absolute_ok"] = median <= MCP_FIRST_CALL_S
        out.append(call)
    return out


def bench_sync(ctx: Context) -> list[Result]:
    """issue 15: `wb sync` with nothing to do, against `git fetch && git push` of the same ref (information:
    no bar yet). The remote is a bare repository on the same disk, so the ratio is wb's own cost."""
    s = ctx.settings
    r = ctx.runner
    remote = ctx.tmp / "sync-remote.git"
    ctx.git(ctx.tmp, "init", "-q", "--bare", str(remote))
    repo = ctx.git_repo("sync")
    ctx.git(repo, "remote", "add", "origin", str(remote))
    r.run([ctx.wb, "init", "--ref", "wb-state"], repo)
    for i in range(20):
        r.run([ctx.wb, "task", "add", f"task {i}"], repo)
    r.run([ctx.wb, "sync"], repo)
    plain = r.timer(["sh", "-c", "git fetch -q --no-tags origin +refs/heads/wb-state:refs/remotes/origin/wb-state"
                                 " && git push -q origin wb-state"], repo)
    wb_sync = r.timer([ctx.wb, "sync"], repo)
    g, w = side_by_side([plain, wb_sync], s.n(20, 6), s.n(2, 1))
    out = [ratio("sync.nothing_to_do", "wb sync", w, "git fetch && git push", g, info=True)]

    # 100 events another clone pushed, merged with one of ours: each side gets its own fresh 100 (untimed)
    other = ctx.tmp / "sync-other"
    ctx.git(ctx.tmp, "clone", "-q", str(remote), str(other))
    r.run([ctx.wb, "init", "--ref", "wb-state"], other)
    hundred = [PY, "-c", "from workbench.api import Bench\nb = Bench.open('.')\n"
                         "for i in range(100): b.note(f'remote note {i}')\nb.sync()"]

    def merge_100() -> float:
        r.run(hundred, other, timeout=600)
        r.run([ctx.wb, "note", "ours"], repo)
        return wb_sync()

    fetch_only = r.timer(["sh", "-c", "git fetch -q --no-tags origin +refs/heads/wb-state:refs/remotes/origin/wb-state"
                                      " && git push -q origin refs/remotes/origin/wb-state:refs/heads/wb-state"], repo)

    def git_100() -> float:
        r.run(hundred, other, timeout=600)
        return fetch_only()

    g, w = side_by_side([git_100, merge_100], s.n(6, 2), 0)
    out.append(ratio("sync.merge_100", "wb sync", w, "git fetch && git push", g, info=True))
    return out


BENCHES: dict[str, Callable[[Context], list[Result]]] = {
    "startup": bench_startup,
    "cli_mutation": bench_cli_mutation,
    "api_mutation": bench_api_mutation,
    "history": bench_history,
    "board": bench_board,
    "replay": bench_replay,
    "hooks": bench_hooks,
    "mcp": bench_mcp,
    "sync": bench_sync,  # issue 15
}

# Groups in modules of their own (issue 20): they import bench/common.py, never this module
from scale import bench_scale  # noqa: E402

BENCHES["scale"] = bench_scale
try:  # bench/writers.py (issue 20, goal 4: 20 concurrent writers), once it exists
    from writers import bench_writers  # noqa: E402
except ImportError as _missing:
    if getattr(_missing, "name", None) != "writers":
        raise  # writers.py is there and broken: say so

    def bench_writers(ctx: Context) -> list[Result]:
        print(f"{'writers':<22} SKIPPED: bench/writers.py does not exist yet", flush=True)
        return []

BENCHES["writers"] = bench_writers
from web import bench_web  # noqa: E402

BENCHES["web"] = bench_web  # issue 21

from backends import bench_backends  # noqa: E402  (issue 24: files vs SQLite)

BENCHES["backends"] = bench_backends

from cost import bench_cost  # noqa: E402  (issue 33: a long list, one add vs git, the first command, SQLite)

BENCHES["cost"] = bench_cost

def source_revision(ctx: Context) -> str:
    """Which wb is measured: the git commit of its source tree, `+dirty` when it has uncommitted edits."""
    try:
        out = ctx.runner.run([PY, "-c", "import workbench; print(workbench.__file__)"], ctx.tmp).stdout
        pkg = Path(out.decode().strip()).parent
        head = ctx.runner.run(["git", "rev-parse", "--short", "HEAD"], pkg).stdout.decode().strip()
        dirty = ctx.runner.run(["git", "status", "--porcelain", "--", "."], pkg).stdout.decode().strip()
    except (BenchError, OSError):
        return "source revision unknown"
    return f"{pkg} @ {head}{'+dirty' if dirty else ''}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions: the whole run in < 60 s (CI)")
    parser.add_argument("--only", metavar="NAME", help="comma-separated groups or result names")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a bar is missed")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (its path is printed)")
    args = parser.parse_args(argv)
    ONLY[:] = [o.strip() for o in (args.only or "").split(",") if o.strip()]
    unknown = [o for o in ONLY if o.split(".")[0] not in BENCHES]
    if unknown:
        parser.error(f"unknown bench {', '.join(unknown)}; groups: {', '.join(GROUPS)}")

    settings = Settings(quick=args.quick)
    source = "unknown source"
    tmp = Path(tempfile.mkdtemp(prefix="wb-bench-"))
    started = time.perf_counter()
    results: list[Result] = []
    errors: dict[str, str] = {}
    try:
        ctx = Context(settings, tmp)
        version = ctx.runner.run([ctx.wb, "--version"], tmp).stdout.decode().strip()
        git_version = ctx.runner.run(["git", "--version"], tmp).stdout.decode().strip()
        source = source_revision(ctx)
        print(f"# {version} ({source}) · Python {platform.python_version()} ({PY}) · {git_version} · "
              f"{os.cpu_count()} cpus · {'quick' if args.quick else 'full'} run", flush=True)
        for group, fn in BENCHES.items():
            if ONLY and not any(o.split(".")[0] == group for o in ONLY):
                continue
            t0 = time.perf_counter()
            try:
                got = [res for res in fn(ctx) if wanted(ctx, res.name)]
            except Exception as err:  # one broken bench must not hide the others
                errors[group] = f"{type(err).__name__}: {err}"
                print(f"{group:<22} ERROR {errors[group]}", flush=True)
                if os.environ.get("BENCH_DEBUG"):
                    traceback.print_exc()
                continue
            for res in got:
                print(res.line(), flush=True)
            print(f"#   {group} took {time.perf_counter() - t0:.1f}s", flush=True)
            results.extend(got)
    finally:
        if args.keep:
            print(f"# kept {tmp}", flush=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    missed = [r.name for r in results if r.ok is False]
    summary = {
        "mode": "quick" if args.quick else "full",
        "source": source,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "seconds": round(time.perf_counter() - started, 1),
        "results": {r.name: r.summary() for r in results},
        "errors": errors,
        "missed": missed,
        "all_pass": not missed and not errors,
    }
    print("BENCH_SUMMARY " + json.dumps(summary, ensure_ascii=False, separators=(",", ":")), flush=True)
    if errors:
        return 1
    return 1 if (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
