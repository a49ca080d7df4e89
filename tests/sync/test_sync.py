"""`wb sync` scenarios: a bare remote on disk, several clones, state on its own ref."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import about_git, hash_workbench, run_git, run_wb
from tests.sync.helpers import REF, assert_converged, board, clone, event_ids, make_remote, spawn, sync_all

pytestmark = about_git  # wb sync and claims between clones, over a git remote (a SQLite workbench has no state branch)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_remote(tmp_path)


def test_clones_converge_and_the_users_branches_are_never_touched(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert board(b)["tasks"] == []  # took up the remote's workbench, not an empty one of its own
    assert run_git(b, "log", "--format=%s", REF).splitlines()[-1] == "wb: init"
    (a / "app.py").write_text("print('dirty, not staged')\n")  # the user's tree is dirty: sync does not mind
    head_a, status_a = run_git(a, "rev-parse", "HEAD"), run_git(a, "status", "--porcelain")
    for path, title in ((a, "from a"), (b, "from b"), (a, "a again")):
        assert run_wb(path, "task", "add", title).returncode == 0
    assert run_wb(b, "note", "b's note").returncode == 0
    sync_all([a, b])
    assert_converged([a, b])
    assert sorted(t["title"] for t in board(a)["tasks"]) == ["a again", "from a", "from b"]
    assert run_git(a, "rev-parse", "HEAD") == head_a and run_git(a, "status", "--porcelain") == status_a
    assert run_git(remote, "rev-parse", "main") == run_git(a, "rev-parse", "origin/main")  # main never pushed
    names = set(run_git(remote, "ls-tree", "-r", "--name-only", REF).split())
    assert names and all(n.startswith(".workbench/") for n in names)


def test_sync_is_idempotent(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    assert run_wb(a, "task", "add", "one").returncode == 0
    first = run_wb(a, "sync", "--json")
    assert json.loads(first.stdout)["pushed"] is True
    tip, files = run_git(a, "rev-parse", REF), hash_workbench(a)
    for _ in range(2):
        again = json.loads(run_wb(a, "sync", "--json").stdout)
        assert again["up_to_date"] is True and again["pushed"] is False
    assert run_git(a, "rev-parse", REF) == tip and hash_workbench(a) == files
    assert run_git(remote, "rev-parse", REF) == tip


def test_a_fresh_clone_joins_with_wb_sync(remote: Path, tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    assert run_wb(seed, "task", "add", "already there").returncode == 0 and run_wb(seed, "sync").returncode == 0
    fresh = tmp_path / "fresh"
    run_git(tmp_path, "clone", "-q", str(remote), str(fresh))
    out = run_wb(fresh, "sync")
    assert out.returncode == 0, out.stderr
    assert "joined" in out.stdout
    assert [t["title"] for t in board(fresh)["tasks"]] == ["already there"]
    assert run_git(fresh, "config", "merge.wb-board.driver")  # the merge drivers come with it
    assert run_git(fresh, "status", "--porcelain") == ""
    assert_converged([seed, fresh])


def test_state_on_the_users_branch_is_not_pushed(tmp_path: Path) -> None:
    remote = tmp_path / "r.git"
    run_git(tmp_path, "init", "-q", "--bare", str(remote))
    a = tmp_path / "a"
    run_git(tmp_path, "clone", "-q", str(remote), str(a))
    (a / "app.py").write_text("x\n")
    run_git(a, "add", "app.py")
    run_git(a, "commit", "-q", "-m", "mine")
    assert run_wb(a, "init").returncode == 0
    out = run_wb(a, "sync")
    assert out.returncode == 2
    assert "wb init --ref wb-state" in out.stderr and "--push-branch" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert run_git(remote, "branch", "--list").strip() == ""  # nothing pushed
    pushed = run_wb(a, "sync", "--push-branch")
    assert pushed.returncode == 0, pushed.stderr
    assert run_git(remote, "rev-parse", "HEAD") == run_git(a, "rev-parse", "HEAD")


def test_offline_is_one_line_and_leaves_local_state_untouched(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    assert run_wb(a, "task", "add", "written offline").returncode == 0
    before, tip = hash_workbench(a), run_git(a, "rev-parse", REF)
    shutil.rmtree(remote)
    out = run_wb(a, "sync")
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot fetch from origin" in lines[0] and "local state untouched" in lines[0]
    assert hash_workbench(a) == before and run_git(a, "rev-parse", REF) == tip
    assert run_wb(a, "task", "add", "still works offline").returncode == 0


def test_a_rejected_push_is_retried(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "a's").returncode == 0
    assert run_wb(b, "task", "add", "b's").returncode == 0
    hold = tmp_path / "hold"
    proc = spawn(a, "sync", "--json", WB_PAUSE="before_push", WB_PAUSE_FILE=str(hold))
    deadline = time.monotonic() + 60
    while not Path(str(hold) + ".here").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    assert run_wb(b, "sync").returncode == 0  # b pushes first while a is held just before its push
    Path(str(hold) + ".go").write_text("")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["pushed"] is True and report["attempts"] >= 2
    sync_all([a, b])
    assert_converged([a, b])
    assert sorted(t["title"] for t in board(a)["tasks"]) == ["a's", "b's"]


@pytest.mark.parametrize("fault", ["sync_before_ref", "sync_after_ref", "sync_mid_write", "before_push",
                                   "after_push"])
def test_kill_9_mid_sync_then_rerun_converges(remote: Path, tmp_path: Path, fault: str) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(b, "task", "add", "b's").returncode == 0 and run_wb(b, "sync").returncode == 0
    for title in ("a's", "a's second"):
        assert run_wb(a, "task", "add", title).returncode == 0
    proc = spawn(a, "sync", WB_FAULT=fault)
    proc.communicate(timeout=60)
    assert proc.returncode == -9, f"{fault} was never reached"
    after = run_wb(a, "task", "add", "after the crash")  # recorded, or refused naming `wb sync`
    if after.returncode != 0:
        assert fault == "sync_mid_write" and after.returncode == 5 and "run `wb sync`" in after.stderr
        assert run_wb(a, "sync").returncode == 0
        assert run_wb(a, "task", "add", "after the crash").returncode == 0
    sync_all([a, b])
    assert_converged([a, b])
    titles = sorted(t["title"] for t in board(b)["tasks"])
    assert titles == ["a's", "a's second", "after the crash", "b's"]
    assert len(event_ids(a)) == len(set(event_ids(a)))


def test_a_renumbered_id_stays_findable(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "a's T-001").returncode == 0 and run_wb(a, "sync").returncode == 0
    assert run_wb(b, "task", "add", "b's T-001").returncode == 0
    out = run_wb(b, "sync")
    assert out.returncode == 0 and "T-001" in out.stderr and "T-002" in out.stderr
    mine = json.loads(run_wb(b, "task", "show", "T-001", "--json").stdout)
    assert mine["title"] == "b's T-001" and mine["id"] == "T-002" and mine["renumbered_from"] == "T-001"
    sync_all([a, b])
    theirs = json.loads(run_wb(a, "task", "show", "T-001", "--json").stdout)
    assert theirs["title"] == "a's T-001" and "is now T-002" in theirs["renumbered"]
    types = [json.loads(line)["type"] for line in (a / ".workbench/events.jsonl").read_bytes().splitlines()]
    assert types.count("task.renumber") == 1
    assert_converged([a, b])


def test_status_shows_ahead_behind_and_claims(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "x").returncode == 0
    assert run_wb(a, "task", "claim", "T-001", "--agent", "alice").returncode == 0
    assert run_wb(a, "note", "unpushed").returncode == 0
    data = json.loads(run_wb(a, "status", "--json").stdout)["sync"]
    assert data["remote"] == "origin" and data["ahead"] == 1 and data["behind"] == 0
    assert [(c["id"], c["agent"]) for c in data["claims"]] == [("T-001", "alice")]
    assert run_wb(b, "sync").returncode == 0 and run_wb(b, "note", "b's").returncode == 0
    assert run_wb(b, "sync").returncode == 0
    run_git(a, "fetch", "-q", "origin")
    data = json.loads(run_wb(a, "status", "--json").stdout)["sync"]
    assert data["ahead"] == 1 and data["behind"] == 1
    text = run_wb(a, "status").stdout
    assert "1 ahead, 1 behind origin" in text and "T-001 by alice until" in text


def test_several_renumbered_tasks_keep_the_log_chained(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for i in range(3):
        assert run_wb(a, "task", "add", f"a{i}").returncode == 0
    assert run_wb(a, "sync").returncode == 0
    for i in range(3):
        assert run_wb(b, "task", "add", f"b{i}").returncode == 0
    assert run_wb(b, "task", "start", "T-002").returncode == 0
    assert run_wb(b, "sync").returncode == 0
    assert run_wb(b, "validate").returncode == 0
    started = [t for t in board(b)["tasks"] if t["status"] == "in_progress"]
    assert [t["title"] for t in started] == ["b1"]  # the start followed its task to its new id
    sync_all([a, b])
    assert_converged([a, b])


def test_wb_init_ref_moves_state_off_the_users_branch(tmp_path: Path) -> None:
    remote = tmp_path / "r.git"
    run_git(tmp_path, "init", "-q", "--bare", str(remote))
    a = tmp_path / "a"
    run_git(tmp_path, "clone", "-q", str(remote), str(a))
    (a / "app.py").write_text("x\n")
    run_git(a, "add", "app.py")
    run_git(a, "commit", "-q", "-m", "mine")
    assert run_wb(a, "init").returncode == 0 and run_wb(a, "task", "add", "kept").returncode == 0
    head = run_git(a, "rev-parse", "HEAD")
    moved = run_wb(a, "init", "--ref", REF)
    assert moved.returncode == 0, moved.stderr
    assert "git rm -r -q --cached .workbench" in moved.stderr
    assert run_git(a, "rev-parse", "HEAD") == head  # the user's branch was not touched
    assert json.loads(run_git(a, "show", f"{REF}:.workbench/board.json"))["tasks"][0]["title"] == "kept"
    run_git(a, "rm", "-r", "-q", "--cached", ".workbench")
    run_git(a, "commit", "-q", "-m", "state moved")
    assert run_wb(a, "note", "on the ref now").returncode == 0
    assert run_git(a, "status", "--porcelain") == ""
    assert run_wb(a, "sync").returncode == 0
    assert run_git(remote, "rev-parse", REF) == run_git(a, "rev-parse", REF)
    assert run_wb(a, "replay", "--verify").returncode == 0


def test_worktrees_of_one_clone_share_the_state_ref_and_lose_nothing(tmp_path: Path) -> None:
    from tests.conftest import make_repo

    main = make_repo(tmp_path / "main")
    assert run_wb(main, "init", "--ref", REF).returncode == 0
    other = tmp_path / "other"
    run_git(main, "worktree", "add", "-q", "-b", "other", str(other))
    assert run_wb(other, "init", "--ref", REF).returncode == 0  # takes up the clone's wb-state
    assert run_wb(other, "task", "add", "from other").returncode == 0  # moves the shared ref
    late = run_wb(main, "task", "add", "from main")  # main's worktree was made from the older commit
    assert late.returncode == 0 and "moved past this worktree's state" in late.stderr and "wb sync" in late.stderr
    names = run_git(main, "show", f"{REF}:.workbench/board.json")
    assert "from main" not in names  # not committed over the other worktree's state
    merged = run_wb(main, "sync")
    assert merged.returncode == 0, merged.stderr
    assert run_wb(other, "sync").returncode == 0
    assert_converged([main, other])
    assert sorted(t["title"] for t in board(other)["tasks"]) == ["from main", "from other"]


def test_a_remote_log_that_cannot_be_replayed_is_refused_and_nothing_changes(remote: Path, tmp_path: Path) -> None:
    from workbench.git.repo import GitRepo

    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "mine").returncode == 0
    repo = GitRepo(b)  # b pushes a state commit whose last event names a task that does not exist
    tip = run_git(b, "rev-parse", REF).strip()
    files = repo.workbench_files_at(tip)
    events = [json.loads(line) for line in files["events.jsonl"][1].splitlines()]
    forged = {**events[-1], "seq": events[-1]["seq"] + 1, "id": "01KB0000000000000000000000", "type": "task.start",
              "payload": {"id": "T-999", "from": "todo"}}
    from workbench.model.jsonl import encode, line_hash

    forged["prev"] = line_hash(encode(events[-1]))
    files["events.jsonl"] = ("100644", files["events.jsonl"][1] + encode(forged) + b"\n")
    bad = repo.state_commit(files, [tip], "forged\n")
    run_git(b, "push", "-q", "origin", f"{bad}:refs/heads/{REF}")
    before, local = hash_workbench(a), run_git(a, "rev-parse", REF)
    out = run_wb(a, "sync")
    assert out.returncode == 5 and "cannot be replayed" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert hash_workbench(a) == before and run_git(a, "rev-parse", REF) == local


def test_a_config_edit_on_one_clone_survives_a_sync_that_takes_the_others_state(tmp_path: Path) -> None:
    """config.yaml edited by hand on A (not yet committed), B's new task taken by A's sync: the merge keeps
    what each side changed since their common ancestor — A's edit is kept, pushed, and reaches B."""
    remote = make_remote(tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    config = a / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("lock_timeout: 10", "lock_timeout: 42", 1))
    assert run_wb(b, "task", "add", "Added on B").returncode == 0 and run_wb(b, "sync").returncode == 0
    assert run_wb(a, "sync").returncode == 0
    assert "lock_timeout: 42" in config.read_text()
    assert [t["title"] for t in board(a)["tasks"]] == ["Added on B"]
    assert run_wb(b, "sync").returncode == 0
    assert "lock_timeout: 42" in (b / ".workbench" / "config.yaml").read_text()


def test_git_clean_x_of_a_workbench_on_its_own_ref_says_nothing_is_lost_and_wb_init_brings_it_back(
        tmp_path: Path) -> None:
    """With the state on wb-state, `.workbench/` is a checkout git ignores, so `git clean -fdx` removes it. The
    next command said only `no workbench …: run wb init first`, as in a repository that never had one; it now
    names the ref that holds the state, and `wb init` checks it out again with everything acknowledged."""
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "repo")
    assert run_wb(repo, "init", "--ref", REF).returncode == 0
    assert run_wb(repo, "task", "add", "kept on the ref").returncode == 0
    run_git(repo, "clean", "-q", "-fdx")
    assert not (repo / ".workbench").exists()
    gone = run_wb(repo, "status")
    assert gone.returncode == 1 and len(gone.stderr.strip().splitlines()) == 1, gone.stderr
    assert f"refs/heads/{REF}" in gone.stderr and "run `wb init`" in gone.stderr, gone.stderr
    back = run_wb(repo, "init")
    assert back.returncode == 0, back.stderr
    assert [t["title"] for t in board(repo)["tasks"]] == ["kept on the ref"]
    assert run_wb(repo, "validate").returncode == 0
