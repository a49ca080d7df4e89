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
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WB = [sys.executable, "-m", "workbench.cli.main"]
V0_FIXTURE = ROOT / "tests" / "migrate" / "fixtures" / "v0" / ".workbench"

# -- the named fault points ------------------------------------------------------------------------------------
# The store transaction, in the order it reaches them (the .cache copies are renamed after the snapshots), then
# the git recording. `before_rename:board.json` is hit twice by a board mutation: skip 1 is its .cache copy.
STORE_POINTS = [
    "after_state_stat", "before_event_append", "after_event_append",
    "before_rename:board.json", "after_board_write",
    "before_rename:state.md", "after_state_write",
    "before_rename:state.json",
    "after_git_objects", "before_git_ref", "after_git_ref", "after_git_commit",
]
HARNESS_POINTS = ["after_tool_run", "after_tool_result"]
MIGRATE_POINTS = ["migrate:after_intent", "before_rename:state.md", "migrate:after_state", "before_rename:board.json",
                  "migrate:after_board", "migrate:after_event", "after_git_objects", "before_git_ref",
                  "after_git_ref"]
# Kill -9 at these needs a scenario faultrun does not drive — a git remote, a second branch or worktree — so the
# test named beside each kills a real wb there and checks the rerun converges with nothing lost.
SCENARIO_POINTS = {
    "sync_before_ref": "tests/sync/test_sync.py", "sync_after_ref": "tests/sync/test_sync.py",
    "sync_mid_write": "tests/sync/test_sync.py", "before_push": "tests/sync/test_sync.py",
    "after_push": "tests/sync/test_sync.py", "after_shared_result": "tests/git_scenarios/test_branch_switch.py",
    "after_archive_write": "tests/store/test_archive.py",  # the board's archive: needs archive.keep/chunk set
    # sealing the log: needs a tail past log.segment_events, which faultrun's schedules do not reach
    "after_segment_write": "tests/store/test_segments.py", "before_tail_rewrite": "tests/store/test_segments.py",
    "after_tail_rewrite": "tests/store/test_segments.py",
    # wb's own packs (workbench/git/packs.py): a pack run comes every git.pack_every commits, after the commit
    "packs_after_pack_written": "tests/git_scenarios/test_packs.py",
    "packs_after_pack_in_place": "tests/git_scenarios/test_packs.py",
    "packs_after_record": "tests/git_scenarios/test_packs.py", "packs_mid_prune": "tests/git_scenarios/test_packs.py",
    # the SQLite backend (workbench/store/sqlitetx.py): its own workbench, killed by test_sqlite_kill_at_fault_point
    "sqlite_before_commit": "tests/reliability/test_crash.py", "sqlite_after_commit": "tests/reliability/test_crash.py",
    "sqlite_migrate_before_commit": "tests/migrate/test_migrate_sqlite.py",  # wb migrate's one transaction
    # in the pending journal, not yet in events.jsonl: the schedules reached it only by a random kill
    "after_pending_append": "tests/store/test_pending_kill.py",
}
COVERED = set(STORE_POINTS) | set(HARNESS_POINTS) | set(MIGRATE_POINTS) | set(SCENARIO_POINTS)


def named_points() -> set[str]:
    """Every `faults.point("...")` name in workbench/ (the `"before_rename:" + path.name` family excepted, which
    STORE_POINTS lists by file)."""
    names: set[str] = set()
    for path in (ROOT / "workbench").rglob("*.py"):
        names |= set(re.findall(r'faults\.point\("([^"]+)"\)', path.read_text(encoding="utf-8")))
    # migrate/apply.py names its per-file points by concatenation
    text = (ROOT / "workbench" / "migrate" / "apply.py").read_text(encoding="utf-8")
    if 'faults.point("migrate:after_" + write["path"].split(".")[0])' in text:
        names |= {"migrate:after_state", "migrate:after_board"}
    return names


# -- the bump tools: each run appends its tag to a counter file outside the repository --------------------------
BUMP = ["/bin/sh", "-c", 'printf "%s\\n" "$1" >> "$0"', "{file}", "{tag}"]
TOOLS = {  # name: (mode, idempotent)
    "bump": ("safe_readonly", True),  # re-run when in doubt
    "bump_ro": ("safe_readonly", False),  # runs without asking; in doubt asks a person
    "bump_once": ("mutating", False),  # asks approval each time; in doubt asks a person
}
NON_IDEMPOTENT = {name for name, (_mode, idem) in TOOLS.items() if not idem}


def tools_yaml() -> str:
    lines = ["tools:"]
    for name, (mode, idem) in TOOLS.items():
        lines += [f"  {name}:", f"    argv: {json.dumps(BUMP)}", f"    mode: {mode}", "    timeout: 30",
                  f"    idempotent: {'true' if idem else 'false'}"]
    return "\n".join(lines) + "\n"


# -- processes --------------------------------------------------------------------------------------------------
def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WB_", "GIT_"))}
    env.update(
        HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), CI="1", NO_COLOR="1", TERM="dumb", COLUMNS="100",
        GIT_AUTHOR_NAME="Fault Run", GIT_AUTHOR_EMAIL="faultrun@example.invalid",
        GIT_COMMITTER_NAME="Fault Run", GIT_COMMITTER_EMAIL="faultrun@example.invalid",
        GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0",
        WB_LOCK_TIMEOUT="30",  # a lock left held would show up as exit 6, not as a hang
        # CI's opt-in: a kill between a task's commit and the note that this clone wrote its acceptance leaves
        # that command untrusted (the safe side); the fault run checks durability, not the trust step
        WB_TRUST_REPO_COMMANDS="1",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # recompiling wb on every call would triple its start-up time
    return env


@dataclass
class Outcome:
    argv: list[str]
    rc: int
    stdout: str
    stderr: str
    seconds: float
    killed: bool  # SIGKILLed (rc -9)
    hung: bool = False


def run(repo: Path, env: dict[str, str], args: list[str], *, fault: str | None = None, skip: int = 0,
        kill_after: float | None = None, timeout: float = 120) -> Outcome:
    """One `wb` process. With `fault`, armed to kill itself there; with `kill_after`, SIGKILLed by us after that
    many seconds (if still running). Waits until every process it started (git, tools) has ended too."""
    env = dict(env)
    if fault:
        env["WB_FAULT"], env["WB_FAULT_SKIP"] = fault, str(skip)
    start = time.monotonic()
    proc = subprocess.Popen([*WB, *args], cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    if kill_after is not None:
        try:
            proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)  # the wb process only, as a crash would
    out, err, hung = _communicate(proc, timeout)
    hung = _drain_group(proc.pid, timeout) or hung
    return Outcome(list(args), proc.returncode, out, err, time.monotonic() - start, proc.returncode == -9, hung)


def run_many(repo: Path, env: dict[str, str], commands: list[list[str]], timeout: float = 120) -> list[Outcome]:
    """Read-only wb commands side by side (they take no lock)."""
    start = time.monotonic()
    procs = [subprocess.Popen([*WB, *args], cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True) for args in commands]
    outcomes = []
    for args, proc in zip(commands, procs, strict=True):
        out, err, hung = _communicate(proc, timeout)
        outcomes.append(Outcome(list(args), proc.returncode, out, err, time.monotonic() - start, False, hung))
    return outcomes


def _communicate(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str, bool]:
    """(stdout, stderr, hung): a wb that outlives `timeout` is killed with its whole process group."""
    try:
        out, err = proc.communicate(timeout=timeout)
        return out, err, False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return out, err, True


def _drain_group(pgid: int, timeout: float) -> bool:
    """Wait for orphans of a killed wb (a git or tool child finishing on its own); True if they hang."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return False
        if time.monotonic() > deadline:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return True
        time.sleep(0.005)


def git(repo: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def status_outside(repo: Path, env: dict[str, str]) -> list[str]:
    out = git(repo, env, "status", "--porcelain", "--untracked-files=all")
    return sorted(line for line in out.splitlines() if not line[3:].startswith(".workbench"))


def status_workbench(repo: Path, env: dict[str, str]) -> str:
    return git(repo, env, "status", "--porcelain", "--untracked-files=all", "--", ".workbench")


# -- templates --------------------------------------------------------------------------------------------------
def make_user_repo(path: Path, env: dict[str, str]) -> None:
    path.mkdir(parents=True)
    git(path, env, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# project\n")
    (path / "src.py").write_text("print('v1')\n")
    git(path, env, "add", "README.md", "src.py")
    git(path, env, "commit", "-q", "-m", "initial commit")


def add_user_changes(path: Path, env: dict[str, str]) -> None:
    """The user's own work in progress, which no wb write may touch."""
    (path / "staged.txt").write_text("staged by the user\n")
    git(path, env, "add", "staged.txt")
    (path / "src.py").write_text("print('v2, not staged')\n")
    (path / "untracked.txt").write_text("untracked\n")


def build_templates(base: Path, env: dict[str, str]) -> dict[str, Path]:
    # a workbench whose config.yaml declares the bump tools (committed before the user's changes)
    fresh = base / "template-fresh"
    make_user_repo(fresh, env)
    init = run(fresh, env, ["init"])
    if init.rc != 0:
        raise RuntimeError(f"wb init failed: {init.stderr}")
    config = fresh / ".workbench" / "config.yaml"
    text = config.read_text()
    if "tools: {}\n" not in text:
        raise RuntimeError("wb init's config.yaml has no `tools: {}` line to replace")
    if "approvals: human" not in text:
        raise RuntimeError("wb init's config.yaml has no `approvals: human` line to replace")
    # the fault run is an unattended pipeline: its `wb resume --approve/--deny` answer as the agent (CI opt-in)
    text = text.replace("approvals: human", "approvals: any", 1)
    config.write_text(text.replace("tools: {}\n", tools_yaml()))
    git(fresh, env, "add", ".workbench")
    git(fresh, env, "commit", "-q", "-m", "declare the bump tools")
    add_user_changes(fresh, env)
    # the version-0 workbench of wb 0.0.x, committed, then the user's changes
    v0 = base / "template-v0"
    make_user_repo(v0, env)
    shutil.copytree(V0_FIXTURE, v0 / ".workbench")
    git(v0, env, "add", ".workbench")
    git(v0, env, "commit", "-q", "-m", "a workbench of wb 0.0.x")
    add_user_changes(v0, env)
    return {"fresh": fresh, "v0": v0}


# -- what wb loads, as the model compares it --------------------------------------------------------------------
View = dict[str, Any]


def observe(repo: Path, notes: list[str]) -> tuple[View, list[dict[str, Any]], dict[str, Any]]:
    """(the view, the unrecorded hand edits wb sees, the live session) as wb itself loads them (snapshot + the
    events after it), read in-process without the lock and without writing."""
    from workbench.store.workbench import Workbench

    loaded = Workbench(repo).load(detect_human=True)
    docs = loaded.docs
    view = {
        "tasks": [[t["id"], t["title"], t["status"]] for t in docs.board["tasks"]],
        "active_task_id": docs.state.get("active_task_id"),
        "next_action": docs.state.get("next_action"),
        "blockers": list(docs.state.get("blockers") or []),
        "tasks_completed": (docs.state.get("counters") or {}).get("tasks_completed"),
        "notes": {text: docs.body.count(text) for text in notes},
    }
    return view, loaded.human_edits, copy.deepcopy(docs.state.get("session") or {})


@dataclass
class Op:
    kind: str
    args: list[str]
    label: str
    payload: dict[str, Any] = field(default_factory=dict)

    def landed(self, view: View) -> View:
        """The view once this op is wholly there (harness ops change none of it)."""
        v = copy.deepcopy(view)
        p = self.payload
        tasks = {t[0]: t for t in v["tasks"]}

        def unblock(tid: str) -> None:
            v["blockers"] = [b for b in v["blockers"] if not b.startswith(tid + ": ")]

        if self.kind == "task_add":
            v["tasks"].append([p["id"], p["title"], "todo"])
        elif self.kind == "task_start":
            tasks[p["id"]][2] = "in_progress"
            v["active_task_id"] = p["id"]
            unblock(p["id"])
        elif self.kind == "task_done":
            tasks[p["id"]][2] = "done"
            v["tasks_completed"] += 1
            if v["active_task_id"] == p["id"]:
                v["active_task_id"] = None
            unblock(p["id"])
        elif self.kind == "task_block":
            tasks[p["id"]][2] = "blocked"
            unblock(p["id"])
            v["blockers"].append(f"{p['id']}: {p['reason']}")
        elif self.kind == "task_retitle":
            tasks[p["id"]][1] = p["title"]
        elif self.kind == "task_reopen":
            tasks[p["id"]][2] = "todo"
        elif self.kind == "note":
            v["notes"][p["text"]] = v["notes"].get(p["text"], 0) + 1
        elif self.kind == "set":
            v["next_action"] = p["text"]
        return v


def next_task_id(view: View) -> str:
    numbers = [int(t[0][2:]) for t in view["tasks"]]
    return f"T-{max(numbers, default=0) + 1:03d}"


# -- one schedule -----------------------------------------------------------------------------------------------
@dataclass
class Violation:
    seed: int
    schedule: int
    step: int
    op: str
    kill: str
    message: str

    def line(self) -> str:
        return (f"VIOLATION seed={self.seed} schedule={self.schedule} op#{self.step} `wb {self.op}` {self.kill}: "
                f"{self.message}  (replay: python tools/faultrun.py --only-seed {self.seed})")


@dataclass
class ScheduleResult:
    seed: int
    schedule: int
    kills: int = 0
    repairs: int = 0
    ops: int = 0
    acknowledged: int = 0
    violations: list[Violation] = field(default_factory=list)
    kills_by: Counter[str] = field(default_factory=Counter)
    repairs_by: Counter[str] = field(default_factory=Counter)
    doctor_runs: int = 0
    migrating: bool = False
    seconds: float = 0.0


WORDS = ["alpha", "bravo", "delta", "echo", "gamma", "kilo", "lima", "oscar", "sierra", "tango", "ünïcode", "x y"]


class Schedule:
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

    def _after_ack(self, op: Op, label: str, out: Outcome, before: View) -> bool:
        ok_codes = {0, 3, 4} if op.kind == "harness" else {0}
        if op.kind == "harness" and out.rc == 1 and out.stdout.startswith("DONE (incomplete)"):
            ok_codes.add(1)  # a session with a denied or skipped step ends, but not goal_met (exit 1)
        if out.rc not in ok_codes:
            self.violate(op, label, f"exit {out.rc}: {(out.stderr or out.stdout).strip()[:400]}")
            return False
        self.result.acknowledged += 1
        if out.stderr.strip():
            self.violate(op, label, f"an acknowledged command warned: {out.stderr.strip()[:300]}")
        if op.kind == "task_add" and not out.stdout.startswith(f"{op.payload['id']} added"):
            self.violate(op, label, f"expected {op.payload['id']} as the new id; wb said {out.stdout.strip()!r}")
            return False
        view, edits, session = observe(self.repo, self.notes)
        expected = op.landed(before)
        if view != expected:
            self.violate(op, label, f"acknowledged mutation not as expected: {_diff(expected, view)}")
            return False
        if edits:
            self.violate(op, label, f"wb sees an unrecorded hand edit after its own write: {edits}")
        if op.kind == "harness":
            self._check_harness_outcome(op, label, out, session)
        outside = status_outside(self.repo, self.env)
        if outside != self.user_status:
            self.violate(op, label, f"the user's files changed: {sorted(set(outside) ^ set(self.user_status))}")
        dirty = status_workbench(self.repo, self.env)
        if dirty:
            self.violate(op, label, f"acknowledged but .workbench/ not committed: {dirty.strip()[:200]}")
        self._check_log_grows(op, label)
        self._check_tools(op, label)
        self.view = view
        return True

    def _check_harness_outcome(self, op: Op, label: str, out: Outcome, session: dict[str, Any]) -> None:
        if out.rc == 0 and session:
            self.violate(op, label, f"exit 0 but the session is still live ({session.get('harness_state')})")
        if out.rc == 3 and (session.get("pending") or {}).get("kind") not in ("approval", "tool_result", "in_doubt"):
            self.violate(op, label, f"exit 3 but no yield is pending: {session.get('pending')}")
        if out.rc == 4 and not session:
            self.violate(op, label, "exit 4 (paused) but no session is live")

    def _after_kill(self, op: Op, label: str, before: View) -> bool:
        ok = True
        outside = status_outside(self.repo, self.env)
        if outside != self.user_status:
            self.violate(op, label, f"the user's files changed: {sorted(set(outside) ^ set(self.user_status))}")
        status, validate, verify = run_many(self.repo, self.env, [["status", "--json"], ["validate"],
                                                                   ["replay", "--verify"]])
        if status.rc != 0:
            self.violate(op, label, f"the workbench does not load: wb status exited {status.rc}: "
                                    f"{status.stderr.strip()[:300]}")
            return False
        try:
            data = json.loads(status.stdout)
        except ValueError:
            self.violate(op, label, f"wb status --json printed no JSON: {status.stdout[:200]!r}")
            return False
        if data.get("unrecorded_human_edits"):
            self.violate(op, label, f"a crash was taken for a hand edit: {data['unrecorded_human_edits']}")
        live = self._live_session()
        if live and data.get("session") is None:
            self.violate(op, label, "a live session is not shown by wb status")
        ok = self._check_sound(op, label, validate, verify) and ok
        if self.rng.random() < 0.2:
            ok = self._exercise_doctor(op, label) and ok
        view, edits, _session = observe(self.repo, self.notes)
        if edits:
            self.violate(op, label, f"a crash was taken for a hand edit: {edits}")
        landed = op.landed(before)
        if view != before and view != landed:
            self.violate(op, label, "the killed mutation is neither wholly there nor wholly absent, or an "
                                    f"acknowledged one is missing: vs before {_diff(before, view)}; "
                                    f"vs landed {_diff(landed, view)}")
            ok = False
        self._check_log_grows(op, label)
        self._check_tools(op, label)
        self.view = view
        return ok

    def _live_session(self) -> bool:
        _view, _edits, session = observe(self.repo, self.notes)
        return bool(session)

    def _exercise_doctor(self, op: Op, label: str) -> bool:
        """`wb doctor` reports; `--fix` repairs; then it is healthy, and what wb loads has not changed."""
        self.result.doctor_runs += 1
        before, _e, _s = observe(self.repo, self.notes)
        dirty = bool(status_workbench(self.repo, self.env))
        report = run(self.repo, self.env, ["doctor", "--json"])
        if report.rc not in (0, 1):
            self.violate(op, label, f"wb doctor exited {report.rc}: {report.stderr.strip()[:300]}")
            return False
        try:
            codes = [f.get("code") for f in json.loads(report.stdout)["findings"]]
        except (ValueError, KeyError, TypeError):
            self.violate(op, label, f"wb doctor --json printed no findings: {report.stdout[:200]!r}")
            return False
        if dirty and "uncommitted" not in codes:  # listed; exit 0 when the next write commits it (issue 29)
            self.violate(op, label, f"wb doctor does not report the uncommitted .workbench/ (exit {report.rc}, "
                                    f"findings {codes})")
        fix = run(self.repo, self.env, ["doctor", "--fix", "--json"])
        if fix.rc != 0:
            self.violate(op, label, f"wb doctor --fix did not repair (exit {fix.rc}): "
                                    f"{(fix.stdout + fix.stderr).strip()[:400]}")
            return False
        try:
            findings = json.loads(fix.stdout).get("findings", [])
        except (ValueError, AttributeError):
            findings = []
        fixed = [f.get("code") for f in findings if isinstance(f, dict) and f.get("fixed")]
        if fixed:
            self.result.repairs += 1
            for code in fixed:
                self.result.repairs_by[f"doctor:{code}"] += 1
        again = run(self.repo, self.env, ["doctor"])
        if again.rc != 0:
            self.violate(op, label, f"wb doctor is not healthy after --fix: {(again.stdout + again.stderr).strip()}")
            return False
        if status_workbench(self.repo, self.env):
            self.violate(op, label, "wb doctor --fix left .workbench/ uncommitted")
        after, _e, _s = observe(self.repo, self.notes)
        if after != before:
            self.violate(op, label, f"wb doctor --fix changed what wb loads: {_diff(before, after)}")
            return False
        return True

    def _check_sound(self, op: Op, label: str, validate: Outcome | None = None,
                     verify: Outcome | None = None) -> bool:
        """`wb validate` (after `wb doctor --fix` of a torn tail) and `wb replay --verify`."""
        if validate is None or verify is None:
            validate, verify = run_many(self.repo, self.env, [["validate"], ["replay", "--verify"]])
        if validate.rc == 5 and "torn" in validate.stderr:
            fix = run(self.repo, self.env, ["doctor", "--fix"])
            self.result.repairs += 1
            self.result.repairs_by["torn_tail"] += 1
            if fix.rc != 0:
                self.violate(op, label, f"wb doctor --fix did not repair a torn tail: {fix.stdout}{fix.stderr}")
                return False
            validate, verify = run_many(self.repo, self.env, [["validate"], ["replay", "--verify"]])
        if validate.rc != 0:
            self.violate(op, label, f"wb validate exited {validate.rc}: "
                                    f"{(validate.stderr or validate.stdout).strip()[:400]}")
            return False
        if verify.rc != 0:
            self.violate(op, label, f"wb replay --verify exited {verify.rc}: "
                                    f"{(verify.stderr or verify.stdout).strip()[:400]}")
            return False
        return True

    def _log(self) -> tuple[list[bytes], bytes, list[dict[str, Any]]]:
        raw = (self.repo / ".workbench" / "events.jsonl").read_bytes()
        cut = raw.rfind(b"\n") + 1
        lines = raw[:cut].splitlines()
        return lines, raw[cut:], [json.loads(line) for line in lines]

    def _check_log_grows(self, op: Op, label: str) -> None:
        lines, _torn, events = self._log()
        if lines[:len(self.log_lines)] != self.log_lines:
            first = next((i for i, (a, b) in enumerate(zip(lines, self.log_lines, strict=False)) if a != b),
                         min(len(lines), len(self.log_lines)))
            self.violate(op, label, f"an event once in the log was lost or changed (line {first + 1}; "
                                    f"{len(self.log_lines)} lines before, {len(lines)} now)")
        if events and events[-1].get("more"):
            self.violate(op, label, "the log ends inside a batch")
        if any(e["type"] == "human.edit" for e in events):
            self.violate(op, label, "a human.edit was recorded, but nobody edited anything by hand")
        self.log_lines = lines

    def _check_tools(self, op: Op, label: str) -> None:
        """Side effects in the counter file against the calls journaled and recorded in the log."""
        runs = Counter(self.counter.read_text().split()) if self.counter.exists() else Counter()
        _lines, _torn, events = self._log()
        dispatched: Counter[str] = Counter()
        tag_of_key: dict[str, str] = {}
        recorded: set[str] = set()
        for e in events:
            p = e.get("payload") or {}
            if e["type"] == "tool.call":
                tag = (p.get("args") or {}).get("tag")
                if tag:
                    tag_of_key[p.get("key")] = tag
                    if p.get("dispatch") == "wb":
                        dispatched[tag] += 1
            elif e["type"] in ("tool.result", "tool.error") and p.get("key") in tag_of_key:
                recorded.add(tag_of_key[p["key"]])
        for tag, n in runs.items():
            if n > dispatched[tag]:
                self.violate(op, label, f"tool step {tag} ran {n}x but only {dispatched[tag]} call(s) were "
                                        "journaled before dispatch")
            if tag in self.frozen and n != self.frozen[tag]:
                self.violate(op, label, f"tool step {tag} ran again after its result was recorded "
                                        f"({self.frozen[tag]} -> {n} runs)")
                self.frozen[tag] = n
            if self.tool_of.get(tag) in NON_IDEMPOTENT and n > 1 + self.human_reruns[tag]:
                self.violate(op, label, f"non-idempotent tool step {tag} ran {n}x with "
                                        f"{self.human_reruns[tag]} re-run(s) approved by a person")
        for tag in recorded:
            self.frozen.setdefault(tag, runs[tag])

    # -- the end of a schedule -------------------------------------------------------------------------------
    def _finish(self) -> None:
        self.step += 1
        op = Op("task_add", ["task", "add", "final"], "task add final", {"id": next_task_id(self.view),
                                                                       "title": "final"})
        out = self._exec(op, ("", {}))
        if out.hung or not self._after_ack(op, "(end of schedule)", out, copy.deepcopy(self.view)):
            return
        if not self._check_sound(op, "(end of schedule)"):
            return
        self._doctor_at_end(op)
        changed = git(self.repo, self.env, "log", "--format=", "--name-only", f"{self.head0}..HEAD").split()
        outside = sorted({p for p in changed if not p.startswith(".workbench/")})
        if outside:
            self.violate(op, "(end of schedule)", f"wb commits touched files outside .workbench/: {outside}")
        ids = [t[0] for t in self.view["tasks"]]
        if len(ids) != len(set(ids)):
            self.violate(op, "(end of schedule)", f"duplicate task ids: {ids}")


    def _doctor_at_end(self, op: Op) -> None:
        """`wb doctor`: healthy, or what it reports is all fixable and `--fix` makes it healthy (leftover temp
        files of writes a kill interrupted are the usual find)."""
        label = "(end of schedule)"
        doctor = run(self.repo, self.env, ["doctor", "--json"])
        if doctor.rc == 0:
            return
        try:
            findings = json.loads(doctor.stdout)["findings"]
        except (ValueError, KeyError, TypeError):
            self.violate(op, label, f"wb doctor exited {doctor.rc}: {(doctor.stdout + doctor.stderr).strip()[:300]}")
            return
        unfixable = [f for f in findings if not f.get("fixable")]
        if unfixable:
            self.violate(op, label, f"wb doctor finds what it cannot repair: {unfixable}")
            return
        fix = run(self.repo, self.env, ["doctor", "--fix"])
        again = run(self.repo, self.env, ["doctor"])
        if fix.rc != 0 or again.rc != 0:
            self.violate(op, label, f"wb doctor --fix did not repair {findings}: {(fix.stdout + again.stdout).strip()}")
            return
        self.result.repairs += 1
        for f in findings:
            self.result.repairs_by[f"doctor:{f.get('code')}"] += 1


def _diff(a: View, b: View) -> str:
    parts = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            if key == "tasks":
                ta, tb = {t[0]: t for t in a[key]}, {t[0]: t for t in b[key]}
                delta = {tid: (ta.get(tid), tb.get(tid)) for tid in sorted(set(ta) | set(tb))
                         if ta.get(tid) != tb.get(tid)}
                parts.append(f"tasks {delta}")
            elif key == "notes":
                na, nb = a[key], b[key]
                parts.append("notes " + str({t: (na.get(t), nb.get(t)) for t in set(na) | set(nb)
                                             if na.get(t) != nb.get(t)}))
            else:
                parts.append(f"{key} {a.get(key)!r} -> {b.get(key)!r}")
    return "; ".join(parts) or "(same)"


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
