"""Sealed log segments through the user's git: two clones that appended since their fork merge by event id as
before; a clone that sealed merged with one that did not, a `git pull --rebase` across a seal, and two clones
that each sealed different events all end in a workbench that validates, replays, and holds every
acknowledged event of both (docs/git.md#sealed-segments-and-merges)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import about_git, make_repo, run_git, run_wb
from tests.store.test_segments import SMALL, assert_sound, committed_log, segments, whole_log

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _ok(repo: Path, *args: str) -> None:
    out = run_wb(repo, *args)
    assert out.returncode == 0, out.stdout + out.stderr


def _two_clones(tmp_path: Path, before_fork: int) -> tuple[Path, Path, list[str]]:
    remote = tmp_path / "remote.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a = make_repo(tmp_path / "a")
    _ok(a, "init")
    with open(a / ".workbench" / "config.yaml", "a", encoding="utf-8") as fh:
        fh.write(SMALL)
    texts = [f"shared {i}" for i in range(before_fork)]
    for text in ["config set", *texts]:
        _ok(a, "note", text)
    run_git(a, "remote", "add", "origin", str(remote))
    run_git(a, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    run_git(tmp_path, "clone", "-q", str(remote), str(b))
    _ok(b, "status")  # a clone's first command registers the drivers
    return a, b, ["config set", *texts]


def _notes(repo: Path, prefix: str, n: int) -> list[str]:
    texts = [f"{prefix} {i}" for i in range(n)]
    for text in texts:
        _ok(repo, "note", text)
    return texts


def _texts(repo: Path) -> list[str]:
    return [e["payload"]["text"] for e in whole_log(repo) if e["type"] == "note.add"]


def test_two_clones_that_appended_to_the_tail_merge_by_event_id(tmp_path: Path) -> None:
    a, b, shared = _two_clones(tmp_path, 4)  # seq 7 at the fork: both share segment 1 (seq 1-5)
    assert len(segments(a)) == 1
    mine = _notes(a, "A", 1)
    theirs = _notes(b, "B", 1)
    run_git(b, "push", "-q", "origin", "main")
    run_git(a, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert_sound(a, [*shared, *mine, *theirs])


@pytest.mark.parametrize("sealer", ["ours", "theirs"])
def test_a_merge_of_a_clone_that_sealed_with_one_that_did_not(tmp_path: Path, sealer: str) -> None:
    a, b, shared = _two_clones(tmp_path, 0)  # seq 3 at the fork: nothing sealed yet
    sealed_side, other = (a, b) if sealer == "ours" else (b, a)
    many = _notes(sealed_side, "sealer", 4)  # seals 1..5 (and more)
    few = _notes(other, "other", 1)
    assert segments(sealed_side) and not segments(other)
    run_git(b, "push", "-q", "origin", "main")
    run_git(a, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert_sound(a, [*shared, *many, *few])
    _ok(a, "note", "after the merge")  # the next write tidies what the merge left and seals what is due
    assert_sound(a, [*shared, *many, *few, "after the merge"])
    run_git(a, "push", "-q", "origin", "main")
    run_git(b, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert_sound(b, [*shared, *many, *few, "after the merge"])


@pytest.mark.parametrize("sealer", ["upstream", "local"])
def test_pull_rebase_across_a_seal(tmp_path: Path, sealer: str) -> None:
    a, b, shared = _two_clones(tmp_path, 0)
    upstream_n, local_n = (4, 1) if sealer == "upstream" else (1, 4)
    up = _notes(a, "up", upstream_n)
    run_git(a, "push", "-q", "origin", "main")
    local = _notes(b, "local", local_n)
    run_git(b, "pull", "-q", "--rebase", "origin", "main")
    assert_sound(b, [*shared, *up, *local])
    # upstream's events keep their place; the local ones follow
    texts = _texts(b)
    assert texts.index(up[-1]) < texts.index(local[0])
    _ok(b, "note", "after the rebase")
    assert_sound(b, [*shared, *up, *local, "after the rebase"])
    run_git(b, "push", "-q", "origin", "main")
    run_git(a, "pull", "-q", "--rebase", "origin", "main")
    assert_sound(a, [*shared, *up, *local, "after the rebase"])


def test_both_clones_sealed_different_events_since_the_fork(tmp_path: Path) -> None:
    a, b, shared = _two_clones(tmp_path, 0)
    ours = _notes(a, "A", 6)
    theirs = _notes(b, "B", 6)
    assert segments(a) and segments(b)
    run_git(b, "push", "-q", "origin", "main")
    run_git(a, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert_sound(a, [*shared, *ours, *theirs])
    _ok(a, "note", "reconciled")  # the segments the merge left over are removed; their events are in the log
    assert_sound(a, [*shared, *ours, *theirs, "reconciled"])
    log = committed_log(a)
    assert len({e["id"] for e in log}) == len(log)


def test_pull_rebase_when_both_clones_sealed_since_the_fork(tmp_path: Path) -> None:
    a, b, shared = _two_clones(tmp_path, 0)
    up = _notes(a, "up", 6)
    run_git(a, "push", "-q", "origin", "main")
    local = _notes(b, "local", 6)
    assert segments(a) and segments(b)
    run_git(b, "pull", "-q", "--rebase", "origin", "main")
    assert_sound(b, [*shared, *up, *local])
    _ok(b, "note", "after")
    assert_sound(b, [*shared, *up, *local, "after"])
    run_git(b, "push", "-q", "origin", "main")
    run_git(a, "pull", "-q", "--rebase", "origin", "main")
    assert_sound(a, [*shared, *up, *local, "after"])
