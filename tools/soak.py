#!/usr/bin/env python3
"""soak: concurrent `wb` writers on one workbench for a bounded time, then an audit of what they were told.

    python tools/soak.py --seconds 300 --procs 8        # the long soak (docs/reliability.md)
    python tools/soak.py --seconds 10 --procs 8         # CI-sized

`--procs` client streams run side by side against one repository (a staged file, an unstaged edit and an
untracked file of the user's in it). Each stream is a thread that runs real `wb` processes one after the
other, so up to `--procs` wb processes compete for the workbench lock at any moment:

  - procs-1 task streams mix `wb task add`, `wb task start`, `wb task done` (of their own tasks) and `wb note`;
    every third one runs with a short WB_LOCK_TIMEOUT (50-400 ms), so it meets lock timeouts;
  - one harness stream drives sessions: `wb run GOAL --plan p.yaml` over counting tools (idempotent, and
    non-idempotent needing approval) and a tool wb does not run, then `wb resume --approve/--result` until
    each session completes.

Every wb process has a hard timeout (a hang is counted, never waited for). At the end:

  - lost: an acknowledged (exit 0) add, note, start or done whose effect is missing or overwritten;
  - duplicates: a task id used twice, a title or note present twice, a tool step run twice;
  - no phantom: a command that was refused (exit 6) left nothing behind;
  - lock timeouts: every exit 6 is one line on stderr naming the lock (after the line saying it waited, if it
    waited over a second); any other failure is an error;
  - no torn line in events.jsonl or calls.jsonl, seqs 1..N, the hash chain intact;
  - `wb validate` and `wb replay --verify` pass; `.workbench/` is committed; the user's files are untouched;
    every commit touched .workbench/ only.

Summary: `soak: procs=8 seconds=S ops=N acknowledged=A lost=0 duplicates=0 lock_timeouts=L hangs=0`, after one
line per problem. Exit 1 on any lost update, duplicate, hang, error or other problem.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faultrun_world import (  # noqa: E402 - the shared helpers of the reliability tools
    WB,
    add_user_changes,
    base_env,
    git,
    make_user_repo,
    status_outside,
    status_workbench,
    tools_yaml,
)

HARD_TIMEOUT = 120.0  # seconds a single wb process may take before it counts as hung


@dataclass
class Rec:
    stream: str
    kind: str
    args: list[str]
    rc: int
    stdout: str
    stderr: str
    seconds: float
    hung: bool = False


@dataclass
class Audit:
    ops: int = 0
    acknowledged: int = 0
    lost: int = 0
    duplicates: int = 0
    lock_timeouts: int = 0
    hangs: int = 0
    sessions: int = 0
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        self.problems.append(text)


class Soak:
    def __init__(self, base: Path, seconds: float, procs: int, seed: int) -> None:
        self.base = base
        self.seconds = seconds
        self.procs = procs
        self.rng = random.Random(seed)
        home = base / "home"
        home.mkdir(parents=True)
        self.env = base_env(home)
        self.env["WB_LOCK_TIMEOUT"] = "60"
        self.repo = base / "repo"
        self.counter = base / "counter"
        self.records: list[Rec] = []
        self.lock = threading.Lock()
        self.deadline = 0.0
        self.audit = Audit()
        # what each task stream was told: acked ops, in order
        self.acked_tasks: dict[str, tuple[str, str]] = {}  # id -> (stream, title)
        self.task_status: dict[str, str] = {}  # id -> status after its last acknowledged op
        self.refused_titles: list[str] = []
        self.acked_notes: list[str] = []
        self.refused_notes: list[str] = []
        self.sessions_done: list[str] = []  # goals of sessions that completed (exit 0)
        self.tags: dict[str, str] = {}  # tool step tag -> tool

    # -- setup --------------------------------------------------------------------------------------------
    def setup(self) -> None:
        make_user_repo(self.repo, self.env)
        init = self.wb("setup", "init", ["init"])
        if init.rc != 0:
            raise RuntimeError(f"wb init failed: {init.stderr}")
        config = self.repo / ".workbench" / "config.yaml"
        # an unattended pipeline: its `wb resume --approve/--deny` answer as the agent (approvals: any, CI's opt-in)
        text = config.read_text().replace("approvals: human", "approvals: any", 1)
        config.write_text(text.replace("tools: {}\n", tools_yaml()))
        git(self.repo, self.env, "add", ".workbench")
        git(self.repo, self.env, "commit", "-q", "-m", "declare the bump tools")
        add_user_changes(self.repo, self.env)
        self.user_status = status_outside(self.repo, self.env)
        self.head0 = git(self.repo, self.env, "rev-parse", "HEAD").strip()

    # -- one wb process -----------------------------------------------------------------------------------
    def wb(self, stream: str, kind: str, args: list[str], lock_timeout: float | None = None) -> Rec:
        env = dict(self.env)
        if lock_timeout is not None:
            env["WB_LOCK_TIMEOUT"] = f"{lock_timeout:.3f}"
        start = time.monotonic()
        proc = subprocess.Popen([*WB, *args], cwd=self.repo, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hung = False
        try:
            out, err = proc.communicate(timeout=HARD_TIMEOUT)
        except subprocess.TimeoutExpired:
            hung = True
            proc.kill()
            out, err = proc.communicate()
        rec = Rec(stream, kind, args, proc.returncode, out, err, time.monotonic() - start, hung)
        if kind != "status":
            with self.lock:
                self.records.append(rec)
        return rec

    def busy(self, rec: Rec) -> bool:
        """An exit 6: counted; it must be one line on stderr about the lock."""
        if rec.rc != 6:
            return False
        with self.lock:
            self.audit.lock_timeouts += 1
            lines = rec.stderr.strip().splitlines()
            # the wait shown off a terminal (one line once it passes a second: the timeout counts from the last
            # hand-over, so a writer can wait longer than it), then the one line of the refusal
            lines = [line for line in lines if not line.startswith("wb: waiting for the workbench lock: ")]
            if len(lines) != 1 or "lock" not in lines[0] or "Traceback" in rec.stderr:
                self.audit.problem(f"{rec.stream}: `wb {' '.join(rec.args)}` exit 6 without a one-line lock "
                                   f"message: {rec.stderr.strip()[:300]}")
        return True

    def failed(self, rec: Rec) -> None:
        with self.lock:
            if rec.hung:
                self.audit.hangs += 1
                self.audit.problem(f"{rec.stream}: `wb {' '.join(rec.args)}` hung (> {HARD_TIMEOUT:g}s)")
            else:
                self.audit.problem(f"{rec.stream}: `wb {' '.join(rec.args)}` exit {rec.rc}: "
                                   f"{(rec.stderr or rec.stdout).strip()[:300]}")

    # -- task streams -------------------------------------------------------------------------------------
    def task_stream(self, n: int, seed: int) -> None:
        rng = random.Random(seed)
        stream = f"w{n}"
        short = n % 3 == 2  # some streams give up on the lock quickly
        mine: dict[str, str] = {}  # id -> status, as this stream was told
        count = 0
        while time.monotonic() < self.deadline:
            count += 1
            timeout = rng.uniform(0.05, 0.4) if short else None
            todo = [t for t, s in mine.items() if s == "todo"]
            going = [t for t, s in mine.items() if s in ("todo", "in_progress")]
            choice = rng.choices(["add", "note", "start", "done"],
                                 [4, 3, 2 if todo else 0, 2 if going else 0])[0]
            if choice == "add":
                title = f"{stream}-task-{count:04d}"
                rec = self.wb(stream, "add", ["task", "add", title], timeout)
                if self.busy(rec):
                    with self.lock:
                        self.refused_titles.append(title)
                    continue
                m = re.match(r"(T-\d{3,}) added: (.*)$", rec.stdout.strip())
                if rec.rc != 0 or not m or m.group(2) != title:
                    self.failed(rec)
                    continue
                with self.lock:
                    if m.group(1) in self.acked_tasks:
                        self.audit.duplicates += 1
                        self.audit.problem(f"{stream}: {m.group(1)} was given to two adds: "
                                           f"{self.acked_tasks[m.group(1)]} and {title!r}")
                    self.acked_tasks[m.group(1)] = (stream, title)
                    self.task_status[m.group(1)] = "todo"
                mine[m.group(1)] = "todo"
            elif choice == "note":
                text = f"{stream} note {count:04d} {rng.randrange(10**6)}"
                rec = self.wb(stream, "note", ["note", text], timeout)
                if self.busy(rec):
                    with self.lock:
                        self.refused_notes.append(text)
                    continue
                if rec.rc != 0:
                    self.failed(rec)
                    continue
                with self.lock:
                    self.acked_notes.append(text)
            else:
                tid = rng.choice(todo if choice == "start" else going)
                rec = self.wb(stream, choice, ["task", choice, tid], timeout)
                if self.busy(rec):
                    continue
                if rec.rc != 0:
                    self.failed(rec)
                    continue
                status = "in_progress" if choice == "start" else "done"
                mine[tid] = status
                with self.lock:
                    self.task_status[tid] = status

    # -- the harness stream -------------------------------------------------------------------------------
    def harness_stream(self, seed: int) -> None:
        rng = random.Random(seed)
        stream = "harness"
        n = 0
        while time.monotonic() < self.deadline:
            n += 1
            goal = f"soak goal {n}"
            steps = []
            for i in range(rng.randint(2, 4)):
                what = rng.choice(["bump", "bump_once", "think", "deploy"])
                tag = f"{n}.s{i + 1}"
                step: dict[str, Any] = {"id": f"s{i + 1}", "description": f"{what} {tag}"}
                if what != "think":
                    step["tool"] = what
                    step["args"] = {"file": str(self.counter), "tag": tag}
                    if what != "deploy":
                        self.tags[tag] = what
                steps.append(step)
            plan = self.base / f"plan-{n}.json"
            plan.write_text(json.dumps({"steps": steps}))
            rec = self.wb(stream, "run", ["run", goal, "--plan", str(plan), "--json"])
            for _turn in range(3 * len(steps) + 3):  # each step yields at most twice; a session always ends
                if rec.rc == 0:
                    with self.lock:
                        self.sessions_done.append(goal)
                    break
                if rec.rc not in (3, 4):
                    self.failed(rec)
                    return
                try:
                    kind = json.loads(rec.stdout).get("kind")
                except ValueError:
                    self.failed(rec)
                    return
                args = ["resume", "--json"]
                if kind == "approval":
                    args.append("--approve")
                elif kind in ("tool_result", "in_doubt"):
                    args += ["--result", json.dumps({"exit_code": 0, "by": "soak"})]
                else:
                    args += ["--extend", "turns=20"]
                rec = self.wb(stream, "resume", args)
            else:
                with self.lock:
                    self.audit.problem(f"harness: session {goal!r} did not end after {3 * len(steps) + 3} resumes")
                return

    # -- the run and the audit ----------------------------------------------------------------------------
    def go(self) -> Audit:
        self.setup()
        self.deadline = time.monotonic() + self.seconds
        threads = [threading.Thread(target=self.task_stream, args=(n, self.rng.randrange(2**32)), daemon=True)
                   for n in range(max(self.procs - 1, 1))]
        if self.procs > 1:
            threads.append(threading.Thread(target=self.harness_stream, args=(self.rng.randrange(2**32),),
                                            daemon=True))
        for t in threads:
            t.start()
        for t in threads:
            t.join(self.seconds + 20 * HARD_TIMEOUT)
            if t.is_alive():
                self.audit.hangs += 1
                self.audit.problem(f"a client stream did not finish ({t.name})")
        self.check()
        return self.audit

    def check(self) -> None:
        a = self.audit
        a.ops = len(self.records)
        a.acknowledged = sum(1 for r in self.records if r.rc == 0 or (r.kind in ("run", "resume") and r.rc in (3, 4)))
        a.sessions = len(self.sessions_done)
        checks = [self.wb("audit", "status", ["validate"]), self.wb("audit", "status", ["replay", "--verify"])]
        for rec in checks:
            if rec.rc != 0:
                a.problem(f"`wb {' '.join(rec.args)}` exit {rec.rc}: {(rec.stderr or rec.stdout).strip()[:400]}")

        wbdir = self.repo / ".workbench"
        # the log: no torn line, seqs 1..N, unique ids, the hash chain
        raw = (wbdir / "events.jsonl").read_bytes()
        if raw and not raw.endswith(b"\n"):
            a.problem("events.jsonl ends with a torn line")
        from workbench.model.jsonl import encode
        from workbench.model.segments import LOG_DIR, WholeLog, is_segment_name

        # a long soak seals its first events into log/ (docs/files.md): the whole log is the segments, then the tail
        segments = sorted((f.name, f.read_bytes()) for f in (wbdir / LOG_DIR).glob("*") if is_segment_name(f.name)) \
            if (wbdir / LOG_DIR).is_dir() else []
        whole = WholeLog(segments, raw)
        lines = [encode(e) for e in whole.sealed] + raw.splitlines()[len(raw.splitlines()) - len(whole.unsealed):]
        events = []
        prev = None
        for i, line in enumerate(lines, 1):
            try:
                event = json.loads(line)
            except ValueError:
                a.problem(f"events.jsonl line {i} is not JSON (torn or damaged)")
                break
            if event.get("seq") != i:
                a.problem(f"events.jsonl line {i} has seq {event.get('seq')}")
            if event.get("prev") != prev:
                a.problem(f"hash chain broken at seq {i}")
            prev = hashlib.sha256(line).hexdigest()
            events.append(event)
        if len({e.get("id") for e in events}) != len(events):
            a.duplicates += 1
            a.problem("duplicate event ids")
        calls = (wbdir / "calls.jsonl").read_bytes()
        if calls and not calls.endswith(b"\n"):
            a.problem("calls.jsonl ends with a torn line")
        for i, line in enumerate(calls.splitlines(), 1):
            try:
                json.loads(line)
            except ValueError:
                a.problem(f"calls.jsonl line {i} is not JSON")

        # the board and the decision log against what the clients were told
        from workbench.store.workbench import Workbench

        loaded = Workbench(self.repo).load(detect_human=True)
        if loaded.human_edits:
            a.problem(f"wb sees unrecorded hand edits: {loaded.human_edits}")
        tasks = loaded.docs.board["tasks"]
        body = loaded.docs.body
        ids = Counter(t["id"] for t in tasks)
        for tid, n in ids.items():
            if n > 1:
                a.duplicates += 1
                a.problem(f"task id {tid} is on the board {n} times")
        titles = Counter(t["title"] for t in tasks)
        by_id = {t["id"]: t for t in tasks}
        for tid, (stream, title) in self.acked_tasks.items():
            task = by_id.get(tid)
            if task is None or task["title"] != title:
                a.lost += 1
                a.problem(f"lost: {stream}'s acknowledged add {tid} {title!r} is {task and task['title']!r}")
                continue
            if titles[title] > 1:
                a.duplicates += 1
                a.problem(f"duplicate: {title!r} is on the board {titles[title]} times")
            if task["status"] != self.task_status[tid]:
                a.lost += 1
                a.problem(f"lost update: {tid} is {task['status']}, its last acknowledged change made it "
                          f"{self.task_status[tid]}")
        for title in self.refused_titles:
            if titles[title]:
                a.problem(f"phantom: {title!r} was refused (exit 6) but is on the board")
        for text in self.acked_notes:
            n = body.count(text)
            if n == 0:
                a.lost += 1
                a.problem(f"lost: acknowledged note {text!r} is not in state.md")
            elif n > 1:
                a.duplicates += 1
                a.problem(f"duplicate: note {text!r} is in state.md {n} times")
        for text in self.refused_notes:
            if text in body:
                a.problem(f"phantom: note {text!r} was refused (exit 6) but is in state.md")
        completed = {e["payload"].get("goal") for e in events if e["type"] == "session.start"}
        for goal in self.sessions_done:
            if goal not in completed:
                a.lost += 1
                a.problem(f"lost: completed session {goal!r} has no session.start in the log")
        done_sessions = sum(1 for e in events if e["type"] == "session.complete")
        if done_sessions < len(self.sessions_done):
            a.lost += 1
            a.problem(f"{len(self.sessions_done)} sessions completed, {done_sessions} session.complete in the log")

        # tools: each step's side effect exactly once (nothing was killed, so nothing was in doubt)
        runs = Counter(self.counter.read_text().split()) if self.counter.exists() else Counter()
        for tag, n in runs.items():
            if n > 1:
                a.duplicates += 1
                a.problem(f"duplicate: tool step {tag} ({self.tags.get(tag)}) ran {n} times")
        results = {(e["payload"].get("key") or "") for e in events if e["type"] == "tool.result"}
        dispatched = {e["payload"]["args"]["tag"]: e["payload"]["key"] for e in events
                      if e["type"] == "tool.call" and e["payload"].get("dispatch") == "wb"}
        for tag, key in dispatched.items():
            if key in results and runs[tag] != 1:
                a.lost += 1
                a.problem(f"tool step {tag} has a recorded result but ran {runs[tag]} times")

        # git: the user's files untouched, .workbench/ committed, commits only under .workbench/
        if status_outside(self.repo, self.env) != self.user_status:
            a.problem(f"the user's files changed: {status_outside(self.repo, self.env)} vs {self.user_status}")
        dirty = status_workbench(self.repo, self.env)
        if dirty:
            a.problem(f".workbench/ not committed at the end: {dirty.strip()[:300]}")
        changed = git(self.repo, self.env, "log", "--format=", "--name-only", f"{self.head0}..HEAD").split()
        outside = sorted({p for p in changed if not p.startswith(".workbench/")})
        if outside:
            a.problem(f"wb commits touched files outside .workbench/: {outside}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30, help="how long the clients run (default 30)")
    parser.add_argument("--procs", type=int, default=8, help="concurrent client streams (default 8)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, help="where the repository goes (default: a temp directory)")
    parser.add_argument("--keep", action="store_true", help="keep the repository")
    parser.add_argument("--report", type=Path, help="write the figures as JSON to this file")
    args = parser.parse_args(argv)

    start = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="soak-", dir=args.workdir))
    audit = Soak(base, args.seconds, args.procs, args.seed).go()
    elapsed = time.monotonic() - start
    bad = audit.lost or audit.duplicates or audit.hangs or audit.problems
    for line in audit.problems:
        print(f"PROBLEM {line}")
    if bad or args.keep:
        print(f"soak: repository kept in {base}", file=sys.stderr)
    else:
        shutil.rmtree(base, ignore_errors=True)
    if args.report:
        import os

        args.report.write_text(json.dumps({
            "procs": args.procs, "seconds": args.seconds, "wall_seconds": round(elapsed, 1), "ops": audit.ops,
            "acknowledged": audit.acknowledged, "lost": audit.lost, "duplicates": audit.duplicates,
            "lock_timeouts": audit.lock_timeouts, "hangs": audit.hangs, "sessions_completed": audit.sessions,
            "problems": audit.problems, "load_average": os.getloadavg(), "cpus": os.cpu_count(),
        }, indent=1) + "\n")
    print(f"soak: procs={args.procs} seconds={args.seconds:g} ops={audit.ops} acknowledged={audit.acknowledged} "
          f"lost={audit.lost} duplicates={audit.duplicates} lock_timeouts={audit.lock_timeouts} hangs={audit.hangs}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
