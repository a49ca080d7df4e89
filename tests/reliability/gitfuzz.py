"""The model of tests/reliability/test_gitfuzz.py: wb's writes (real `wb` processes) interleaved with the user's
own git (real `git`) in a temp repo, with hypothesis's stateful testing choosing the steps.

The model keeps every mutation wb acknowledged (exit 0) with the commit that held it (`anchor`: HEAD after the
write on the files backend; None when nothing in git holds it yet: a queued write, the SQLite backend, or
content an operation such as a rebase or amend carried over). After every step:

  - every acknowledged mutation is on the board/log wb reads, or the user's own operation removed the commit
    that held it (reset --hard to before it, a revert of it, HEAD now somewhere that commit is not an ancestor
    of), or `wb status --json` names it as not yet written;
  - task ids on the board are unique;
  - `wb validate` exit 0 <=> `wb doctor` exit 0 <=> (every few steps) the next write (`wb note`) succeeds;
  - the user's app.py, in the work tree and staged (`git show :app.py`), is byte for byte what their own last
    operation left (wb never touches it).

KNOWN_DEFECTS names the defects of issue 29 that others fix in parallel (their scenario tests are in
tests/reliability/test_gitfuzz_found.py, xfail strict): each entry turns off the one step that reaches it, and
nothing else. The lead empties it when the fixes merge.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests import stored
from tests.conftest import TEST_BACKEND

from .wbhelpers import WB, base_env

# issue 29's defects others are fixing right now; each switch skips only the step that reaches the defect.
KNOWN_DEFECTS: set[str] = set()

# where a real `wb note` is killed (workbench/faults.py); the SQLite backend's own points on that backend
FAULTS_FILES = ("before_event_append", "after_event_append", "after_pending_append", "after_state_write",
                "after_board_write", "after_git_objects", "before_git_ref", "after_git_ref", "after_git_commit")
FAULTS_SQLITE = ("sqlite_before_commit", "sqlite_after_commit")
FAULTS = FAULTS_FILES if TEST_BACKEND == "files" else FAULTS_SQLITE

DRY = os.environ.get("WB_FUZZ_DRY") == "1"  # only to survey which steps a seed draws: no invariant is checked
PLAN = [{"description": "first step"}, {"description": "second step"}]


@dataclass
class Mutation:
    key: tuple[str, str]  # (event type, the task's title / the note's text / the session's goal)
    anchor: str | None  # the commit that holds it; None: must be visible (or named by status) now
    step: int
    undone: str = ""  # the user's operation that removed it, when one did
    carried: bool = False  # its commit was taken off the branch by the user's `reset --soft`: it is the user's
    #                        staged change now, until a wb write commits it again


def _env() -> dict[str, str]:
    extra = {"WB_DEFAULT_BACKEND": TEST_BACKEND} if TEST_BACKEND != "files" else {}
    return base_env(CI="1", **extra)


class GitFuzz(RuleBasedStateMachine):
    """One temp repo per example; `self.trace` is the step list printed on a failure (and replayable by hand).
    `ref_mode`: the workbench records its state on its own ref (`wb init --ref wb-state`, docs/sync.md), which
    none of the user's git operations touches: every acknowledged mutation must stay visible (or be named by
    `wb status` as waiting), whatever they do to their branches."""

    ref_mode = False

    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="wb-gitfuzz-"))
        self.repo = self.base / "repo"
        self.env = _env()
        self.trace: list[str] = []
        self.muts: list[Mutation] = []
        self.n = 0
        self.branches = ["main"]
        self.worktrees: list[Path] = []
        self.paused = False
        self.since_write_check = 0
        self.queued = False
        self.edits: list[str] = []  # the titles the person gave tasks by hand, not yet seen recorded in the log
        self.other: Path | None = None  # ref mode: a second clone of a bare remote, writing and syncing
        self.published: set[tuple[str, str]] = set()  # what the other clone acknowledged and pushed
        self.plan = self.base / "plan.json"
        self.plan.write_text(json.dumps(PLAN))

    # -- running things ----------------------------------------------------------------------------------
    def git(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(["git", *args], cwd=cwd or self.repo, env=env or self.env, capture_output=True,
                              text=True, timeout=120)
        self.trace.append(f"git {' '.join(args)}  # exit {proc.returncode}")
        return proc

    def wb(self, *args: str, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
        env = {**self.env, **extra}
        proc = subprocess.run([WB, *args], cwd=cwd or self.repo, env=env, capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)
        fault = f"WB_FAULT={extra['WB_FAULT']} " if "WB_FAULT" in extra else ""
        self.trace.append(f"{fault}wb {' '.join(args)}  # exit {proc.returncode}")
        assert "Traceback" not in proc.stderr, f"wb {' '.join(args)} crashed:\n{proc.stderr}"
        return proc

    def quiet_git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.repo, env=self.env, capture_output=True,
                              text=True).stdout

    def head(self) -> str:
        return self.quiet_git("rev-parse", "HEAD").strip()

    def branch(self) -> str | None:
        name = self.quiet_git("symbolic-ref", "-q", "--short", "HEAD").strip()
        return name or None

    def busy(self) -> bool:
        """A rebase, merge, cherry-pick, revert or bisect in progress (its own commands end it)."""
        gitdir = Path(self.quiet_git("rev-parse", "--absolute-git-dir").strip())
        return any((gitdir / name).exists() for name in
                   ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG"))

    def user_snapshot(self) -> None:
        """What the user's own operation just left of app.py: the only bytes wb may ever leave there."""
        path = self.repo / "app.py"
        self.app_work = path.read_bytes() if path.exists() else None
        proc = subprocess.run(["git", "show", ":app.py"], cwd=self.repo, env=self.env, capture_output=True)
        self.app_index = proc.stdout if proc.returncode == 0 else None

    # -- setup -----------------------------------------------------------------------------------------
    @initialize()
    def setup(self) -> None:
        self.repo.mkdir()
        self.git("init", "-q", "-b", "main")
        (self.repo / "app.py").write_text("print('v0')\n")
        self.git("add", "app.py")
        self.git("commit", "-q", "-m", "user: app.py")
        assert self.wb("init", *(["--ref", "wb-state"] if self.ref_mode else [])).returncode == 0
        self.init_commit = self.head()  # the user's history rewrites stay after it: before it there is no wb
        self.user_snapshot()

    def teardown(self) -> None:
        if os.environ.get("WB_FUZZ_VERBOSE"):
            print("\n".join(self.trace))
        shutil.rmtree(self.base, ignore_errors=True)

    # -- the model's bookkeeping -------------------------------------------------------------------------
    def acked(self, key: tuple[str, str]) -> None:
        anchor = self.head() if TEST_BACKEND == "files" and self.branch() and not self.busy() and not self.ref_mode \
            else None
        self.land()  # a write on a branch lands what waited before it
        self.muts.append(Mutation(key, anchor, self.n))

    def write(self, key: tuple[str, str] | None, *args: str, ok: tuple[int, ...] = (0,)) -> int:
        self.n += 1
        detached = self.branch() is None or self.busy()
        edited = self.edits_on_board()
        proc = self.wb(*args)
        if proc.returncode == 0:  # a write on a detached HEAD waits in the pending journal; one on a branch lands
            self.queued = detached and TEST_BACKEND == "files"
            self.edits_kept(edited, f"wb {' '.join(args)}")
        if proc.returncode == 0 and key is not None:
            self.acked(key)
        assert proc.returncode in (*ok, 5, 6), f"wb {' '.join(args)} exited {proc.returncode}: {proc.stderr}"
        if proc.returncode == 5:  # refused: the invariants say whether validate/doctor agree it must be
            self.last_refused = f"wb {' '.join(args)}: {proc.stderr.strip()[-300:]}"
        return proc.returncode

    def titles(self) -> list[str]:
        return [f"task-{i}" for i in range(1, self.n + 1) if ("task.add", f"task-{i}") in
                {m.key for m in self.muts if not m.undone}]

    def user_op(self, kind: str, before: str) -> None:
        """After the user's git operation `kind` (HEAD was `before`): what it removed, what it carried over."""
        after = self.head()
        if self.ref_mode:  # their branches hold no state: nothing of wb's is removed or carried
            kind = "none"
        if kind == "remove":  # reset --hard: every commit of before's history that after's lacks is gone
            gone = set(self.quiet_git("rev-list", before, f"^{after}").split())
            for m in self.muts:
                if m.anchor in gone and not m.undone:
                    m.undone = f"reset away {m.anchor[:8]}"
            self.undo_landed(before, after, "reset away")
            self.discard_carried("the user's reset --hard after their reset --soft")  # their staged change
        elif kind == "carry":  # rebase, amend, reset --soft, cherry-pick: what HEAD held is kept, rewritten
            held = self.visible(self.quiet_git("show", f"{after}:.workbench/events.jsonl"))
            for m in self.muts:  # only the commits the operation rewrote: their ancestors stay in history
                if m.anchor and not m.undone and self.is_ancestor(m.anchor, before) \
                        and not self.is_ancestor(m.anchor, after):
                    if m.key in held:  # the rewritten commit holds it (an amend, a rebase): HEAD's history,
                        m.anchor = after  # which the user's next checkout may leave as it leaves any commit
                    else:  # a reset --soft: staged now, committed by no commit
                        m.anchor = None
                        m.carried = True
        self.user_snapshot()

    def undo_landed(self, before: str, after: str, why: str) -> None:
        """A write that waited (on a detached HEAD, mid-rebase) lands in the commit of a later write: what the
        user's operation took out of HEAD's committed log (before -> after) is undone by them, anchor or not."""
        if TEST_BACKEND != "files" or self.ref_mode:
            return
        had = self.visible(self.quiet_git("show", f"{before}:.workbench/events.jsonl"))
        has = self.visible(self.quiet_git("show", f"{after}:.workbench/events.jsonl"))
        for m in self.muts:
            if not m.undone and m.key in had - has:
                m.undone = f"{why} {before[:8]}"

    def after_init(self, rev: str) -> bool:
        """`rev` exists and holds wb's init commit (the user's rewrites never remove the workbench itself)."""
        return self.is_ancestor(self.init_commit, rev)

    def is_ancestor(self, commit: str, of: str = "HEAD") -> bool:
        return subprocess.run(["git", "merge-base", "--is-ancestor", commit, of], cwd=self.repo, env=self.env,
                              capture_output=True).returncode == 0

    # -- wb's writes -----------------------------------------------------------------------------------------
    @rule()
    def task_add(self) -> None:
        if "detached_write" in KNOWN_DEFECTS and (self.branch() is None or self.busy()):
            return  # known defect (a): a task.add queued on a detached HEAD collides after returning
        self.write(("task.add", f"task-{self.n + 1}"), "task", "add", f"task-{self.n + 1}")

    def task_id(self, title: str) -> str | None:
        for task in stored.board(self.repo).get("tasks", []):
            if task.get("title") == title or str(task.get("title")).startswith(f"{title}, by hand "):
                return str(task["id"])
        return None

    def edits_on_board(self) -> list[str]:
        """The hand-given titles board.json holds in the work tree now (a wb write must keep each)."""
        if not self.edits:
            return []
        path = self.repo / ".workbench" / "board.json"
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        return [title for title in self.edits if f'"title": {json.dumps(title)}' in text]

    def edits_kept(self, edited: list[str], write: str) -> None:
        """After `write` succeeded: each hand-given title the board held before it is still on the board (a hand
        edit is never overwritten silently), and the log records it as the person's `human.edit` (or `wb status`
        names events waiting to be written)."""
        if not edited or DRY:
            return
        titles = {t.get("title") for t in stored.board(self.repo).get("tasks", [])}
        lost = [title for title in edited if title not in titles]
        assert not lost, f"{write} overwrote the person's hand edit of board.json: {lost} gone from the board"
        self.note_recorded_edits()

    def note_recorded_edits(self) -> None:
        """A hand edit the log now records is held like any acknowledged write from here on."""
        seen = self.visible()
        for title in list(self.edits):
            if ("human.edit", title) in seen:
                self.edits.remove(title)
                self.muts.append(Mutation(("human.edit", title), None, self.n))
        self.land()

    @rule(which=st.integers(0, 50), action=st.sampled_from(["start", "done", "claim"]))
    def task_move(self, which: int, action: str) -> None:
        titles = self.titles()
        if not titles:
            return
        title = titles[which % len(titles)]
        task_id = self.task_id(title)
        if task_id is None:
            return
        args = ["task", action, task_id]
        if action == "claim":
            args += ["--remote", "none", "--agent", "fuzz"]
        self.n += 1
        edited = self.edits_on_board()
        proc = self.wb(*args)
        if proc.returncode == 0:
            self.edits_kept(edited, f"wb {' '.join(args)}")
            self.acked((f"task.{action}", title))
        # refused because of the task's status (done twice, start a done task) is an answer: exit 5 or 6
        assert proc.returncode in (0, 5, 6), f"wb {' '.join(args)} exited {proc.returncode}: {proc.stderr}"

    @rule()
    def note(self) -> None:
        self.write(("note.add", f"note-{self.n + 1}"), "note", f"note-{self.n + 1}")

    @rule(pause=st.booleans())
    def run_plan(self, pause: bool) -> None:
        if self.paused or ("detached_session" in KNOWN_DEFECTS and (self.branch() is None or self.busy())):
            return
        goal = f"goal-{self.n + 1}"
        code = self.write(("session.start", goal), "run", goal, "--plan", str(self.plan),
                          *(["--max-turns", "1"] if pause else []), ok=(0, 4))
        self.paused = code == 4

    @precondition(lambda self: self.paused)
    @rule()
    def resume(self) -> None:
        if "detached_session" in KNOWN_DEFECTS and (self.branch() is None or self.busy()):
            return
        code = self.write(None, "resume", "--extend", "turns=5", ok=(0, 4))
        self.paused = code == 4  # paused again (its budget) is an answer; refused (5) ends nothing

    def follow_up(self) -> None:
        """The agent's next write, at once (KNOWN_DEFECTS["doctor_uncommitted"]): it commits what waits."""
        if self.branch() is not None and not self.busy():
            self.n += 1
            self.write(("note.add", f"next-{self.n}"), "note", f"next-{self.n}")

    @rule(point=st.sampled_from(FAULTS))
    def killed_write(self, point: str) -> None:
        """A `wb note` killed at a fault point: never acknowledged, so the model does not keep it."""
        if "killed_hand_edit" in KNOWN_DEFECTS and self.queued:
            if self.branch() is None or self.busy():
                return
            self.follow_up()  # lands what waits in the pending journal before the kill
        self.n += 1
        killed = self.wb("note", f"killed-{self.n}", WB_FAULT=point)
        if killed.returncode == 0:  # this write never reached the point: it is acknowledged like any other
            self.acked(("note.add", f"killed-{self.n}"))
        if "doctor_uncommitted" in KNOWN_DEFECTS:  # the defects' scenarios: test_gitfuzz_found.py
            self.follow_up()

    # -- the user's own files and git ----------------------------------------------------------------------
    @rule(stage=st.booleans())
    def edit_app(self, stage: bool) -> None:
        self.n += 1
        (self.repo / "app.py").write_text(f"print('edit {self.n}')\n")
        self.trace.append(f"echo \"print('edit {self.n}')\" > app.py")
        if stage:
            self.git("add", "app.py")
        self.user_snapshot()

    @rule(which=st.integers(0, 50), commit=st.booleans())
    def hand_edit(self, which: int, commit: bool) -> None:
        """The person retitles a task in board.json with their editor (one line's text), and sometimes commits
        that file with their own commit; wb's next write records it as `human.edit` and keeps it."""
        titles = self.titles()
        path = self.repo / ".workbench" / "board.json"
        if TEST_BACKEND != "files" or not titles or self.busy() or not path.exists():
            return
        title = titles[which % len(titles)]
        current = next((t.get("title") for t in stored.board(self.repo).get("tasks", [])
                        if t.get("title") == title or str(t.get("title")).startswith(f"{title}, by hand ")), None)
        text = path.read_text(encoding="utf-8")
        old = f'"title": {json.dumps(current)}'
        if current is None or text.count(old) != 1:
            return
        self.n += 1
        new = f"{title}, by hand {self.n}"
        path.write_text(text.replace(old, f'"title": {json.dumps(new)}'), encoding="utf-8")
        self.trace.append(f"sed -i 's/{old}/\"title\": {json.dumps(new)}/' .workbench/board.json  # by hand")
        self.edits.append(new)
        if commit:
            self.git("commit", "-q", "-m", f"user: retitle {title}", "--", ".workbench/board.json")
        self.user_snapshot()

    @rule()
    def commit_app(self) -> None:
        self.git("commit", "-q", "-m", f"user commit {self.n}", "--", "app.py")
        self.user_snapshot()

    @rule(new=st.booleans(), which=st.integers(0, 10))
    def switch_branch(self, new: bool, which: int) -> None:
        if self.busy():
            return
        if new:
            name = f"topic-{len(self.branches)}"
            if self.git("checkout", "-q", "-b", name).returncode == 0:
                self.branches.append(name)
        else:
            self.git("checkout", "-q", self.branches[which % len(self.branches)])
        self.user_snapshot()

    @rule(back=st.integers(1, 3))
    def detach(self, back: int) -> None:
        if self.busy() or not self.after_init(f"HEAD~{back}"):
            return
        self.git("checkout", "-q", "--detach", f"HEAD~{back}")
        self.user_snapshot()

    @rule(autosquash=st.booleans())
    def rebase_edit(self, autosquash: bool) -> None:
        """`rebase -i HEAD~3` stopping to edit the oldest commit (or --autosquash of a fixup! commit), a wb
        write while it stands there, then --continue (or --abort on a conflict)."""
        if self.busy() or self.branch() is None or not self.after_init("HEAD~4"):
            return
        before = self.head()
        if autosquash:
            target = self.quiet_git("log", "-1", "--format=%s", "HEAD~1").strip()
            (self.repo / "fix.txt").write_text(f"fix {self.n}\n")
            self.git("add", "fix.txt")
            self.git("commit", "-q", "-m", f"fixup! {target}", "--", "fix.txt")
            env = {**self.env, "GIT_SEQUENCE_EDITOR": "true"}
            proc = self.git("rebase", "-q", "-i", "--autosquash", "--autostash", "HEAD~4", env=env)
        else:
            env = {**self.env, "GIT_SEQUENCE_EDITOR": "sed -i '1s/^pick/edit/'"}
            proc = self.git("rebase", "-q", "-i", "--autostash", "HEAD~3", env=env)
            if proc.returncode == 0 and self.busy():
                self.note()  # wb writes at the edit stop (HEAD detached mid-rebase)
                self.git("rebase", "--continue", env={**self.env, "GIT_EDITOR": "true"})
        if self.busy():
            self.git("rebase", "--abort")
        self.user_op("carry", before)

    @rule()
    def bisect(self) -> None:
        if self.busy() or self.branch() is None:
            return
        root = self.quiet_git("rev-list", "--max-parents=0", "HEAD").split()[0]
        self.git("bisect", "start")
        self.git("bisect", "bad", "HEAD")
        self.git("bisect", "good", root)
        self.user_snapshot()
        self.note()  # wb writes where bisect stopped (a detached HEAD)
        self.git("bisect", "reset")
        self.user_snapshot()

    @rule(pop=st.booleans())
    def stash(self, pop: bool) -> None:
        if self.busy():
            return
        proc = self.git("stash", "push", "-q")
        if proc.returncode == 0:  # their stash takes what a reset --soft left staged, as any staged change
            self.discard_carried("stashed by the user after their reset --soft")
        self.user_snapshot()
        if proc.returncode == 0 and pop:
            self.note()
            if self.git("stash", "pop", "-q").returncode != 0:
                self.git("reset", "-q", "--merge")
                self.discard_carried("the user's reset --merge after their reset --soft")
        self.user_snapshot()

    def discard_carried(self, why: str) -> None:
        """What a `reset --soft` left staged (a wb commit the user took off the branch) and the user's own next
        operation then put away (a stash) or threw out (`reset --merge`) is undone by them: it is their staged
        change, which wb never claims back."""
        if TEST_BACKEND != "files" or self.ref_mode:
            return
        committed = self.visible(self.quiet_git("show", "HEAD:.workbench/events.jsonl"))
        for m in self.muts:
            if m.carried and not m.undone and m.anchor is None and m.key not in committed:
                m.undone = why

    @rule(hard=st.booleans(), back=st.integers(1, 2))
    def reset(self, hard: bool, back: int) -> None:
        if self.busy() or not self.after_init(f"HEAD~{back}"):
            return
        if not hard and "soft_reset_over_revert" in KNOWN_DEFECTS and \
                self.quiet_git("log", "-1", "--format=%s").startswith("Revert "):
            return
        before = self.head()
        self.git("reset", "-q", "--hard" if hard else "--soft", f"HEAD~{back}")
        self.user_op("remove" if hard else "carry", before)
        if not hard and "doctor_uncommitted" in KNOWN_DEFECTS:
            self.follow_up()

    @rule()
    def revert(self) -> None:
        if self.busy() or not self.after_init("HEAD~1"):
            return
        before = self.head()
        if self.git("revert", "--no-edit", "HEAD").returncode == 0:
            for m in self.muts:
                if m.anchor == before and not m.undone:
                    m.undone = f"revert of {before[:8]}"
            self.undo_landed(before, "HEAD", "revert of")
        elif self.busy():
            self.git("revert", "--abort")
        self.user_snapshot()

    @rule(which=st.integers(0, 10), how=st.sampled_from(["merge", "squash", "cherry-pick"]))
    def merge(self, which: int, how: str) -> None:
        if self.busy() or self.branch() is None or len(self.branches) < 2:
            return
        other = self.branches[which % len(self.branches)]
        before = self.head()
        if how == "merge":
            proc = self.git("merge", "-q", "--no-edit", other)
        elif how == "squash":
            proc = self.git("merge", "-q", "--squash", other)
            if proc.returncode == 0:
                proc = self.git("commit", "-q", "--no-edit", "-m", f"squash {other}")
        else:
            proc = self.git("cherry-pick", other)
        if self.busy() or proc.returncode != 0:
            for abort in (["merge", "--abort"], ["cherry-pick", "--abort"], ["reset", "-q", "--merge"]):
                if self.busy() or abort[0] == "reset":
                    self.git(*abort)
            self.discard_carried(f"the user's abort of a {how} after their reset --soft")
        self.user_op("carry", before)

    @rule()
    def amend(self) -> None:
        if self.busy() or not self.after_init("HEAD~1"):
            return
        before = self.head()
        self.git("commit", "-q", "--amend", "--no-edit")
        self.user_op("carry", before)

    @rule(remove=st.booleans())
    def worktree(self, remove: bool) -> None:
        if remove and self.worktrees:
            path = self.worktrees.pop()
            self.git("worktree", "remove", "--force", str(path))
        elif not remove:
            path = self.base / f"wt-{self.n}"
            if self.git("worktree", "add", "-q", "-b", f"wt-{self.n}", str(path)).returncode == 0:
                self.worktrees.append(path)
                self.branches.append(f"wt-{self.n}")
                if not ("worktree_remove_sqlite" in KNOWN_DEFECTS and TEST_BACKEND != "files"):
                    self.trace.append(f"cd {path}")
                    if TEST_BACKEND != "files" or self.ref_mode:  # .workbench/ is untracked on SQLite and with
                        # state on its own ref: the worktree inits its own (with the ref: takes up wb-state)
                        assert self.wb("init", cwd=path).returncode == 0
                    note = self.wb("note", f"in linked worktree {self.n}", cwd=path)
                    assert note.returncode == 0, note.stderr
                    self.trace.append(f"cd {self.repo}")
        self.user_snapshot()

    @rule()
    def clean(self) -> None:
        self.git("clean", "-q", "-fdx")
        if not (self.repo / ".workbench").exists():  # SQLite, state on its own ref: .workbench/ is untracked,
            # and git clean took it
            gone = self.wb("status")
            assert gone.returncode == 1 and "run `wb init`" in gone.stderr, gone.stderr  # says what to do next
            assert self.wb("init").returncode == 0  # which the person does; the invariants check nothing is lost
        self.user_snapshot()

    @precondition(lambda self: self.ref_mode)
    @rule(sync_here=st.booleans())
    def other_clone(self, sync_here: bool) -> None:
        """Another clone (of a bare remote this repo's `wb sync` publishes to) adds a task and syncs; then, or at a
        later step, this repo's `wb sync` takes it up — whatever the user's git left here (a detached HEAD, a
        rebase stopped halfway, a dirty tree): sync never touches their branches. After this repo's sync, every
        mutation the other clone published is in the log here, and is held from then on."""
        if self.other is None:
            remote = self.base / "remote.git"
            self.git("init", "-q", "--bare", "-b", "main", str(remote), cwd=self.base)
            self.git("remote", "add", "origin", str(remote))
            first = self.wb("sync")
            assert first.returncode == 0, f"the first wb sync to an empty remote: {first.stderr}"
            self.other = self.base / "other"
            self.git("clone", "-q", str(remote), str(self.other), cwd=self.base)
            self.trace.append(f"cd {self.other}")
            joined = self.wb("init", "--ref", "wb-state", cwd=self.other)
            assert joined.returncode == 0, joined.stderr
            self.trace.append(f"cd {self.repo}")
        self.n += 1
        title = f"other-{self.n}"
        self.trace.append(f"cd {self.other}")
        added = self.wb("task", "add", title, cwd=self.other)
        assert added.returncode == 0, added.stderr
        pushed = self.wb("sync", cwd=self.other)
        assert pushed.returncode == 0, pushed.stderr
        self.trace.append(f"cd {self.repo}")
        self.published.add(("task.add", title))
        if sync_here:
            synced = self.wb("sync")
            assert synced.returncode == 0, f"wb sync here exited {synced.returncode}: {synced.stderr}"
            seen = self.visible()
            missing = sorted(key for key in self.published if key not in seen)
            assert not missing, f"after wb sync, the other clone's published writes are missing here: {missing}"
            for key in self.published:
                self.muts.append(Mutation(key, None, self.n))
            self.published.clear()
        self.user_snapshot()

    @rule()
    def gc(self) -> None:
        self.git("gc", "-q")

    # -- the invariants --------------------------------------------------------------------------------------
    @invariant()
    def app_untouched(self) -> None:
        if not hasattr(self, "app_work") or DRY:
            return
        path = self.repo / "app.py"
        work = path.read_bytes() if path.exists() else None
        proc = subprocess.run(["git", "show", ":app.py"], cwd=self.repo, env=self.env, capture_output=True)
        index = proc.stdout if proc.returncode == 0 else None
        assert (work, index) == (self.app_work, self.app_index), \
            f"app.py changed by wb: work {self.app_work!r} -> {work!r}, staged {self.app_index!r} -> {index!r}"

    @invariant()
    def acknowledged_kept(self) -> None:
        if self.edits and not DRY:
            self.note_recorded_edits()
        if not self.muts or DRY:
            return
        seen = self.visible()
        board = stored.board(self.repo)
        ids = [t["id"] for t in board.get("tasks", [])]
        assert len(ids) == len(set(ids)), f"duplicate task ids on the board: {sorted(ids)}"
        missing = []
        for m in self.muts:
            if m.undone or m.key in seen:
                continue
            if m.anchor is not None and not self.is_ancestor(m.anchor):
                continue  # HEAD is where that commit is not: the user's checkout, not a loss
            missing.append(m)
        waiting = 0
        if missing:  # only then is `wb status --json` asked what waits to be written
            status = self.wb("status", "--json")
            if status.returncode == 0:
                data = json.loads(status.stdout)
                held = data.get("not_yet_written") or {}  # waiting to land, and those that no longer apply to
                # the commit checked out (named, landed again back on their branch, or kept aside in a file)
                waiting = sum(int(held.get(k) or 0) for k in ("events", "refused", "set_aside"))
        assert len(missing) <= waiting, (
            f"acknowledged and gone (status names {waiting} waiting): "
            + "; ".join(f"{m.key} (step {m.step}, commit {m.anchor})" for m in missing))
        self.land()

    def land(self) -> None:
        """What waited and has landed (a later write commits it, on the branch checked out then) is held by
        HEAD's commit from now on: the user's later checkouts move it out of sight as they do any commit."""
        if TEST_BACKEND != "files" or self.ref_mode or not self.branch() or \
                not any(m.anchor is None for m in self.muts):
            return
        committed = self.visible(self.quiet_git("show", "HEAD:.workbench/events.jsonl"))
        for m in self.muts:
            if m.anchor is None and not m.undone and m.key in committed:
                m.anchor = self.head()
                m.carried = False

    def visible(self, raw: str | None = None) -> set[tuple[str, str]]:
        """What the workbench's log holds (or the log text `raw`), as the model's keys."""
        if raw is None:
            events = stored.events(self.repo)
        else:
            events = []
            for line in raw.splitlines():
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue
        title = {}
        for e in events:
            if e["type"] == "task.add":
                title[e["payload"]["task"]["id"]] = e["payload"]["task"]["title"]
        seen = set()
        for e in events:
            p = e.get("payload") or {}
            if e["type"] == "task.add":
                seen.add(("task.add", p["task"]["title"]))
            elif e["type"] in ("task.start", "task.done", "task.claim"):
                seen.add((e["type"], title.get(p.get("id"), "?")))
            elif e["type"] == "note.add":
                seen.add(("note.add", str(p.get("text"))))
            elif e["type"] == "session.start":
                seen.add(("session.start", str(p.get("goal"))))
            elif e["type"] == "human.edit" and p.get("file") == "board.json":
                seen.update(("human.edit", str(t.get("title"))) for t in p.get("upsert") or [])
        return seen

    @invariant()
    def validate_doctor_write_agree(self) -> None:
        if not hasattr(self, "app_work") or DRY or self.busy():
            return  # mid-rebase/merge/bisect the files are git's; they agree again when it ends
        checked = self.wb("validate")
        doctored = self.wb("doctor")
        validate, doctor = checked.returncode, doctored.returncode
        assert (validate == 0) == (doctor == 0), (
            f"wb validate exit {validate} but wb doctor exit {doctor}\nvalidate said: "
            f"{(checked.stdout + checked.stderr)[-600:]}\ndoctor said: {(doctored.stdout + doctored.stderr)[-600:]}")
        self.since_write_check += 1
        if self.since_write_check >= 4 or validate != 0:
            self.since_write_check = 0
            self.n += 1
            text = f"probe-{self.n}"
            proc = self.wb("note", text)
            if proc.returncode == 0:
                self.acked(("note.add", text))
            assert (proc.returncode == 0) == (validate == 0), (
                f"wb validate exit {validate}, wb doctor exit {doctor}, but the next write exited "
                f"{proc.returncode}: {proc.stderr.strip()[-300:]}\nvalidate said: "
                f"{(checked.stdout + checked.stderr)[-600:]}\ndoctor said: "
                f"{(doctored.stdout + doctored.stderr)[-600:]}")
