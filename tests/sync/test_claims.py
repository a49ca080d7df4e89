"""`wb task claim` scenarios: real processes race for one task; leases expire; worktrees of one clone."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import about_git, make_repo, run_git, run_wb
from tests.sync.helpers import REF, assert_converged, board, clone, make_remote, spawn, sync_all

pytestmark = about_git  # wb sync and claims between clones, over a git remote (a SQLite workbench has no state branch)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return make_remote(tmp_path)


def _holder(path: Path, task_id: str) -> dict:
    return next(t for t in board(path)["tasks"] if t["id"] == task_id).get("claim", {})


def test_concurrent_claims_from_real_processes_exactly_one_wins(remote: Path, tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    assert run_wb(seed, "task", "add", "the prize").returncode == 0 and run_wb(seed, "sync").returncode == 0
    clones = [clone(remote, tmp_path / f"c{i}") for i in range(4)]
    procs = [spawn(c, "task", "claim", "T-001", "--agent", f"agent{i}") for i, c in enumerate(clones)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    winners = [i for i, (code, _out, _err) in enumerate(results) if code == 0]
    assert len(winners) == 1, results
    winner = f"agent{winners[0]}"
    for i, (code, _out, err) in enumerate(results):
        if i != winners[0]:
            assert code == 6, err
            assert f"T-001 is claimed by {winner} until" in err and len(err.strip().splitlines()) == 1
    sync_all([seed, *clones])
    assert_converged([seed, *clones])
    assert all(_holder(c, "T-001")["agent"] == winner for c in [seed, *clones])


def test_a_lease_expires_and_another_agent_takes_over(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "long job").returncode == 0
    won = run_wb(a, "task", "claim", "T-001", "--agent", "alice", "--lease", "2s", "--json")
    assert won.returncode == 0, won.stderr
    claim = json.loads(won.stdout)
    assert claim["agent"] == "alice" and claim["published"] is True and claim["lease_s"] == 2
    refused = run_wb(b, "task", "claim", "T-001", "--agent", "bob")
    assert refused.returncode == 6 and f"claimed by alice until {claim['until']}" in refused.stderr
    time.sleep(2.2)  # alice died: her lease runs out
    taken = run_wb(b, "task", "claim", "T-001", "--agent", "bob", "--json")
    assert taken.returncode == 0, taken.stderr
    assert json.loads(taken.stdout)["took_over_from"] == "alice"
    subject = run_git(b, "log", "-1", "--format=%s", REF)
    assert "claim T-001 for bob (took it over from alice" in subject  # recorded as a takeover
    late = run_wb(a, "task", "claim", "T-001", "--agent", "alice")
    assert late.returncode == 6 and "claimed by bob" in late.stderr
    sync_all([a, b])
    assert_converged([a, b])
    assert _holder(a, "T-001")["agent"] == "bob" and _holder(a, "T-001")["took_over_from"] == "alice"


def test_the_holders_writes_renew_the_lease(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    assert run_wb(a, "task", "add", "job").returncode == 0
    first = json.loads(run_wb(a, "task", "claim", "T-001", "--agent", "alice", "--lease", "1h", "--json").stdout)
    time.sleep(0.05)
    assert run_wb(a, "task", "start", "T-001").returncode == 0
    renewed = _holder(a, "T-001")
    assert renewed["until"] > first["until"] and renewed["since"] == first["since"]
    again = json.loads(run_wb(a, "task", "claim", "T-001", "--agent", "alice", "--json").stdout)
    assert again["agent"] == "alice" and again["since"] == first["since"]  # a renewal, not a new claim


def test_claims_among_the_worktrees_of_one_clone_without_a_remote(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    assert run_wb(main, "init", "--ref", REF).returncode == 0
    assert run_wb(main, "task", "add", "shared").returncode == 0
    trees = [main]
    for i in range(3):
        wt = tmp_path / f"wt{i}"
        run_git(main, "worktree", "add", "-q", "-b", f"work{i}", str(wt))
        joined = run_wb(wt, "init", "--ref", REF)
        assert joined.returncode == 0, joined.stderr
        assert [t["title"] for t in board(wt)["tasks"]] == ["shared"]  # took up the clone's state ref
        trees.append(wt)
    procs = [spawn(t, "task", "claim", "T-001", "--agent", f"agent{i}") for i, t in enumerate(trees)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    codes = [r[0] for r in results]
    assert codes.count(0) == 1 and codes.count(6) == len(trees) - 1, results
    winner = f"agent{codes.index(0)}"
    for t in trees:
        no_remote = run_wb(t, "sync")  # no remote: sync merges the worktrees and says so; claims need none
        assert no_remote.returncode == 0 and "no git remote" in no_remote.stderr
        assert run_wb(t, "task", "claim", "T-001", "--agent", "someone-else").returncode == 6
    tip = run_git(main, "rev-parse", REF).strip()
    files = run_git(main, "show", f"{tip}:.workbench/board.json")
    assert json.loads(files)["tasks"][0]["claim"]["agent"] == winner


def test_remote_none_claims_among_this_clones_worktrees_without_asking_the_remote(remote: Path,
                                                                                    tmp_path: Path) -> None:
    """`--remote none` (the help's "none: this clone's worktrees") was taken for a remote named `none`: exit 1,
    `no git remote 'none'`, with the state on its own ref (found by the fuzzer's wb-state mode, seed 8). It
    decides among this clone's worktrees by the shared ref and publishes nothing; the remote, unreachable
    meanwhile, is never asked."""
    a = clone(remote, tmp_path / "a")
    assert run_wb(a, "task", "add", "first").returncode == 0
    pushed = run_git(remote, "rev-parse", f"refs/heads/{REF}").strip()
    run_git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))  # asking it would fail
    won = run_wb(a, "task", "claim", "T-001", "--remote", "none", "--agent", "alice", "--json")
    assert won.returncode == 0, won.stderr
    claim = json.loads(won.stdout)
    assert claim["agent"] == "alice" and claim["published"] is True
    assert _holder(a, "T-001")["agent"] == "alice"
    assert run_wb(a, "task", "claim", "T-001", "--remote", "none", "--agent", "carol").returncode == 6
    assert run_git(remote, "rev-parse", f"refs/heads/{REF}").strip() == pushed  # nothing was pushed


def test_a_done_task_cannot_be_claimed_and_an_unknown_one_is_not_found(remote: Path, tmp_path: Path) -> None:
    a = clone(remote, tmp_path / "a")
    assert run_wb(a, "task", "add", "x").returncode == 0 and run_wb(a, "task", "done", "T-001").returncode == 0
    assert run_wb(a, "task", "claim", "T-001").returncode == 5
    assert run_wb(a, "task", "claim", "T-099").returncode == 1
    assert run_wb(a, "task", "claim", "T-001", "--lease", "soon").returncode == 2


def test_a_claim_published_after_the_task_was_done_is_void(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "quick").returncode == 0 and run_wb(a, "sync").returncode == 0
    assert run_wb(b, "sync").returncode == 0
    # b claims while offline from a's point of view: committed on b's state ref, not yet published
    hold = tmp_path / "hold"
    proc = spawn(b, "task", "claim", "T-001", "--agent", "bob", WB_PAUSE="before_push", WB_PAUSE_FILE=str(hold))
    deadline = time.monotonic() + 60
    while not Path(str(hold) + ".here").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    Path(str(hold) + ".here").unlink()
    # the first push of bob's claim waits; alice claims, finishes and publishes first
    assert run_wb(a, "task", "claim", "T-001", "--agent", "alice").returncode == 0
    assert run_wb(a, "task", "done", "T-001").returncode == 0 and run_wb(a, "sync").returncode == 0
    Path(str(hold) + ".go").write_text("")
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode in (5, 6), err  # lost: done, or held by alice
    sync_all([a, b])
    assert_converged([a, b])
    assert _holder(a, "T-001")["agent"] == "alice"


def test_a_claim_killed_before_its_push_is_not_won_and_converges(remote: Path, tmp_path: Path) -> None:
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "contested").returncode == 0 and run_wb(a, "sync").returncode == 0
    assert run_wb(b, "sync").returncode == 0
    proc = spawn(a, "task", "claim", "T-001", "--agent", "alice", WB_FAULT="before_push")
    proc.communicate(timeout=60)
    assert proc.returncode == -9  # committed on a's state ref, never published: not won
    won = run_wb(b, "task", "claim", "T-001", "--agent", "bob")
    assert won.returncode == 0, won.stderr
    assert run_wb(a, "sync").returncode == 0  # publishes alice's claim after bob's: void
    assert run_wb(a, "task", "claim", "T-001", "--agent", "alice").returncode == 6
    sync_all([a, b])
    assert_converged([a, b])
    assert _holder(a, "T-001")["agent"] == "bob"


def test_task_next_claim_gives_each_agent_a_different_ready_task(remote: Path, tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    for title in ("first", "second"):
        assert run_wb(seed, "task", "add", title).returncode == 0
    assert run_wb(seed, "sync").returncode == 0
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    got_b = run_wb(b, "task", "next", "--claim", "--agent", "agent-b")
    assert got_b.returncode == 0 and got_b.stdout.startswith("T-001 claimed by agent-b until"), got_b.stderr
    got_a = run_wb(a, "task", "next", "--claim", "--agent", "agent-a", "--json")
    assert got_a.returncode == 0, got_a.stderr
    assert json.loads(got_a.stdout)["id"] == "T-002"  # T-001 is agent-b's: the next ready one
    none_left = run_wb(seed, "task", "next", "--claim", "--agent", "agent-c")
    assert none_left.returncode == 1 and "no task is ready to claim" in none_left.stderr  # NotFound: exit 1
    sync_all([seed, a, b])
    assert_converged([seed, a, b])


def test_task_next_claim_takes_the_highest_priority_first(remote: Path, tmp_path: Path) -> None:
    """Issue 22: `--claim` picks as `wb task next` does: by priority, then board order."""
    seed = tmp_path / "seed"
    assert run_wb(seed, "task", "add", "later").returncode == 0
    assert run_wb(seed, "task", "add", "urgent", "--priority", "0").returncode == 0
    assert run_wb(seed, "sync").returncode == 0
    got = run_wb(seed, "task", "next", "--claim", "--agent", "agent-a", "--json")
    assert got.returncode == 0 and json.loads(got.stdout)["id"] == "T-002", got.stdout + got.stderr
