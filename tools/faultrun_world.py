"""faultrun's world: the fault points it kills at, the tools its plans run, the `wb` and git processes it
starts and waits for, the template repositories, and what it observes of a workbench (tools/faultrun.py)."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
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
    "before_git_listing", "after_git_objects", "before_git_ref", "after_git_ref", "index_locked",
    "before_index_rename", "after_index_swap", "after_git_commit",
    "settle_dropped_last",
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
