#!/usr/bin/env python3
"""faultrun: crash-consistency proof of `wb` by fault injection over many seeded schedules.

    python tools/faultrun.py --schedules 300 --seed 1            # the long run (docs/reliability.md)
    python tools/faultrun.py --schedules 6 --seed 7 --quick      # CI-sized
    python tools/faultrun.py --only-seed 1000042                 # replay one schedule named by a violation

Each schedule copies a template git repository (a staged file, an unstaged edit and an untracked file of the
user's, and a workbench — or, in some schedules, the version-0 workbench of tests/migrate/fixtures/v0 that
the schedule first migrates) and runs a seeded random sequence of real `wb` processes: task add/start/done/
block/set, note, set, and harness sessions (`wb run GOAL --plan p.yaml` over tools that count their side
effects in a file, then `wb resume --approve/--deny/--result/--error/--extend`). Some of them are SIGKILLed:

  (a) at a named fault point (WB_FAULT, workbench/faults.py) of the store transaction, the git recording,
      the harness (after_tool_run: the side effect done, its result not recorded; after_tool_result) or the
      migration (migrate:*), with WB_FAULT_SKIP choosing which hit of the point is killed;
  (b) at a random moment: Popen, sleep a few random milliseconds, os.kill(pid, SIGKILL).

Only the wb process is killed, as a crash would; a git or tool child it started finishes on its own (the
driver waits for its process group to empty before looking). After every kill it checks that:

  - the workbench loads: `wb status --json` exits 0 (a pending session is in its output); an interrupted
    migration is named by `wb status` (exit 5, "run `wb migrate`") and finished by `wb migrate` (a repair);
  - `wb validate` and `wb replay --verify` exit 0 (`wb doctor --fix` first when validate reports a torn log
    tail: a repair, not a violation);
  - no acknowledged mutation (a `wb` that exited 0, or 3/4 for the harness) is missing, and the killed one is
    wholly there or wholly absent: what wb loads is exactly the model before it, or the model with it applied;
    no event once seen in the log ever disappears or changes (the log only grows);
  - a crash is never taken for a human edit;
  - `git status --porcelain` of everything outside .workbench/ is exactly what the user had;
  - tools: no side effect without a journaled call, a call whose result is recorded is never run again, and a
    non-idempotent call left in doubt is not run again unless a person said so (`wb resume --approve`);
  - sometimes `wb doctor` is exercised as well: `--fix` repairs what it reports, then `wb doctor` is healthy
    and nothing wb loads has changed.

After every acknowledged mutation the model must match exactly, and `.workbench/` must be committed. Each
schedule ends with one more mutation, validate, replay --verify, a healthy `wb doctor`, and a check that every
commit made touched .workbench/ only.

Output: one line per violation (with the seed that replays its schedule) and the summary line
`faultrun: schedules=N kills=K violations=V repairs=R seconds=T`. Exit 1 when V > 0.
Fault-point kills replay exactly from the seed; random-moment kills depend on timing and replay roughly.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from faultrun_checks import ScheduleChecks
from faultrun_world import (  # noqa: F401  what the tests read of faultrun: its points and tools
    COVERED,
    HARNESS_POINTS,
    MIGRATE_POINTS,
    NON_IDEMPOTENT,
    ROOT,
    SCENARIO_POINTS,
    STORE_POINTS,
    TOOLS,
    WB,
    WORDS,
    Op,
    Outcome,
    ScheduleResult,
    View,
    Violation,
    base_env,
    build_templates,
    git,
    named_points,
    next_task_id,
    observe,
    run,
    status_outside,
    status_workbench,
    tools_yaml,
)


class Schedule(ScheduleChecks):
    def __init__(self, seed: int, index: int, workdir: Path, templates: dict[str, Path], env: dict[str, str],
                 quick: bool, durations: dict[str, float]) -> None:
        self.seed, self.index = seed, index
        self.rng = random.Random(seed)
        self.dir = workdir
        self.env = env
        self.quick = quick
        self.durations = durations
        self.migrating = self.rng.random() < 0.15
        self.repo = workdir / "repo"
        shutil.copytree(templates["v0" if self.migrating else "fresh"], self.repo, symlinks=True)
        self.counter = workdir / "counter"
        self.result = ScheduleResult(seed, index, migrating=self.migrating)
        self.notes: list[str] = []
        self.log_lines: list[bytes] = []  # the complete log lines seen so far: the log may only grow
        self.frozen: dict[str, int] = {}  # tool tag -> runs when its result was first seen recorded
        self.human_reruns: Counter[str] = Counter()  # tool tag -> `wb resume --approve` given while in doubt
        self.tool_of: dict[str, str] = {}  # tool tag -> tool name
        self.plans: dict[str, Path] = {}  # session goal -> plan file
        self.sessions = 0
        self.step = 0
        self.view: View = {}
        self.user_status: list[str] = []
        self.head0 = ""

    # -- bookkeeping -----------------------------------------------------------------------------------------
    def violate(self, op: Op | None, kill: str, message: str) -> None:
        self.result.violations.append(Violation(self.seed, self.index, self.step, op.label if op else "-", kill,
                                                message))

    def go(self) -> ScheduleResult:
        start = time.monotonic()
        try:
            self._go()
        except Exception as err:  # noqa: BLE001 - a driver failure is reported as a violation with its seed
            import traceback

            self.violate(None, "", f"driver error: {err!r}\n{traceback.format_exc()}")
        self.result.seconds = time.monotonic() - start
        return self.result

    def _go(self) -> None:
        self.user_status = status_outside(self.repo, self.env)
        self.head0 = git(self.repo, self.env, "rev-parse", "HEAD").strip()
        if self.migrating and not self._migrate():
            return
        self.view, _edits, _session = observe(self.repo, self.notes)
        self.log_lines = self._log()[0]
        n_ops = self.rng.randint(4, 7) if self.quick else self.rng.randint(8, 14)
        for _ in range(n_ops):
            self.step += 1
            op = self._choose()
            if op is None:
                continue
            if not self._do(op):
                return  # a violation that leaves nothing sound to build on
        self._finish()

    # -- migration -------------------------------------------------------------------------------------------
    def _migrate(self) -> bool:
        """`wb migrate` of the v0 workbench, killed (maybe twice) and finished by a re-run."""
        op = Op("migrate", ["migrate"], "migrate")
        for attempt in range(4):
            self.step += 1
            if attempt == 0 and self.rng.random() < 0.75:  # the points in turn, so that every one is covered
                point = MIGRATE_POINTS[self.index % len(MIGRATE_POINTS)]
                kill: tuple[str, dict[str, Any]] = (f"killed at {point} (skip 0)", {"fault": point, "skip": 0})
            elif attempt == 3:  # left alone at last, it must finish (the harness chose the kills, not wb)
                kill = ("", {})
            else:
                kill = self._pick_kill(op, MIGRATE_POINTS, 0.85 if attempt == 0 else 0.35)
            out = self._exec(op, kill)
            if out.hung:
                self.violate(op, kill[0], "hung")
                return False
            if not out.killed:
                if out.rc != 0:
                    self.violate(op, kill[0], f"exit {out.rc}: {out.stderr.strip()}")
                    return False
                if attempt:
                    self.result.repairs += 1
                    self.result.repairs_by["migration_finished"] += 1
                break
            self._count_kill(kill)
            if status_outside(self.repo, self.env) != self.user_status:
                self.violate(op, kill[0], "the user's files changed: "
                             f"{sorted(set(status_outside(self.repo, self.env)) ^ set(self.user_status))}")
            status = run(self.repo, self.env, ["status", "--json"])
            # before the migration's events are logged, wb refuses the old files and names `wb migrate`
            if status.rc != 0 and not (status.rc == 5 and "run `wb migrate`" in status.stderr):
                self.violate(op, kill[0], f"after the kill `wb status` exited {status.rc}: {status.stderr.strip()}")
                return False
        else:
            self.violate(op, "", "wb migrate never finished")
            return False
        if (self.repo / ".workbench" / ".migrate.json").exists():
            self.violate(op, "", "wb migrate exited 0 but left its intent file")
        ok = self._check_sound(op, "after migration")
        types = [e["type"] for e in self._log()[2]]
        if types != ["workbench.init", "migration.apply"]:
            self.violate(op, "", f"the migrated log is {types}, not [workbench.init, migration.apply]")
            ok = False
        view, _edits, _session = observe(self.repo, [])
        if view != MIGRATED_VIEW:
            self.violate(op, "", f"the migrated workbench differs from an uninterrupted migration: {view}")
            ok = False
        if status_workbench(self.repo, self.env):
            self.violate(op, "", "wb migrate left .workbench/ uncommitted")
        return ok

    # -- choosing ops ----------------------------------------------------------------------------------------
    def _choose(self) -> Op | None:
        rng = self.rng
        tasks = self.view["tasks"]
        by_status: dict[str, list[str]] = {}
        for tid, _title, status in tasks:
            by_status.setdefault(status, []).append(tid)
        _view, _edits, session = observe(self.repo, self.notes)
        choices: list[tuple[str, float]] = [("task_add", 3), ("note", 2), ("set", 1),
                                            ("harness", 4 if session else 2.5)]
        if by_status.get("todo") or by_status.get("blocked"):
            choices.append(("task_start", 2))
        if by_status.get("todo") or by_status.get("in_progress"):
            choices += [("task_done", 2), ("task_block", 1)]
        if tasks:
            choices.append(("task_retitle", 1))
        if by_status.get("done"):
            choices.append(("task_reopen", 0.5))
        kind = rng.choices([c for c, _w in choices], [w for _c, w in choices])[0]
        tag = f"{self.step:02d}-{rng.choice(WORDS)}"
        if kind == "task_add":
            title = f"task {tag}"
            args = ["task", "add", title]
            if rng.random() < 0.4:
                args += ["--accept", "true"]
            return Op(kind, args, " ".join(args), {"id": next_task_id(self.view), "title": title})
        if kind == "task_start":
            tid = rng.choice(by_status.get("todo", []) + by_status.get("blocked", []))
            return Op(kind, ["task", "start", tid], f"task start {tid}", {"id": tid})
        if kind == "task_done":
            tid = rng.choice(by_status.get("todo", []) + by_status.get("in_progress", []))
            return Op(kind, ["task", "done", tid], f"task done {tid}", {"id": tid})
        if kind == "task_block":
            tid = rng.choice(by_status.get("todo", []) + by_status.get("in_progress", []))
            reason = f"waiting on {tag}"
            return Op(kind, ["task", "block", tid, "--reason", reason], f"task block {tid}",
                      {"id": tid, "reason": reason})
        if kind == "task_retitle":
            tid = rng.choice(tasks)[0]
            title = f"renamed {tag}"
            return Op(kind, ["task", "set", tid, f"title={title}"], f"task set {tid} title=…",
                      {"id": tid, "title": title})
        if kind == "task_reopen":
            tid = rng.choice(by_status["done"])
            return Op(kind, ["task", "set", tid, "status=todo"], f"task set {tid} status=todo", {"id": tid})
        if kind == "note":
            text = f"[note {self.step:03d}] {rng.choice(WORDS)} {rng.randrange(10**6)}"
            self.notes.append(text)
            self.view["notes"][text] = 0
            return Op(kind, ["note", text], "note …", {"text": text})
        if kind == "set":
            text = f"next {tag}"
            return Op(kind, ["set", f"next_action={text}"], "set next_action=…", {"text": text})
        return self._harness_op(session)

    def _harness_op(self, session: dict[str, Any]) -> Op:
        rng = self.rng
        if not session:
            self.sessions += 1
            goal = f"goal {self.sessions}"
            plan = self.dir / f"plan-{self.sessions}.yaml"
            steps = []
            kinds = ["think", "deploy"] if self.migrating else ["bump", "bump_ro", "bump_once", "think", "deploy"]
            for i in range(rng.randint(2, 5)):
                what = rng.choice(kinds)
                tag = f"{self.sessions}.s{i + 1}"
                step: dict[str, Any] = {"id": f"s{i + 1}", "description": f"{what} {tag}"}
                if what != "think":
                    step["tool"] = what
                    step["args"] = {"file": str(self.counter), "tag": tag}
                    self.tool_of[tag] = what
                steps.append(step)
            plan.write_text(json.dumps({"steps": steps}, indent=1))
            self.plans[goal] = plan
            args = ["run", goal, "--plan", str(plan)]
            if rng.random() < 0.2:
                args += ["--max-turns", str(rng.randint(1, 3))]
            return Op("harness", args, " ".join(args[:2]) + " --plan …" + " ".join(args[4:]), {"goal": goal})
        pending = session.get("pending") or {}
        kind = pending.get("kind")
        args = ["resume"]
        if kind == "approval":
            args.append("--approve" if rng.random() < 0.85 else "--deny")
        elif kind == "tool_result":
            args += (["--result", json.dumps({"exit_code": 0, "by": "human"})] if rng.random() < 0.85
                     else ["--error", "it failed"])
        elif kind == "in_doubt":
            r = rng.random()
            if r < 0.5:
                args.append("--approve")  # a person asks to run it again
                payload = pending.get("payload") or {}
                tag = self._tag_of_step(session, payload.get("step"))
                if tag:
                    self.human_reruns[tag] += 1
            elif r < 0.85:
                args += ["--result", json.dumps({"exit_code": 0, "by": "human"})]
            else:
                args += ["--error", "it did not happen"]
        elif session.get("harness_state") == "IDLE" or session.get("paused_from") or kind == "pause":
            args += ["--extend", "turns=20"]
        if session.get("harness_state") == "PLANNING" or session.get("paused_from") == "PLANNING":
            plan = self.plans.get(session.get("goal", ""))
            if plan is not None:
                args += ["--plan", str(plan)]
        return Op("harness", args, " ".join(a if len(a) < 40 else "…" for a in args), {"goal": session.get("goal")})

    def _tag_of_step(self, session: dict[str, Any], step_id: str | None) -> str | None:
        for step in session.get("plan") or []:
            if step.get("id") == step_id:
                args = step.get("args") or {}
                return args.get("tag")
        return None

    def _pick_kill(self, op: Op, points: list[str], p_kill: float) -> tuple[str, dict[str, Any]]:
        """('' , {}) for no kill; else a label and run() keyword arguments."""
        rng = self.rng
        if rng.random() >= p_kill:
            return "", {}
        if rng.random() < 0.3:  # a random moment of the process's life
            typical = self.durations.get(op.kind, 0.4)
            delay = rng.uniform(0.0, typical * 1.1)
            return f"killed at random after {delay * 1000:.0f} ms", {"kill_after": delay}
        if op.kind == "harness" and rng.random() < 0.6:
            point = rng.choice(HARNESS_POINTS)
            skip = rng.choice([0, 0, 0, 1, 2])
        else:
            point = rng.choice(points)
            if op.kind == "harness":
                skip = rng.randrange(0, 9)
            elif point == "before_rename:board.json" and op.kind != "migrate":
                skip = rng.choice([0, 1])  # the second rename of a board.json is its .cache copy
            else:
                skip = 0
        return f"killed at {point} (skip {skip})", {"fault": point, "skip": skip}

    def _exec(self, op: Op, kill: tuple[str, dict[str, Any]]) -> Outcome:
        out = run(self.repo, self.env, op.args, **kill[1])
        self.result.ops += 1
        if not out.killed and not kill[1].get("kill_after"):
            old = self.durations.get(op.kind)
            self.durations[op.kind] = out.seconds if old is None else 0.8 * old + 0.2 * out.seconds
        return out

    def _count_kill(self, kill: tuple[str, dict[str, Any]]) -> None:
        self.result.kills += 1
        kw = kill[1]
        self.result.kills_by[kw.get("fault", "random")] += 1

    # -- one op and its checks -------------------------------------------------------------------------------
    def _do(self, op: Op) -> bool:
        p_kill = 0.6
        kill = self._pick_kill(op, STORE_POINTS, p_kill)
        before = copy.deepcopy(self.view)
        if op.kind == "note":
            before["notes"].setdefault(op.payload["text"], 0)
        out = self._exec(op, kill)
        label = kill[0] if out.killed else ("(not killed: " + kill[0] + ")" if kill[0] else "")
        if out.hung:
            self.violate(op, label, f"hung (no exit within the timeout): {out.stderr.strip()[:300]}")
            return False
        if out.killed:
            self._count_kill(kill)
            return self._after_kill(op, label, before)
        return self._after_ack(op, label, out, before)


# -- the run ----------------------------------------------------------------------------------------------------
MIGRATED_VIEW: View = {}
_WORKER: dict[str, Any] = {}


def _setup(base: Path) -> tuple[dict[str, Path], dict[str, str]]:
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = base_env(home)
    templates = build_templates(base, env)
    return templates, env


def reference_migration(base: Path, templates: dict[str, Path], env: dict[str, str]) -> View:
    ref = base / "reference-v0"
    shutil.copytree(templates["v0"], ref, symlinks=True)
    out = run(ref, env, ["migrate"])
    if out.rc != 0:
        raise RuntimeError(f"the reference migration failed: {out.stderr}")
    view, _e, _s = observe(ref, [])
    shutil.rmtree(ref, ignore_errors=True)
    return view


def _init_worker(base: str, templates: dict[str, str], env: dict[str, str], migrated: View) -> None:
    _WORKER.update(base=Path(base), templates={k: Path(v) for k, v in templates.items()}, env=env)
    MIGRATED_VIEW.clear()
    MIGRATED_VIEW.update(migrated)


def _run_one(job: tuple[int, int, bool, bool]) -> ScheduleResult:
    seed, index, quick, keep = job
    workdir = _WORKER["base"] / f"s{seed}"
    workdir.mkdir(parents=True, exist_ok=True)
    durations = _WORKER.setdefault("durations", {})
    result = Schedule(seed, index, workdir, _WORKER["templates"], _WORKER["env"], quick, durations).go()
    if not keep and not result.violations:
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def freeze(target: Path) -> None:
    """Copy the package and its schemas, and make this process and every wb it starts import the copy."""
    if "workbench" in sys.modules:
        raise RuntimeError("--freeze must come before workbench is imported")
    shutil.copytree(ROOT / "workbench", target / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "schemas", target / "schemas")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(target), os.environ.get("PYTHONPATH")) if p)
    sys.path.insert(0, str(target))


def schedule_seed(seed: int, index: int) -> int:
    return seed * 1_000_000 + index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedules", type=int, default=20, help="how many seeded schedules (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="the run's seed; schedule i uses seed*1000000+i")
    parser.add_argument("--quick", action="store_true", help="shorter schedules (CI)")
    parser.add_argument("--only-seed", type=int, action="append", default=[], metavar="SEED",
                        help="run just the schedule of this schedule seed (as a violation names it); repeatable")
    parser.add_argument("--jobs", type=int, default=1, help="schedules run side by side (default 1)")
    parser.add_argument("--keep", action="store_true", help="keep every schedule's repository (default: only "
                                                            "those with a violation)")
    parser.add_argument("--workdir", type=Path, help="where the repositories go (default: a temp directory)")
    parser.add_argument("--report", type=Path, help="write the figures as JSON to this file")
    parser.add_argument("--freeze", action="store_true",
                        help="run a copy of workbench/ and schemas/ taken at the start, so that edits of the tree "
                             "during a long run do not mix two versions of wb into one run")
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per schedule")
    args = parser.parse_args(argv)

    start = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="faultrun-", dir=args.workdir))
    if args.freeze:
        freeze(base / "frozen")
    templates, env = _setup(base)
    migrated = reference_migration(base, templates, env)
    if args.only_seed:
        jobs = [(s, s % 1_000_000, args.quick, True) for s in args.only_seed]
    else:
        jobs = [(schedule_seed(args.seed, i), i, args.quick, args.keep) for i in range(args.schedules)]
    init = (str(base), {k: str(v) for k, v in templates.items()}, env, migrated)
    results: list[ScheduleResult] = []
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs, initializer=_init_worker, initargs=init) as pool:
            for result in pool.map(_run_one, jobs):
                results.append(result)
                _progress(result, args.verbose)
    else:
        _init_worker(*init)
        for job in jobs:
            result = _run_one(job)
            results.append(result)
            _progress(result, args.verbose)

    violations = [v for r in results for v in r.violations]
    kills = sum(r.kills for r in results)
    repairs = sum(r.repairs for r in results)
    seconds = time.monotonic() - start
    kept = any(r.violations for r in results) or args.keep or args.only_seed
    if not kept:
        shutil.rmtree(base, ignore_errors=True)
    if args.report:
        by_point: Counter[str] = Counter()
        repairs_by: Counter[str] = Counter()
        for r in results:
            by_point.update(r.kills_by)
            repairs_by.update(r.repairs_by)
        args.report.write_text(json.dumps({
            "schedules": len(results), "seed": args.seed, "quick": args.quick, "kills": kills,
            "violations": len(violations), "repairs": repairs, "seconds": round(seconds, 1),
            "ops": sum(r.ops for r in results), "acknowledged": sum(r.acknowledged for r in results),
            "migration_schedules": sum(1 for r in results if r.migrating),
            "doctor_exercised": sum(r.doctor_runs for r in results),
            "kills_by_point": dict(sorted(by_point.items())), "repairs_by_kind": dict(sorted(repairs_by.items())),
            "violation_lines": [v.line() for v in violations], "workdir": str(base) if kept else None,
            "load_average": os.getloadavg(), "cpus": os.cpu_count(),
        }, indent=1) + "\n")
    if kept:
        print(f"faultrun: repositories kept in {base}", file=sys.stderr)
    print(f"faultrun: schedules={len(results)} kills={kills} violations={len(violations)} repairs={repairs} "
          f"seconds={seconds:.0f}")
    return 1 if violations else 0


def _progress(result: ScheduleResult, verbose: bool) -> None:
    for v in result.violations:  # as they are found: a long run shows them before it ends
        print(v.line(), flush=True)
    if verbose:
        print(f"  schedule {result.schedule} (seed {result.seed}): ops={result.ops} kills={result.kills} "
              f"violations={len(result.violations)} repairs={result.repairs} {result.seconds:.1f}s",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
