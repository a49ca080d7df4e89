"""A sealed file changed in the work tree is never committed by wb (docs/git.md, "Sealed files").

A person (or an agent) edits or deletes a sealed log segment (.workbench/log/NNNNNN.jsonl) or an archive chunk
(.workbench/archive/*.json): wb's next mutation refuses (exit 5) before it writes anything, in one line naming
the file and the `git checkout` that restores it, and HEAD keeps the sealed bytes. wb's own changes of sealed
files — a segment a merge left over, removed once the log holds its events, and a seal under its name — pass,
even when the commit that carries them comes later than the write that made them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import about_git, make_repo, run_git, run_wb
from tests.store.test_segments import assert_sound

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files

IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL")


def _ok(repo: Path, *args: str) -> None:
    out = run_wb(repo, *args)
    assert out.returncode == 0, out.stdout + out.stderr


def _workbench(path: Path, config: str) -> Path:
    repo = make_repo(path)
    _ok(repo, "init")
    with open(repo / ".workbench" / "config.yaml", "a", encoding="utf-8") as fh:
        fh.write(config)
    _ok(repo, "note", "config set")
    return repo


def _refused(repo: Path, rel: str, what: str) -> None:
    """`wb task add` refuses in one line naming `rel` and its restore, writes nothing and commits nothing."""
    wb = repo / ".workbench"
    before = {name: (wb / name).read_bytes() for name in ("events.jsonl", "board.json", "state.md")}
    head = run_git(repo, "rev-parse", "HEAD")
    out = run_wb(repo, "task", "add", "after the edit")
    assert out.returncode == 5, out.stdout + out.stderr
    line = out.stderr.strip()
    assert "\n" not in line and line.startswith("wb: ")
    assert f".workbench/{rel} is {what}" in line
    assert f"`git checkout HEAD -- .workbench/{rel}`" in line
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert {name: (wb / name).read_bytes() for name in before} == before
    assert "after the edit" not in run_git(repo, "show", "HEAD:.workbench/board.json")


def test_a_sealed_log_segment_edited_by_hand_is_refused_and_never_committed(tmp_path: Path) -> None:
    repo = _workbench(tmp_path / "repo", "log:\n  segment_events: 5\n")
    acked = [f"n {i}" for i in range(12)]
    for text in acked:
        _ok(repo, "note", text)
    seg = repo / ".workbench" / "log" / "000002.jsonl"
    sealed = seg.read_bytes()
    assert b'"n ' in sealed
    seg.write_bytes(sealed.replace(b'"n ', b'"N ', 1))  # as an editor would save it
    _refused(repo, "log/000002.jsonl", "modified")
    assert run_git(repo, "cat-file", "blob", "HEAD:.workbench/log/000002.jsonl").encode() == sealed
    _refused(repo, "log/000002.jsonl", "modified")  # and again: the refusal is not a one-off
    run_git(repo, "checkout", "HEAD", "--", ".workbench/log/000002.jsonl")  # what the refusal said to run
    _ok(repo, "note", "after the restore")
    assert_sound(repo, [*acked, "after the restore"])


def _archive_chunk_changed(repo: Path, tmp_path: Path, what: str) -> tuple[str, bytes]:
    """Eight done tasks imported (archived in chunks of three), then the first chunk "modified" or "deleted" in
    the work tree: its path under .workbench/ and its sealed bytes."""
    source = tmp_path / "tasks.md"
    source.write_text("".join(f"- [x] task {i}: done\n  id: T-{i:03d}\n" for i in range(1, 9)))
    _ok(repo, "task", "import", str(source))
    chunks = sorted((repo / ".workbench" / "archive").glob("*.json"))
    assert chunks, "the import archived no task"
    rel, sealed = f"archive/{chunks[0].name}", chunks[0].read_bytes()
    if what == "modified":
        chunks[0].write_bytes(sealed.replace(b"task 1", b"TASK 1", 1))
    else:
        chunks[0].unlink()
    return rel, sealed


@pytest.mark.parametrize("what", ["modified", "deleted"])
def test_an_archive_chunk_changed_or_deleted_is_refused_and_never_committed(tmp_path: Path, what: str) -> None:
    repo = _workbench(tmp_path / "repo", "archive:\n  keep: 2\n  chunk: 3\n")
    rel, sealed = _archive_chunk_changed(repo, tmp_path, what)
    _refused(repo, rel, what)
    assert run_git(repo, "cat-file", "blob", f"HEAD:.workbench/{rel}").encode() == sealed
    run_git(repo, "checkout", "HEAD", "--", f".workbench/{rel}")
    _ok(repo, "note", "after the restore")
    assert_sound(repo, ["config set", "after the restore"])


def test_wb_s_own_removal_of_a_left_over_segment_is_committed_by_a_later_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two clones sealed different events; the merge leaves segments over. The next write removes them and
    seals again under their names, but cannot commit (git has no identity); the write after it commits those
    changes of sealed files: they are wb's own, recorded before it made them."""
    remote = tmp_path / "remote.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a = _workbench(tmp_path / "a", "log:\n  segment_events: 5\n")
    run_git(a, "remote", "add", "origin", str(remote))
    run_git(a, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    run_git(tmp_path, "clone", "-q", str(remote), str(b))
    _ok(b, "status")  # a clone's first command registers the drivers
    ours = [f"A {i}" for i in range(6)]
    theirs = [f"B {i}" for i in range(6)]
    for text in ours:
        _ok(a, "note", text)
    for text in theirs:
        _ok(b, "note", text)
    run_git(b, "push", "-q", "origin", "main")
    run_git(a, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    saved = {name: os.environ[name] for name in IDENTITY_VARS if name in os.environ}
    for name in IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)
    out = run_wb(a, "note", "written, not committed")
    assert out.returncode == 0 and "no identity" in out.stderr, out.stdout + out.stderr
    status = run_git(a, "status", "--porcelain", "--", ".workbench/log")
    assert " D " in status or " M " in status, f"the write changed no sealed segment:\n{status}"
    for name, value in saved.items():
        monkeypatch.setenv(name, value)
    _ok(a, "note", "committed")
    acked = ["config set", *ours, *theirs, "written, not committed", "committed"]
    assert_sound(a, acked)


@pytest.mark.parametrize("what", ["modified", "deleted"])
def test_a_commit_checks_the_sealed_files_of_the_listing_it_commits(tmp_path: Path, what: str) -> None:
    """The commit itself (here a checkpoint's, with no write before it to refuse) checks the sealed files on the
    listing it is about to commit: an archive chunk changed or deleted in the work tree is never committed."""
    from workbench.api import Bench

    repo = _workbench(tmp_path / "repo", "archive:\n  keep: 2\n  chunk: 3\n")
    rel, sealed = _archive_chunk_changed(repo, tmp_path, what)
    head = run_git(repo, "rev-parse", "HEAD")
    bench = Bench.open(repo)
    outcome = bench.wb.checkpoint("a checkpoint")
    assert outcome.sha is None and outcome.skipped is not None
    assert f".workbench/{rel} is {what} in the work tree" in outcome.skipped, outcome.skipped
    assert outcome.skipped.startswith("not committed: ") and "commits nothing" in outcome.skipped
    assert run_git(repo, "rev-parse", "HEAD") == head
    run_git(repo, "checkout", "HEAD", "--", f".workbench/{rel}")
    outcome = bench.wb.checkpoint("a checkpoint")
    assert outcome.skipped is None and run_git(repo, "rev-parse", "HEAD") == head  # nothing else to commit
    bench.close()
