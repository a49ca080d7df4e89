"""What the fuzzer of the user's git (tests/reliability/test_gitfuzz.py) and the gitrace flake found, each as the
fewest git and wb steps that show it. A defect others fix in parallel (issue 29) is xfail(strict): the lead
removes the mark when the fix merges, and the test then holds it; gitfuzz.KNOWN_DEFECTS is emptied with it."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import TEST_BACKEND, about_files, about_git

from .wbhelpers import WB, base_env


def _env(**extra: str) -> dict[str, str]:
    backend = {"WB_DEFAULT_BACKEND": TEST_BACKEND} if TEST_BACKEND != "files" else {}
    return base_env(CI="1", **backend, **extra)


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, env=_env(), capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def wb(repo: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([WB, *args], cwd=repo, env=_env(**extra), capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def new_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "app.py").write_text("print('v0')\n")
    git(path, "add", "app.py")
    git(path, "commit", "-q", "-m", "user: app.py")
    assert wb(path, "init").returncode == 0
    return path


@about_git  # on SQLite no write commits, and HEAD never detaches from wb's state
def test_task_added_on_a_detached_head_lands_on_the_branch(tmp_path: Path) -> None:
    """Known defect (a), the one gitfuzz.KNOWN_DEFECTS["detached_write"] keeps the default seeds from (every
    seed with a `detach` or `bisect` step and a `task_add` there reaches it)."""
    repo = new_repo(tmp_path / "repo")
    for i in range(4):
        assert wb(repo, "task", "add", f"t{i}").returncode == 0
    git(repo, "checkout", "-q", "--detach", "HEAD~2")
    assert wb(repo, "task", "add", "while detached").returncode == 0
    git(repo, "checkout", "-q", "main")
    back = wb(repo, "task", "add", "back on main")
    assert back.returncode == 0, back.stderr
    tasks = json.loads(wb(repo, "task", "list", "--json").stdout)
    ids = [t["id"] for t in tasks]
    assert len(ids) == len(set(ids)) == 6, ids
    assert {"while detached", "back on main"} <= {t["title"] for t in tasks}


@about_git  # git stash takes .workbench/'s files; on SQLite it takes none of wb's state
def test_stash_between_append_and_commit_leaves_a_valid_workbench(tmp_path: Path) -> None:
    """Known defect (b): the write is acknowledged (exit 0), and `wb validate` exits 5 until the next write.
    gitfuzz's `stash` step stashes between whole writes; this pauses one inside (WB_PAUSE, faults.py)."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "note", "first").returncode == 0
    (repo / "app.py").write_text("print('wip')\n")
    held, pause = _held_at(repo, tmp_path, "after_event_append", "note", "held")
    git(repo, "stash", "push", "-q")
    Path(f"{pause}.go").write_text("")
    _out, err = held.communicate(timeout=60)
    assert held.returncode == 0, err
    validate = wb(repo, "validate")
    assert validate.returncode == 0, validate.stderr + validate.stdout


@pytest.mark.skipif(TEST_BACKEND == "files", reason="the linked worktree's database: the SQLite backend's")
def test_worktree_remove_keeps_what_the_linked_worktree_acknowledged(tmp_path: Path) -> None:
    """Known defect (c), the one gitfuzz.KNOWN_DEFECTS["worktree_remove_sqlite"] keeps the seeds from."""
    repo = new_repo(tmp_path / "repo")
    linked = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "wt", str(linked))
    assert wb(linked, "init").returncode == 0  # on SQLite .workbench/ is untracked: each worktree inits its own
    assert wb(linked, "note", "acknowledged in the linked worktree").returncode == 0
    git(repo, "worktree", "remove", "--force", str(linked))
    git(repo, "worktree", "add", "-q", str(linked), "wt")
    wb(linked, "init")  # the untracked .workbench/ went with the worktree: init again, as `wb status` says
    log = wb(linked, "log", "--all")
    assert log.returncode == 0, log.stderr
    assert "acknowledged in the linked worktree" in log.stdout


@about_files
def test_doctor_fix_never_commits_a_changed_committed_line(tmp_path: Path) -> None:
    """New (found by the gitrace flake, seed 1 under CPU load, run 8 of 12: a stash pop left events.jsonl with
    committed lines in another order). `wb doctor --fix` says "a committed line was changed … [needs you]" and,
    in the same run, commits that very file as "uncommitted … [fixed]": HEAD then holds the changed line, the
    advice it printed (`git checkout -- .workbench/events.jsonl`) restores nothing, and the acknowledged text is
    left only in an older commit. What --fix must not do: commit a log that does not start with HEAD's."""
    repo = new_repo(tmp_path / "repo")
    for text in ("a", "b"):
        assert wb(repo, "note", text).returncode == 0
    committed = git(repo, "show", "HEAD:.workbench/events.jsonl")
    log = repo / ".workbench" / "events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    event = json.loads(lines[-1])
    event["payload"]["text"] = "b, changed"
    lines[-1] = (json.dumps(event, separators=(",", ":")) + "\n").encode()
    log.write_bytes(b"".join(lines))
    assert wb(repo, "validate").returncode == 5
    doctor = wb(repo, "doctor", "--fix")
    assert doctor.returncode == 1 and "needs you" in doctor.stdout, doctor.stdout
    assert git(repo, "show", "HEAD:.workbench/events.jsonl") == committed, \
        f"doctor --fix committed the changed log:\n{doctor.stdout}"


@about_git  # on SQLite (sqlite_before_commit, sqlite_after_commit) validate, doctor and the next write agree
@pytest.mark.parametrize("point", ["after_event_append", "after_state_write", "after_git_objects", "before_git_ref"])
def test_doctor_healthy_after_a_killed_write_when_validate_and_the_next_write_are(tmp_path: Path, point: str
                                                                                 ) -> None:
    """New, found by gitfuzz seeds 4 and 15 (`WB_FAULT=after_state_write wb note` and then the invariants): a
    write killed at `point` leaves a workbench `wb validate` passes (exit 0) and the next write succeeds on,
    while `wb doctor` exits 1 ("uncommitted" / "snapshots behind", fixable). validate, doctor and the write path
    must agree (issue 29 item 2). gitfuzz.KNOWN_DEFECTS["doctor_uncommitted"] keeps the seeds from it."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "note", "acknowledged").returncode == 0
    killed = wb(repo, "note", "killed", WB_FAULT=point)
    assert killed.returncode == -9
    validate, doctor = wb(repo, "validate"), wb(repo, "doctor")
    assert validate.returncode == 0, validate.stderr
    assert doctor.returncode == 0, f"validate passes, doctor says:\n{doctor.stdout}"
    assert wb(repo, "note", "the next write").returncode == 0


@about_git  # a detached HEAD is the files backend's: on SQLite no write commits
def test_doctor_agrees_after_a_resume_on_a_detached_head(tmp_path: Path) -> None:
    """New, found by gitfuzz seed 4: `wb resume` of a paused session on a detached HEAD exits 0, `wb validate`
    exits 0 and the next write succeeds, but `wb doctor` exits 1 ("uncommitted 2 workbench file(s)"), which a
    `wb note` on the same detached HEAD does not cause. gitfuzz.KNOWN_DEFECTS["detached_session"]."""
    repo = new_repo(tmp_path / "repo")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"description": "first step"}, {"description": "second step"}]))
    assert wb(repo, "note", "a").returncode == 0
    assert wb(repo, "run", "goal", "--plan", str(plan), "--max-turns", "1").returncode == 4  # paused
    assert wb(repo, "note", "b").returncode == 0
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    resumed = wb(repo, "resume", "--extend", "turns=50")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    validate, doctor = wb(repo, "validate"), wb(repo, "doctor")
    assert validate.returncode == 0, validate.stderr
    assert doctor.returncode == 0, f"validate passes, doctor says:\n{doctor.stdout}"
    assert wb(repo, "note", "the next write").returncode == 0


@about_git  # the bisect's detached HEAD and a files-path fault point
def test_doctor_fix_never_calls_a_killed_write_a_hand_edit(tmp_path: Path) -> None:
    """New, found by gitfuzz seed 15 (these are its steps): a note queued during a bisect, the bisect reset, a
    note killed after writing state.md, then `wb doctor --fix` reports "hand_edit: state.md edited by hand …
    [fixed]": it records wb's own half-done write as a person's edit (the wrong actor in the audit log), and
    the agent's next write is refused (exit 6) for human_guard_seconds. gitfuzz.KNOWN_DEFECTS["killed_hand_edit"]."""
    repo = new_repo(tmp_path / "repo")
    for text in ("n1", "p2"):
        assert wb(repo, "note", text).returncode == 0
    git(repo, "reset", "-q", "--hard", "HEAD~2")
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").split()[0]
    git(repo, "bisect", "start")
    git(repo, "bisect", "bad", "HEAD")
    git(repo, "bisect", "good", root)
    assert wb(repo, "note", "queued during the bisect").returncode == 0
    git(repo, "bisect", "reset")
    assert wb(repo, "note", "killed", WB_FAULT="after_state_write").returncode == -9
    doctor = wb(repo, "doctor", "--fix")
    assert "edited by hand" not in doctor.stdout, doctor.stdout
    after = wb(repo, "note", "the agent's next write")
    assert after.returncode == 0, after.stderr


@about_git  # on SQLite `git reset` moves no workbench file
def test_doctor_agrees_after_the_users_reset_soft(tmp_path: Path) -> None:
    """New, found by gitfuzz seed 11: the user's `git reset --soft HEAD~1` over wb's last commit leaves its
    changes staged; `wb validate` exits 0 and the next write succeeds (and commits them), but `wb doctor` exits
    1 ("uncommitted … workbench file(s)"). gitfuzz.KNOWN_DEFECTS["doctor_uncommitted"]."""
    repo = new_repo(tmp_path / "repo")
    for text in ("a", "b"):
        assert wb(repo, "note", text).returncode == 0
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    validate, doctor = wb(repo, "validate"), wb(repo, "doctor")
    assert validate.returncode == 0, validate.stderr
    assert doctor.returncode == 0, f"validate passes, doctor says:\n{doctor.stdout}"
    assert wb(repo, "note", "the next write").returncode == 0


@about_git  # a merge of two branches' workbench files
def test_a_squash_merge_of_a_branch_that_only_added_notes_validates(tmp_path: Path) -> None:
    """New, found by gitfuzz seed 588775206 (long run): `git merge --squash` of a branch whose only wb writes were
    notes, then a commit: `wb validate` exited 5 ("board.json: last_event: snapshot has 3, the log gives 4")
    while the next write succeeded. git merged board.json by itself (only ours changed it) while the events
    driver put the other branch's note before ours' task.add (an order by a hash of the event ids, 5 runs of 6),
    so ours' board no longer matched the merged log. Now ours' events keep their places and theirs follow."""
    for attempt in range(4):  # the old order depended on random event ids: several tries
        repo = new_repo(tmp_path / f"repo{attempt}")
        assert wb(repo, "note", "n1").returncode == 0
        git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / f"side{attempt}"))
        assert wb(tmp_path / f"side{attempt}", "note", "on the side").returncode == 0
        assert wb(repo, "task", "add", "t4").returncode == 0
        assert wb(repo, "note", "n5").returncode == 0
        git(repo, "merge", "-q", "--squash", "side")
        git(repo, "commit", "-q", "--no-edit", "-m", "squash side")
        validate = wb(repo, "validate")
        assert validate.returncode == 0, validate.stdout + validate.stderr
        assert wb(repo, "doctor").returncode == 0


@about_git  # a cherry-pick of a commit that holds workbench files
def test_an_agent_write_after_a_cherry_pick_does_not_wait_on_a_hand_edit(tmp_path: Path) -> None:
    """New, found by gitfuzz seed 450074612 (long run): after `git cherry-pick` of a wb commit from another
    branch (git merges state.md file by file, the driver cannot tell which commit is picked), the next agent
    write exited 6 — "state.md was edited by hand moments ago; agent writes to it wait" — while validate and
    doctor said healthy. What git committed is recorded as a human.edit all the same, but no one is mid-edit,
    so human_guard_seconds makes no one wait."""
    repo = new_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "-b", "topic")
    assert wb(repo, "note", "on the topic").returncode == 0
    git(repo, "checkout", "-q", "main")
    assert wb(repo, "task", "add", "on main").returncode == 0
    assert wb(repo, "note", "also on main").returncode == 0
    git(repo, "cherry-pick", "topic")
    assert wb(repo, "validate").returncode == 0
    after = wb(repo, "note", "the agent's next write")
    assert after.returncode == 0, after.stderr


def _soft_reset_over_a_revert(repo: Path, *, detached: bool = False) -> subprocess.CompletedProcess[str]:
    """Two notes, `git revert HEAD` of wb's commit, `git reset --soft HEAD~1` over the revert (on a detached HEAD
    when asked): validate, doctor and the next write all refuse. The write's result."""
    assert wb(repo, "note", "n1").returncode == 0
    assert wb(repo, "note", "n2").returncode == 0
    if detached:
        git(repo, "checkout", "-q", "--detach", "HEAD")
    git(repo, "revert", "--no-edit", "HEAD")
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    validate = wb(repo, "validate").returncode
    doctor = wb(repo, "doctor").returncode
    write = wb(repo, "note", "probe")
    assert (validate, doctor, write.returncode) == (5, 1, 5), (validate, doctor, write.stderr)
    return write


@about_git  # a revert and a reset of wb's commits
def test_a_soft_reset_over_a_revert_of_a_wb_commit(tmp_path: Path) -> None:
    """Found by the slow tier's seed 862294388: `git revert HEAD` of wb's commit, then `git reset --soft HEAD~1`
    over the revert: the work tree holds the reverted log, staged, under a HEAD that has the events. validate
    exited 5 and doctor 1 while the next write succeeded and committed the user's staged removal as its own.
    Now all three say the same (store/logprefix.py): the write refuses and names both ways out; committing the
    undo (a committed revert is the user's, and wb goes on from it) is one of them."""
    repo = new_repo(tmp_path / "repo")
    write = _soft_reset_over_a_revert(repo)
    assert "1 committed line(s) were removed" in write.stderr and "git commit" in write.stderr, write.stderr
    assert len(write.stderr.strip().splitlines()) == 1, write.stderr
    git(repo, "commit", "-q", "-m", "my undo of n2")  # the user's way out: their undo, committed
    assert wb(repo, "note", "after").returncode == 0
    assert wb(repo, "validate").returncode == 0
    events = [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    texts = [e["payload"].get("text") for e in events if e["type"] == "note.add"]
    assert texts == ["n1", "after"], texts


@about_git  # a branch's snapshot carried to another by the user's git
def test_a_snapshot_ahead_of_its_log_is_rebuilt_and_kept_aside(tmp_path: Path) -> None:
    """Found by the gitrace run (tools/gitrace.py, seed 33 under load): a state.md written on main, left modified
    by a `git stash` that raced the write, travelled to a topic branch with the user's checkout (git carries a
    modified file the branches share). There it says it folds events this branch's log has never had: validate,
    doctor and every write refused, and doctor's only advice was "fix the file by hand". The snapshots are
    derived: `wb doctor --fix` rebuilds them from the log and keeps the ones it found aside, and the next write
    succeeds. Here the same state, made directly: main's state.md on a branch that is behind main."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "note", "a").returncode == 0
    git(repo, "branch", "topic")
    assert wb(repo, "note", "b").returncode == 0
    assert wb(repo, "note", "c").returncode == 0
    git(repo, "checkout", "-q", "topic")
    ahead = subprocess.run(["git", "show", "main:.workbench/state.md"], cwd=repo, capture_output=True, check=True)
    (repo / ".workbench" / "state.md").write_bytes(ahead.stdout)
    assert wb(repo, "validate").returncode == 5
    assert wb(repo, "note", "refused").returncode == 5
    doctor = wb(repo, "doctor")
    assert doctor.returncode == 1 and "snapshot_ahead" in doctor.stdout and "[needs you]" not in doctor.stdout, \
        doctor.stdout
    fixed = wb(repo, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    kept = list((repo / ".git" / "wb" / "set-aside").glob("*/state.md"))
    assert [k.read_bytes() for k in kept] == [ahead.stdout]  # never deleted: kept aside, byte for byte
    assert wb(repo, "note", "d").returncode == 0
    assert wb(repo, "validate").returncode == 0
    events = [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert [e["payload"].get("text") for e in events if e["type"] == "note.add"] == ["a", "d"]
    assert git(repo, "status", "--porcelain") == ""


def _held_at(repo: Path, tmp_path: Path, point: str, *args: str) -> tuple[subprocess.Popen[str], Path]:
    pause = tmp_path / f"pause-{point}"
    held = subprocess.Popen([WB, *args], cwd=repo, env=_env(WB_PAUSE=point, WB_PAUSE_FILE=str(pause)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not Path(f"{pause}.here").exists():
        assert held.poll() is None and time.monotonic() < deadline, f"wb never reached {point}"
        time.sleep(0.02)
    return held, pause


def _next_write_commits_all(repo: Path, notes: list[str]) -> None:
    """The next write (the note `notes[-1]`) commits every note acknowledged before it too, and validates."""
    assert wb(repo, "note", notes[-1]).returncode == 0
    assert [e["payload"]["text"] for e in _committed_log(repo) if e["type"] == "note.add"] == notes
    validate = wb(repo, "validate")
    assert validate.returncode == 0, validate.stderr + validate.stdout


def _committed_log(repo: Path) -> list[dict]:
    raw = git(repo, "show", "HEAD:.workbench/events.jsonl")
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


@about_git  # the files the user's git rewrites are the files backend's
def test_a_log_git_is_rewriting_while_wb_commits_is_never_committed_as_deleted(tmp_path: Path) -> None:
    """gitrace seed 11 (under load): `git stash push` rewrote events.jsonl (git unlinks a file, then writes it
    again) just as wb listed .workbench/ for its commit; wb committed a tree without events.jsonl — the event log
    deleted on the user's branch, every later write refused, `wb doctor --fix` unable to rebuild. Here the
    listing is held (WB_PAUSE) inside that window: the file is gone as git's checkout leaves it for a moment."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "note", "first").returncode == 0
    log = repo / ".workbench" / "events.jsonl"
    held, pause = _held_at(repo, tmp_path, "before_git_listing", "note", "held")
    aside = log.read_bytes()
    log.unlink()  # git's checkout_entry: the old file unlinked, the new one not yet written
    Path(f"{pause}.go").write_text("")
    deadline = time.monotonic() + 60
    while held.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    log.write_bytes(aside)  # ... and written
    _out, err = held.communicate(timeout=60)
    assert held.returncode == 0, err  # acknowledged: its event is in the log (and the pending journal)
    committed = git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert ".workbench/events.jsonl" in committed, "the log was committed as deleted"
    _next_write_commits_all(repo, ["first", "held", "after"])


@about_git
def test_a_log_the_users_git_took_back_while_wb_commits_is_not_committed_beside_newer_snapshots(tmp_path: Path) -> None:
    """The same window, a whole git command in it: `git checkout -- .workbench/events.jsonl` puts back HEAD's log
    after wb checked what it commits and before it listed the files. wb committed the old log beside the
    snapshots of the new write (state.md's last_event beyond the committed log: HEAD does not validate)."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "note", "first").returncode == 0
    held, pause = _held_at(repo, tmp_path, "before_git_listing", "note", "held")
    git(repo, "checkout", "--", ".workbench/events.jsonl")
    Path(f"{pause}.go").write_text("")
    _out, err = held.communicate(timeout=60)
    assert held.returncode == 0, err
    state = git(repo, "show", "HEAD:.workbench/state.md")
    last_event = int(next(line for line in state.splitlines() if line.startswith("last_event:")).split(":")[1])
    assert last_event <= _committed_log(repo)[-1]["seq"], "HEAD holds snapshots of events its log does not"
    _next_write_commits_all(repo, ["first", "held", "after"])


@about_git
def test_doctor_fix_brings_forward_a_work_tree_the_users_git_left_behind_head(tmp_path: Path) -> None:
    """gitrace seed 18 (under load): a `git stash push` raced a write's commit — HEAD got the write's events,
    the stash reset the work tree's files to the commit before. The work tree's log is then HEAD's minus its last
    lines, and every write refuses it (an uncommitted undo, as far as wb can tell). `wb doctor --fix` — what a
    person runs — brings back HEAD's log and snapshots (nothing of the work tree's is lost: its log is a prefix of
    HEAD's, and the files it replaces are kept aside) instead of refusing too."""
    repo = new_repo(tmp_path / "repo")
    for text in ("first", "second"):
        assert wb(repo, "note", text).returncode == 0
    # the race's outcome: the files as the commit before, the index (synced by wb) as HEAD
    git(repo, "checkout", "HEAD~1", "--", ".workbench/")
    git(repo, "reset", "-q", "--", ".workbench/")
    refused = wb(repo, "note", "refused while behind")
    assert refused.returncode == 5, refused.stderr
    doctor = wb(repo, "doctor", "--json")
    found = {f["code"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert found["log_behind"]["fixable"], doctor.stdout
    fixed = wb(repo, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "set-aside" in fixed.stdout, fixed.stdout  # where the replaced files are
    assert wb(repo, "validate").returncode == 0
    assert wb(repo, "note", "third").returncode == 0
    assert [e["payload"]["text"] for e in _committed_log(repo) if e["type"] == "note.add"] == ["first", "second",
                                                                                                "third"]
    assert git(repo, "status", "--porcelain", "--", ".workbench") == ""


@about_git
def test_doctor_fix_leaves_a_log_with_lines_of_its_own_to_the_person(tmp_path: Path) -> None:
    """The same, but the work tree's log has a line HEAD's has not (not a prefix): nothing is brought back."""
    repo = new_repo(tmp_path / "repo")
    for text in ("first", "second"):
        assert wb(repo, "note", text).returncode == 0
    git(repo, "checkout", "HEAD~1", "--", ".workbench/")
    git(repo, "reset", "-q", "--", ".workbench/")
    log = repo / ".workbench" / "events.jsonl"
    log.write_bytes(log.read_bytes() + b'{"not": "an event of HEAD"}\n')
    doctor = wb(repo, "doctor", "--json")
    assert "log_behind" not in {f["code"] for f in json.loads(doctor.stdout)["findings"]}, doctor.stdout
    assert wb(repo, "doctor", "--fix").returncode != 0


def _log(repo: Path) -> list[dict]:
    return [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]


def _agree_and_write(repo: Path) -> None:
    """validate, doctor and the next write say the same, and after the write the workbench validates."""
    validate, doctor = wb(repo, "validate"), wb(repo, "doctor")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert doctor.returncode == 0, doctor.stdout
    write = wb(repo, "note", "the next write")
    assert write.returncode == 0, write.stderr
    after = wb(repo, "validate")
    assert after.returncode == 0, after.stdout + after.stderr
    replayed = wb(repo, "replay", "--verify")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    board = json.loads(git(repo, "show", "HEAD:.workbench/board.json"))  # what the write committed, not a view
    assert board["last_event"] == max(e["seq"] for e in _log(repo) if e["type"].startswith("task.")), board


@about_git  # a squash merge of wb's history
def test_a_squash_merge_that_brings_back_the_board_wb_last_wrote_on_another_branch(tmp_path: Path) -> None:
    """Found by gitfuzz seed 457557118 (fresh base): on a branch cut three writes back, a note; then
    `git merge --squash main` and a commit. git took main's board.json whole (the branch never changed it), but
    the merged log puts the branch's note first, so main's board was one behind the log's numbering: validate
    refused ("board.json: last_event: snapshot has 5, the log gives 6") while the next write took the board for
    wb's own — its bytes were what wb last wrote (on main, before the checkout) — and left it wrong for good.
    Now the merge drivers leave what they merged as wb's last write, so that board is judged against the log."""
    repo = new_repo(tmp_path / "repo")
    for args in (("task", "add", "t1"), ("task", "add", "t2"), ("note", "n3"), ("task", "add", "t4")):
        assert wb(repo, *args).returncode == 0
    git(repo, "checkout", "-q", "--detach", "HEAD~3")
    git(repo, "checkout", "-q", "-b", "topic-1")
    assert wb(repo, "note", "probe-5").returncode == 0
    git(repo, "merge", "-q", "--squash", "main")
    git(repo, "commit", "-q", "--no-edit", "-m", "squash main")
    _agree_and_write(repo)
    titles = {e["payload"]["task"]["title"] for e in _log(repo) if e["type"] == "task.add"}
    assert titles == {"t1", "t2", "t4"}, titles


@about_git  # a rebase of wb's history
def test_a_rebase_of_a_branch_that_added_a_task_onto_one_that_added_a_note(tmp_path: Path) -> None:
    """The same seam by a rebase: the picked commit's board.json (git took it whole: main never changed the
    board) numbers its task.add one before where the rebased log puts it, after main's note."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "task", "add", "t1").returncode == 0
    git(repo, "checkout", "-q", "-b", "topic")
    assert wb(repo, "task", "add", "on the topic").returncode == 0
    git(repo, "checkout", "-q", "main")
    assert wb(repo, "note", "on main").returncode == 0
    git(repo, "checkout", "-q", "topic")
    git(repo, "rebase", "-q", "main")
    _agree_and_write(repo)
    board = json.loads((repo / ".workbench" / "board.json").read_text())
    assert [t["title"] for t in board["tasks"]] == ["t1", "on the topic"], board


@about_git  # an interactive rebase of wb's history
def test_a_rebase_that_drops_a_note_before_a_task_add(tmp_path: Path) -> None:
    """The mirror: the dropped note leaves the picked task.add one seq lower in the rebased log than git's
    board.json (taken whole: main never changed the board) says — a board numbered past the log's end, which the
    load took for a board written just before a crash and judged by no fold."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "task", "add", "t1").returncode == 0
    git(repo, "checkout", "-q", "-b", "topic")
    assert wb(repo, "note", "dropped").returncode == 0
    assert wb(repo, "task", "add", "kept").returncode == 0
    proc = subprocess.run(["git", "rebase", "-q", "-i", "main"], cwd=repo, capture_output=True, text=True,
                          env=_env(GIT_SEQUENCE_EDITOR="sed -i 1s/^pick/drop/"))
    assert proc.returncode == 0, proc.stderr
    _agree_and_write(repo)
    assert [e["payload"]["text"] for e in _log(repo) if e["type"] == "note.add"] == ["the next write"]


@about_git  # a stash pop over a wb write
def test_a_stash_pop_that_brings_back_a_board_change_over_a_note(tmp_path: Path) -> None:
    """Found by gitfuzz seed 636042713 (fresh base): `git reset --soft HEAD~2` over a task add and a note,
    `git stash`, a wb note, `git stash pop`. The pop merged the log with wb's driver (the stash's events after the
    note) but took the stash's board.json whole (the note never changed it), numbered one behind: the load took
    it for a person's save from an older read and doctor called it a hand edit while validate said valid. Now
    the state driver names the board git takes whole, and the load reads it as wb's under the merged numbering."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "task", "add", "t1").returncode == 0
    assert wb(repo, "note", "n2").returncode == 0
    git(repo, "reset", "-q", "--soft", "HEAD~2")
    git(repo, "stash", "push", "-q")
    assert wb(repo, "note", "while stashed").returncode == 0
    git(repo, "stash", "pop", "-q")
    _agree_and_write(repo)
    notes = [e["payload"]["text"] for e in _log(repo) if e["type"] == "note.add"]
    assert notes == ["while stashed", "n2", "the next write"], notes


@about_git  # a revert and a reset of wb's commits, on a detached HEAD
def test_a_soft_reset_over_a_revert_on_a_detached_head(tmp_path: Path) -> None:
    """Found by gitfuzz seed 970986609 (fresh base): as test_a_soft_reset_over_a_revert_of_a_wb_commit, on a
    detached HEAD. validate and doctor refused (committed lines removed), but the write, held back while HEAD is
    detached, skipped the check and acknowledged a note the work tree's log could not take. Now a held-back write
    runs the same check first, and refuses in the same words."""
    repo = new_repo(tmp_path / "repo")
    write = _soft_reset_over_a_revert(repo, detached=True)
    assert "committed line(s) were removed" in write.stderr, write.stderr


@about_git  # an amend of wb's commit on a detached HEAD
def test_an_amend_on_a_detached_head_while_writes_wait_loses_none_of_them(tmp_path: Path) -> None:
    """gitfuzz seed 815909294 counted lost a note whose commit an amend on a detached HEAD rewrote, once the user
    checked out away; the model's error (it forgot the rewritten commit still held the note), not the product's.
    These steps hold the product to it: writes held back on a detached HEAD, the user's amend of the commit
    under them, a checkout away and back to the branch — every acknowledged write is there, and it validates."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "task", "add", "t1").returncode == 0
    assert wb(repo, "note", "n2").returncode == 0
    git(repo, "checkout", "-q", "--detach", "HEAD")
    assert wb(repo, "note", "while detached").returncode == 0
    assert wb(repo, "task", "add", "t3 while detached").returncode == 0
    git(repo, "commit", "-q", "--amend", "--no-edit", "-m", "the user's amend")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    git(repo, "checkout", "-q", "main")
    _agree_and_write(repo)
    notes = [e["payload"]["text"] for e in _log(repo) if e["type"] == "note.add"]
    assert notes == ["n2", "while detached", "the next write"], notes
    tasks = json.loads(wb(repo, "task", "list", "--json").stdout)
    assert [t["title"] for t in tasks] == ["t1", "t3 while detached"], tasks


@about_git  # writes held on a detached HEAD, then a checkout of a commit older than their task
def test_a_held_write_whose_task_the_checked_out_commit_lacks_is_named_and_lands_back_on_its_branch(
        tmp_path: Path) -> None:
    """gitfuzz seed 154876238: writes held on a detached HEAD, among them `wb task start T-001`, then a checkout
    of the commit before T-001 existed. status names the start as one that no longer applies there (the model
    counted only those that wait, and called it gone); back on main, every held write lands."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "task", "add", "task-1").returncode == 0
    assert wb(repo, "task", "add", "task-2").returncode == 0
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert wb(repo, "note", "probe-3").returncode == 0
    assert wb(repo, "task", "start", "T-001").returncode == 0
    git(repo, "checkout", "-q", "--detach", "HEAD~1")  # wb init's commit: no T-001 here
    held = json.loads(wb(repo, "status", "--json").stdout)["not_yet_written"]
    assert (held["events"], held["refused"]) == (1, 1), held
    assert "no longer apply to this branch" in held["text"], held
    git(repo, "checkout", "-q", "main")
    _agree_and_write(repo)
    assert [e["payload"]["text"] for e in _log(repo) if e["type"] == "note.add"] == ["probe-3", "the next write"]
    tasks = {t["id"]: t["status"] for t in json.loads(wb(repo, "task", "list", "--json").stdout)}
    assert tasks == {"T-001": "in_progress", "T-002": "todo"}, tasks


@about_git  # on SQLite no write commits, and HEAD never detaches from wb's state
@pytest.mark.parametrize("where", ["detached", "mid-rebase"])
def test_a_claim_that_cannot_be_committed_is_refused_and_recorded_nowhere(tmp_path: Path, where: str) -> None:
    """Seed 695870474: `wb task claim T-001 --remote none` on a detached HEAD exited 1 ("recorded but not
    committed, so not won") — yet the claim was held and landed at the next command on the branch: a claim its
    agent was told it did not win, holding the task against every other agent. A claim is won by its commit, so
    where wb must not commit (HEAD detached, git mid-operation) it is refused before anything is recorded."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "task", "add", "first").returncode == 0
    assert wb(repo, "task", "add", "second").returncode == 0
    if where == "detached":
        git(repo, "checkout", "-q", "--detach", "HEAD")
    else:  # a rebase stopped for editing (`edit` on the last commit)
        git(repo, "-c", "sequence.editor=sed -i '1s/^pick/edit/'", "rebase", "-q", "-i", "HEAD~1")
        assert (repo / ".git" / "rebase-merge").is_dir()
    claim = wb(repo, "task", "claim", "T-001", "--remote", "none", "--agent", "a1")
    assert claim.returncode == 5, (claim.returncode, claim.stderr)
    assert "not claimed" in claim.stderr and ("HEAD is detached" in claim.stderr or "in progress" in claim.stderr)
    if where == "detached":
        git(repo, "checkout", "-q", "main")
    else:
        git(repo, "rebase", "--continue")
    assert wb(repo, "note", "back on the branch").returncode == 0
    board = json.loads((repo / ".workbench" / "board.json").read_text())
    assert all("claim" not in task for task in board["tasks"]), board["tasks"]
    events = [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert not [e for e in events if e["type"] == "task.claim"]
    assert wb(repo, "validate").returncode == 0


@about_git  # on SQLite .workbench/ is not in git: no pick brings events
def test_a_cherry_pick_of_a_wb_commit_the_branch_has_already_brings_nothing(tmp_path: Path) -> None:
    """Seed 237804267: `git cherry-pick main` on a branch made from main after main's last wb commit. The
    events were there already, but state.md's driver, merging it on its own, counted the picked event again:
    last_event 5 over a log of 4, every later write refused until `wb doctor --fix`, and a decision-log entry
    twice. A pick keeps board.json and state.md as they are, and the next command folds in what the log gained."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "note", "on main").returncode == 0
    git(repo, "checkout", "-q", "-b", "topic")
    assert wb(repo, "note", "on topic").returncode == 0
    pick = subprocess.run(["git", "cherry-pick", "main"], cwd=repo, env=_env(), capture_output=True, text=True)
    if pick.returncode != 0:  # git finds the pick empty: it brings nothing, as it should
        assert "empty" in pick.stderr + pick.stdout, pick.stderr
        git(repo, "cherry-pick", "--abort")
    assert wb(repo, "validate").returncode == 0
    after = wb(repo, "note", "after the pick")
    assert after.returncode == 0, after.stderr
    state = (repo / ".workbench" / "state.md").read_text()
    assert state.count("\non main\n") == 1, state
    assert wb(repo, "replay", "--verify").returncode == 0


@about_files  # SQLite keeps no board.json a person edits
@pytest.mark.parametrize("committed", [False, True])
def test_a_hand_edit_leaves_doctor_healthy_as_validate_and_the_next_write_records_it(tmp_path: Path,
                                                                                      committed: bool) -> None:
    """gitfuzz seed 118897922: the person retitles a task in board.json (and commits that file with plain git,
    or not). `wb validate` exits 0 and the next write succeeds and records the edit as `human.edit`, but `wb
    doctor` exited 1 on its `hand_edit` finding: work the next write does by itself, which doctor lists and
    counts healthy (as it does a write waiting in the git directory)."""
    repo = new_repo(tmp_path / "repo")
    assert wb(repo, "task", "add", "task-1").returncode == 0
    board = repo / ".workbench" / "board.json"
    board.write_text(board.read_text().replace('"title": "task-1"', '"title": "task-1, by hand"'))
    if committed:
        git(repo, "commit", "-q", "-m", "user: retitle", "--", ".workbench/board.json")
    assert wb(repo, "validate").returncode == 0
    doctor = wb(repo, "doctor", "--json")
    report = json.loads(doctor.stdout)
    assert doctor.returncode == 0 and report["healthy"], report
    assert [(f["code"], f["waits"]) for f in report["findings"] if f["code"] == "hand_edit"] == [("hand_edit", True)]
    assert wb(repo, "note", "next").returncode == 0
    events = [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    edits = [e["payload"]["upsert"][0]["title"] for e in events if e["type"] == "human.edit"]
    assert edits == ["task-1, by hand"]
    assert json.loads(board.read_text())["tasks"][0]["title"] == "task-1, by hand"
    assert wb(repo, "doctor").returncode == 0
