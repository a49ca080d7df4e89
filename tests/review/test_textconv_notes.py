"""git's textconv cache filled by wb (review/textconv_notes.py, git/notes.py): `git log -p` reads the same bytes
from wb's notes as from the driver, trusts no notes ref under another command, and a `git log -p` writing the
same refs meanwhile leaves them valid.

git runs the drivers through the launcher wb registered, which starts the installed wb isolated (`python -I`);
here the launcher's interpreter is a wrapper that starts this tree's wb instead, so both sides of every
comparison are the code under test.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import about_git, run_git, run_wb
from workbench.review import textconv_notes

pytestmark = about_git

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("board", "events", "state")


def _git_bytes(repo: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _drivers_from_this_tree(repo: Path) -> None:
    """Point the launcher's interpreter at a wrapper that imports wb from this tree (still isolated)."""
    launcher = repo / ".git" / "wb" / "driver"
    wrapper = repo / ".git" / "wb" / "python-under-test"
    wrapper.write_text("#!/bin/sh\nshift 3\n"  # drops `-I -m workbench.cli.main`
                       f"exec '{sys.executable}' -I -c 'import runpy, sys; sys.path.insert(0, \"{ROOT}\"); "
                       "runpy.run_module(\"workbench.cli.main\", run_name=\"__main__\", alter_sys=True)' \"$@\"\n")
    wrapper.chmod(0o755)
    text = launcher.read_text()
    launcher.write_text(text.replace(text.split("py=", 1)[1].split("\n", 1)[0], str(wrapper)))


def _history(repo: Path) -> None:
    """Commits of all three files by wb, a hand edit of state.md, then a board.json that is not JSON."""
    assert run_wb(repo, "init").returncode == 0
    _drivers_from_this_tree(repo)
    for title in ("one", "deux — é", "three"):
        assert run_wb(repo, "task", "add", title).returncode == 0
    assert run_wb(repo, "task", "start", "T-001").returncode == 0
    assert run_wb(repo, "note", "a decision, with a \x1b[31m colour").returncode == 0
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text() + "\nA line written by hand.\n")
    run_git(repo, "commit", "-qam", "a hand edit of state.md")
    (repo / ".workbench" / "board.json").write_text('{"tasks": [ broken\n')
    (repo / ".workbench" / "events.jsonl").open("a").write('{"torn": \n')
    run_git(repo, "commit", "-qam", "an unreadable board.json and a damaged log line")


def _drop_notes(repo: Path) -> None:
    for ref in run_git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/").split():
        run_git(repo, "update-ref", "-d", ref)


def _refs(repo: Path) -> str:
    return run_git(repo, "for-each-ref", "refs/notes/")


def _from_drivers(repo: Path) -> bytes:
    """`git log -p` with no notes: git runs the driver for every file version (and caches it); then dropped."""
    _drop_notes(repo)
    shown = _git_bytes(repo, "log", "-p")
    _drop_notes(repo)
    return shown


def _fill(repo: Path) -> int:
    return textconv_notes.fill(repo, repo / ".git")


def test_git_log_p_from_wbs_notes_is_byte_for_byte_the_drivers(repo: Path) -> None:
    _history(repo)
    expected = _from_drivers(repo)
    assert b"+T-002 [todo]" in expected and b"(wb textconv: broken JSON" in expected  # the views, not raw files
    assert _fill(repo) > 0
    before = _refs(repo)
    assert len(before.splitlines()) == 3
    for kind in KINDS:  # each ref's message is the driver's command: what git trusts
        message = run_git(repo, "log", "-1", "--format=%s", f"refs/notes/textconv/wb-{kind}").strip()
        assert message == run_git(repo, "config", f"diff.wb-{kind}.textconv").strip()
    assert _git_bytes(repo, "log", "-p") == expected
    assert _refs(repo) == before  # git found every view it showed in the notes: it ran no driver, wrote nothing
    assert _fill(repo) == 0  # all noted: nothing to add


def test_a_notes_ref_under_another_command_is_neither_trusted_nor_changed(repo: Path) -> None:
    _history(repo)
    expected = _from_drivers(repo)
    head_board = run_git(repo, "rev-parse", "HEAD~1:.workbench/board.json").strip()
    bogus = run_git(repo, "hash-object", "-w", "--stdin", input="BOGUS VIEW\n").strip()
    tree = run_git(repo, "mktree", input=f"100644 blob {bogus}\t{head_board}\n").strip()
    foreign = run_git(repo, "commit-tree", tree, "-m", "someone else's textconv").strip()
    run_git(repo, "update-ref", "refs/notes/textconv/wb-board", foreign)
    assert _fill(repo) > 0  # the other two drivers' notes
    assert run_git(repo, "rev-parse", "refs/notes/textconv/wb-board").strip() == foreign  # wb left it alone
    shown = _git_bytes(repo, "log", "-p")
    assert b"BOGUS" not in shown
    assert shown == expected


def test_a_git_log_p_writing_the_same_refs_meanwhile_leaves_them_valid(repo: Path) -> None:
    _history(repo)
    expected = _from_drivers(repo)
    for _round in range(3):
        _drop_notes(repo)
        git = subprocess.Popen(["git", "log", "-p"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        filler = threading.Thread(target=_fill, args=(repo,))
        filler.start()
        out, err = git.communicate(timeout=120)
        filler.join(timeout=120)
        assert git.returncode == 0, err
        assert out == expected
        for kind in KINDS:
            message = run_git(repo, "log", "-1", "--format=%s", f"refs/notes/textconv/wb-{kind}").strip()
            assert message == run_git(repo, "config", f"diff.wb-{kind}.textconv").strip()
        _fill(repo)  # whatever git overwrote is added again, on top of git's own
        assert _git_bytes(repo, "log", "-p") == expected


def test_a_fresh_clones_first_wb_command_fills_the_cache(repo: Path, tmp_path: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    for title in ("one", "two"):
        assert run_wb(repo, "task", "add", title).returncode == 0
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert run_git(clone, "for-each-ref", "refs/notes/") == ""  # a clone fetches no notes
    assert run_wb(clone, "status").returncode == 0  # registers the drivers, and fills git's cache
    before = _refs(clone)
    assert len(before.splitlines()) == 3
    _drivers_from_this_tree(clone)
    shown = _git_bytes(clone, "log", "-p")
    assert b"+T-002 [todo]" in shown
    assert _refs(clone) == before  # every view came from wb's notes
    assert shown == _from_drivers(clone)


def test_a_fresh_clones_first_bench_fills_the_cache_when_closed(repo: Path, tmp_path: Path) -> None:
    """The Python API's first use of a clone registers the drivers too: closing the Bench fills git's cache, as
    the command line's end does."""
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "task", "add", "one").returncode == 0
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(repo), str(clone))
    from workbench.api import Bench

    with Bench.open(clone) as bench:
        assert [t["title"] for t in bench.list_tasks()] == ["one"]
        assert run_git(clone, "for-each-ref", "refs/notes/") == ""  # registered, not filled yet
    assert len(_refs(clone).splitlines()) == 3
    _drivers_from_this_tree(clone)
    assert _git_bytes(clone, "log", "-p") == _from_drivers(clone)


def test_a_fanned_out_notes_tree_reads_and_shows_the_same(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past FANOUT_AT notes the tree is split by the blob id's first two hex digits, as git splits its own."""
    from workbench.git import notes

    _history(repo)
    expected = _from_drivers(repo)
    monkeypatch.setattr(notes, "FANOUT_AT", 2)
    assert _fill(repo) > 0
    tree = run_git(repo, "ls-tree", "refs/notes/textconv/wb-board").splitlines()
    assert tree and all(line.split()[1] == "tree" and len(line.split("\t")[1]) == 2 for line in tree)
    before = _refs(repo)
    assert _git_bytes(repo, "log", "-p") == expected
    assert _refs(repo) == before
    assert _fill(repo) == 0  # the fanned-out notes are read back: nothing missing


def test_the_walk_for_commits_is_bounded(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the commits of HEAD's last WALK are looked at: a young workbench in a long history costs no full walk."""
    _history(repo)
    _drop_notes(repo)
    monkeypatch.setattr(textconv_notes, "WALK", 1)
    assert _fill(repo) == 4  # HEAD's own change: board.json and events.jsonl, both sides
    monkeypatch.setattr(textconv_notes, "WALK", 500)
    assert _fill(repo) > 0  # the rest
