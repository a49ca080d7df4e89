"""`git gc` beside wb: a wb commit never names a pruned object under git's own gc settings, `--prune=now`
(which git calls unsafe beside writers) is detected and repaired by `wb doctor`, and wb's loose objects get
packed by `git gc --auto` as git's own commands do."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.conftest import about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _loose(repo: Path) -> int:
    return sum(len(files) for _dir, _sub, files in os.walk(repo / ".git" / "objects")
               if "pack" not in _dir and "info" not in _dir)


def test_a_reused_object_is_freshened(repo: Path) -> None:
    """The object for an unchanged file is reused, not rewritten: its mtime must be renewed, or a `git gc`
    that prunes old unreachable objects could prune it just as a new commit names it."""
    assert run_wb(repo, "init").returncode == 0
    blob = run_git(repo, "rev-parse", "HEAD:.workbench/config.yaml").strip()
    path = repo / ".git" / "objects" / blob[:2] / blob[2:]
    old = time.time() - 30 * 86400
    os.utime(path, (old, old))
    assert run_wb(repo, "note", "touches state, not config").returncode == 0
    assert path.stat().st_mtime > old + 86400


def test_prune_now_damage_is_found_and_repaired_by_doctor(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "note", "n1").returncode == 0
    # what a --prune=now racing the commit leaves: the commit, its objects gone
    tree = run_git(repo, "rev-parse", "HEAD^{tree}").strip()
    sub = run_git(repo, "rev-parse", "HEAD:.workbench").strip()
    events = run_git(repo, "rev-parse", "HEAD:.workbench/events.jsonl").strip()
    for sha in (tree, sub, events):
        (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    assert "missing" in run_git(repo, "fsck", check=False) + run_git(repo, "fsck", check=False)
    doctor = run_wb(repo, "doctor")
    assert doctor.returncode != 0 and "no longer has" in doctor.stdout + doctor.stderr
    fixed = run_wb(repo, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    fsck = run_git(repo, "fsck")
    assert "missing" not in fsck
    assert_sound(repo, acknowledged=["n1"])


def _write_loose_objects(repo: Path, count: int) -> None:
    """`count` real loose blobs, as a busy repository accumulates them between gcs."""
    import hashlib
    import zlib

    for i in range(count):
        body = f"blob {i}\n".encode()
        raw = f"blob {len(body)}\0".encode() + body
        sha = hashlib.sha1(raw).hexdigest()
        path = repo / ".git" / "objects" / sha[:2] / sha[2:]
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(zlib.compress(raw))


def test_gc_auto_packs_wbs_loose_objects(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    run_git(repo, "config", "gc.auto", "256")
    _write_loose_objects(repo, 3000)  # ~12 in objects/17: past git's estimate for gc.auto=256
    for i in range(3):
        assert run_wb(repo, "note", f"n{i}").returncode == 0
    deadline = time.time() + 60
    while time.time() < deadline and _loose(repo) > 500:
        time.sleep(0.2)
    assert _loose(repo) <= 500, "wb's commits never started git gc --auto"
    assert list((repo / ".git" / "objects" / "pack").glob("*.pack"))
    assert_sound(repo, acknowledged=["n0", "n1", "n2"])


def test_gc_auto_zero_turns_it_off(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    run_git(repo, "config", "gc.auto", "0")
    _write_loose_objects(repo, 3000)
    assert run_wb(repo, "note", "n").returncode == 0
    time.sleep(1)
    assert not list((repo / ".git" / "objects" / "pack").glob("*.pack"))


def test_git_gc_in_a_loop_beside_wb_writers_never_leaves_a_missing_object(repo: Path) -> None:
    import subprocess

    from tests.conftest import WB_ARGV

    assert run_wb(repo, "init").returncode == 0
    writers = [subprocess.Popen(["bash", "-c", "set -e; " + "; ".join(
        f"{' '.join(WB_ARGV)} note w{w}-{i}" for i in range(10))], cwd=repo,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for w in range(2)]
    gcs = 0
    while any(w.poll() is None for w in writers):
        subprocess.run(["git", "gc", "--quiet"], cwd=repo, capture_output=True)
        gcs += 1
    for w in writers:
        assert w.wait() == 0, w.stderr.read().decode() if w.stderr else ""
    assert gcs >= 1
    assert_sound(repo, acknowledged=[f"w{w}-{i}" for w in range(2) for i in range(10)])
    assert "missing" not in run_git(repo, "fsck", "--full", check=False)
