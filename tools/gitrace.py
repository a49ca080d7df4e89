#!/usr/bin/env python3
"""gitrace: wb writers against a loop of the user's own git commands, then an audit of what wb acknowledged.

    python tools/gitrace.py --seconds 120 --writers 3        # the long run (docs/reliability.md)
    python tools/gitrace.py --seconds 10 --writers 2         # CI-sized (tests/reliability/test_gitrace.py)

One repository; `--writers` streams run real `wb note` processes one after the other (each note's text is
unique, so it can be found again), and one stream is the user, running at random, as fast as git goes:

    commit -a of their own file · stash && stash pop · checkout -b / checkout back · commit --amend of
    their own commit · a merge that conflicts, then merge --abort · git gc

At the end the user's last operation is undone as a person would (a pending stash is popped, the branch
is main again), `wb doctor --fix` runs once, and the audit counts:

  - acknowledged: `wb note` calls that exited 0;
  - lost: acknowledged notes found in none of: any branch's committed log, the stash, the working log
    (must be 0);
  - user git commands that failed because of wb, and why (goal 0): git found a file under .workbench/ that
    wb was writing (its stderr names it), or the index.lock wb takes for its index update (the user's stream
    runs one command at a time, so a taken index.lock is wb's);
  - user git commands that failed otherwise: a true collision on the branch (wb moved it as the user's
    commit read it: `cannot lock ref`), a conflict the user made on purpose; `gitrace causes:` counts each.

`--ref BRANCH` runs the race with `wb init --ref BRANCH` (state on its own branch, untracked on the user's).
  - `wb validate` and `wb replay --verify` after the final doctor.

Summary: `gitrace: seconds=S writers=W user_ops=N acknowledged=A lost=L user_failures_wb=F user_failures=G`,
after one line per problem. Exit 1 when something acknowledged was lost or the workbench does not validate.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faultrun_world import WB, base_env, git, make_user_repo  # noqa: E402 - the shared helpers of the reliability tools

# Why a user's git command failed. The user's stream runs one git command at a time, so an index.lock it finds
# taken is wb's (its index update), and so is a work-tree file under .workbench/ that git finds modified.
WB_CAUSES = ("workbench files", "index.lock")


def _cause(stderr: str) -> str:
    if "index.lock" in stderr:
        return "index.lock"
    if ".workbench" in stderr:
        return "workbench files"
    if "cannot lock ref" in stderr or "but expected" in stderr:
        return "ref moved (a true collision: wb moved the branch as the command read it)"
    return "the user's own (a conflict made on purpose)"


@dataclass
class Audit:
    user_ops: Counter[str] = field(default_factory=Counter)
    user_failures: list[str] = field(default_factory=list)  # failed for the user's own reasons
    user_failures_wb: list[str] = field(default_factory=list)  # failed because of wb (WB_CAUSES)
    causes: Counter[str] = field(default_factory=Counter)  # why each failed user command failed
    acknowledged: list[str] = field(default_factory=list)
    refused: Counter[int] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)


class Race:
    def __init__(self, base: Path, seconds: float, writers: int, seed: int, ref: str | None = None,
                 verbose: bool = False) -> None:
        self.ref = ref
        self.verbose = verbose
        self.base = base
        self.repo = base / "repo"
        self.env = base_env(base / "home")
        self.seconds = seconds
        self.writers = writers
        self.rng = random.Random(seed)
        self.audit = Audit()
        self.lock = threading.Lock()
        self.stop = threading.Event()

    # -- setup ------------------------------------------------------------------------------
    def setup(self) -> None:
        (self.base / "home").mkdir(parents=True, exist_ok=True)
        make_user_repo(self.repo, self.env)
        init = [*WB, "init", *(["--ref", self.ref] if self.ref else [])]
        proc = subprocess.run(init, cwd=self.repo, env=self.env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"wb init failed: {proc.stderr}")
        # a branch whose own file conflicts with main's, for the merge the user aborts
        git(self.repo, self.env, "checkout", "-q", "-b", "conflicting")
        (self.repo / "src.py").write_text("print('the other branch')\n")
        git(self.repo, self.env, "commit", "-q", "-am", "conflicting change")
        git(self.repo, self.env, "checkout", "-q", "main")

    # -- the streams ---------------------------------------------------------------------------
    def writer(self, n: int) -> None:
        i = 0
        while not self.stop.is_set():
            text = f"w{n}-note-{i:05d}"
            i += 1
            proc = subprocess.run([*WB, "note", text], cwd=self.repo, env=self.env, capture_output=True, text=True,
                                  timeout=120)
            with self.lock:
                if proc.returncode == 0:
                    self.audit.acknowledged.append(text)
                else:
                    self.audit.refused[proc.returncode] += 1
                    if proc.returncode not in (5, 6):  # refused (a check failed) or busy are answers, not bugs
                        self.audit.problems.append(f"wb note exited {proc.returncode}: {proc.stderr.strip()[:200]}")

    def user_git(self, name: str, *args: str, expect_fail: bool = False) -> bool:
        proc = subprocess.run(["git", *args], cwd=self.repo, env=self.env, capture_output=True, text=True)
        with self.lock:
            self.audit.user_ops[name] += 1
            if proc.returncode != 0 and not expect_fail:
                line = f"git {' '.join(args)}: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''}"
                cause = _cause(proc.stderr)
                if cause in WB_CAUSES:
                    named = sorted({w.strip("'\"").rstrip(".,:") for w in proc.stderr.split() if ".workbench/" in w})
                    self.audit.user_failures_wb.append(f"{line} ({cause}{': ' if named else ''}{', '.join(named)})")
                else:
                    self.audit.user_failures.append(line)
                self.audit.causes[cause] += 1
                if self.verbose:
                    print(f"--- git {' '.join(args)} ({cause}):\n{proc.stderr}", file=sys.stderr)
        return proc.returncode == 0

    def user(self) -> None:
        counter = 0
        while not self.stop.is_set():
            op = self.rng.choice(["commit", "stash", "checkout", "amend", "merge_abort", "gc"])
            counter += 1
            if op == "commit":
                (self.repo / "user.txt").write_text(f"user edit {counter}\n")
                self.user_git("commit", "add", "user.txt")
                self.user_git("commit", "commit", "-q", "-m", f"user commit {counter}", "--", "user.txt")
            elif op == "stash":
                (self.repo / "src.py").write_text(f"print('wip {counter}')\n")
                if self.user_git("stash", "stash", "push", "-q"):
                    time.sleep(self.rng.random() * 0.2)
                    self.user_git("stash", "stash", "pop", "-q")
            elif op == "checkout":
                if self.user_git("checkout", "checkout", "-q", "-b", f"topic-{counter}"):
                    time.sleep(self.rng.random() * 0.2)
                    self.user_git("checkout", "checkout", "-q", "main")
            elif op == "amend":
                if (self.repo / "user.txt").exists():
                    (self.repo / "user.txt").write_text(f"amended {counter}\n")
                    self.user_git("amend", "commit", "-q", "--amend", "-m", f"user commit, amended {counter}",
                                  "--", "user.txt")
            elif op == "merge_abort":
                (self.repo / "src.py").write_text("print('v1')\n")
                self.user_git("merge_abort", "checkout", "-q", "--", "src.py")
                if not self.user_git("merge_abort", "merge", "-q", "--no-edit", "conflicting", expect_fail=True):
                    time.sleep(self.rng.random() * 0.2)  # wb writes while the conflicted merge waits
                    self.user_git("merge_abort", "merge", "--abort")
            elif op == "gc":
                self.user_git("gc", "gc", "--quiet")

    # -- the run ---------------------------------------------------------------------------------
    def go(self) -> Audit:
        self.setup()
        threads = [threading.Thread(target=self.writer, args=(n,)) for n in range(self.writers)]
        threads.append(threading.Thread(target=self.user))
        for t in threads:
            t.start()
        time.sleep(self.seconds)
        self.stop.set()
        for t in threads:
            t.join(timeout=180)
        self.settle()
        self.check()
        return self.audit

    def settle(self) -> None:
        """What a person does after the race: finish what is half done, back on main, then `wb doctor --fix`."""
        subprocess.run(["git", "merge", "--abort"], cwd=self.repo, env=self.env, capture_output=True)
        if subprocess.run(["git", "stash", "list"], cwd=self.repo, env=self.env, capture_output=True,
                          text=True).stdout.strip():
            subprocess.run(["git", "stash", "pop", "-q"], cwd=self.repo, env=self.env, capture_output=True)
        subprocess.run(["git", "checkout", "-q", "main"], cwd=self.repo, env=self.env, capture_output=True)
        proc = subprocess.run([*WB, "doctor", "--fix"], cwd=self.repo, env=self.env, capture_output=True, text=True)
        if proc.returncode != 0:
            self.audit.problems.append(f"wb doctor --fix exited {proc.returncode}: {proc.stdout.strip()[-300:]}")

    def notes_anywhere(self) -> set[str]:
        found: set[str] = set()
        refs = git(self.repo, self.env, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/stash").split()
        stashes = git(self.repo, self.env, "stash", "list", "--format=%H").split()
        for ref in refs + stashes:
            proc = subprocess.run(["git", "show", f"{ref}:.workbench/events.jsonl"], cwd=self.repo, env=self.env,
                                  capture_output=True, text=True)
            found |= _notes(proc.stdout)
        log = self.repo / ".workbench" / "events.jsonl"
        if log.exists():
            found |= _notes(log.read_text(errors="replace"))
        return found

    def check(self) -> None:
        anywhere = self.notes_anywhere()
        self.audit.lost = [n for n in self.audit.acknowledged if n not in anywhere]
        for args in (["validate"], ["replay", "--verify"]):
            proc = subprocess.run([*WB, *args], cwd=self.repo, env=self.env, capture_output=True, text=True)
            if proc.returncode != 0:
                self.audit.problems.append(f"wb {' '.join(args)} exited {proc.returncode}: "
                                           f"{(proc.stdout + proc.stderr).strip()[-300:]}")


def _notes(text: str) -> set[str]:
    out = set()
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "note.add":
            out.add(str(event.get("payload", {}).get("text")))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30, help="how long the race runs (default 30)")
    parser.add_argument("--writers", type=int, default=2, help="concurrent wb writer streams (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, help="where the repository goes (default: a temp directory)")
    parser.add_argument("--keep", action="store_true", help="keep the repository")
    parser.add_argument("--report", type=Path, help="write the figures as JSON to this file")
    parser.add_argument("--ref", help="`wb init --ref REF`: state on its own branch, untracked on the user's")
    parser.add_argument("--verbose", action="store_true", help="print the stderr of each failed user command")
    args = parser.parse_args(argv)
    base = args.workdir or Path(tempfile.mkdtemp(prefix="wb-gitrace-"))
    base.mkdir(parents=True, exist_ok=True)
    audit = Race(base, args.seconds, args.writers, args.seed, args.ref, args.verbose).go()
    for line in audit.problems:
        print(f"problem: {line}")
    for line in audit.lost[:20]:
        print(f"lost: {line}")
    for line in audit.user_failures_wb[:20]:
        print(f"user git failed because of wb: {line}")
    for line in audit.user_failures[:10]:
        print(f"user git failed: {line}")
    figures = {"seconds": args.seconds, "writers": args.writers, "user_ops": sum(audit.user_ops.values()),
               "user_ops_by_kind": dict(audit.user_ops), "acknowledged": len(audit.acknowledged),
               "lost": len(audit.lost), "user_failures_wb": len(audit.user_failures_wb),
               "user_failures": len(audit.user_failures), "user_failures_by_cause": dict(audit.causes),
               "refused": dict(audit.refused),
               "problems": len(audit.problems)}
    if args.report:
        args.report.write_text(json.dumps(figures, indent=2))
    print(f"gitrace: seconds={args.seconds:g} writers={args.writers} user_ops={figures['user_ops']} "
          f"acknowledged={figures['acknowledged']} lost={figures['lost']} "
          f"user_failures_wb={figures['user_failures_wb']} user_failures={figures['user_failures']}")
    if audit.causes:
        print("gitrace causes: " + "; ".join(f"{cause} {n}" for cause, n in audit.causes.most_common()))
    if args.workdir is None and not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if audit.lost or audit.problems else 0


if __name__ == "__main__":
    sys.exit(main())
