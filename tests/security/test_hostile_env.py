"""A hostile environment: a read-only `.workbench/`, a state.md that cannot be read, a full disk, a repository
on a path with spaces and non-ASCII characters. Each ends in one clear line (exit 1) with nothing half-written,
and afterwards the workbench loads and validates with every acknowledged mutation present.

As root, file modes do not stop writes: those tests run `wb` through `setpriv` without capabilities (skipped
when that is not possible). The real full disk is a small tmpfs (skipped where mounting is not allowed); the
in-process cases raise ENOSPC from the write path itself.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import stored
from tests.conftest import about_files, hash_workbench, make_repo
from workbench.model.layout import Paths

from .helpers import PY, config_yaml, init_workbench, one_line, plan, run_git, wb, wb_ok


def _unprivileged() -> list[str] | None:
    """A command prefix under which file modes apply (None: not possible here)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-all", "--inh-caps=-all"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.fixture
def unprivileged() -> list[str]:
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("cannot drop privileges here: file modes do not apply to root")
    return prefix


def _chmod_tree(path: Path, writable: bool, recursive: bool = True) -> None:
    paths = [path, *(path.rglob("*") if recursive else [])]
    for p in paths:
        if p.is_symlink():
            continue
        mode = p.stat().st_mode
        p.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _no_temp_files(repo: Path) -> None:
    assert not list((repo / ".workbench").rglob(".tmp-*"))


@pytest.fixture
def acked(repo: Path) -> Path:
    init_workbench(repo, config_yaml())
    wb_ok(repo, "task", "add", "first")
    wb_ok(repo, "note", "acknowledged before the trouble")
    return repo


def _assert_recovered(repo: Path, notes: list[str]) -> None:
    wb_ok(repo, "validate")
    wb_ok(repo, "replay", "--verify")
    state = stored.state_text(repo)
    logged = _notes(repo)
    for note in notes:
        assert note in logged and note in state, note


def _notes(repo: Path) -> list[str]:
    lines = stored.event_bytes(repo).decode().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    return [e["payload"]["text"] for e in events if e["type"] == "note.add"]


# -- read-only and unreadable ------------------------------------------------------------------------------

@about_files  # the files' permissions
@pytest.mark.parametrize("what", ["everything", "directory only", "events.jsonl only"])
def test_read_only_workbench_refuses_in_one_line(acked: Path, unprivileged: list[str], what: str) -> None:
    wbdir = acked / ".workbench"
    target = {"everything": wbdir, "directory only": wbdir, "events.jsonl only": wbdir / "events.jsonl"}[what]
    before = hash_workbench(acked)
    _chmod_tree(target, writable=False, recursive=what == "everything")
    try:
        line = one_line(wb(acked, "note", "refused", prefix=unprivileged), 1)
        assert "Permission denied" in line and ".workbench" in line
        one_line(wb(acked, "task", "add", "refused", prefix=unprivileged), 1)
        assert hash_workbench(acked) == before  # nothing half-written: the log did not grow either
        _no_temp_files(acked)
        status = wb(acked, "status", prefix=unprivileged)  # reading still works
        assert status.returncode == 0, status.stderr
    finally:
        _chmod_tree(target, writable=True, recursive=what == "everything")
    _assert_recovered(acked, ["acknowledged before the trouble"])
    assert "refused" not in _notes(acked)


@about_files  # the files' permissions
def test_unreadable_state_md_is_one_line(acked: Path, unprivileged: list[str]) -> None:
    """(With its .cache/ copy, wb need not read state.md at all: remove it, as in a fresh clone.)"""
    state = acked / ".workbench" / "state.md"
    shutil.rmtree(Paths(acked).cache)
    before = hash_workbench(acked)
    state.chmod(0)
    try:
        for args in (["status"], ["note", "x"], ["validate"]):
            line = one_line(wb(acked, *args, prefix=unprivileged), 1)
            assert "state.md: Permission denied" in line
    finally:
        state.chmod(0o644)
    assert hash_workbench(acked) == before
    _assert_recovered(acked, ["acknowledged before the trouble"])


# -- disk full, in process -----------------------------------------------------------------------------------

def _enospc(path: object = None) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path) if path else None)


@about_files  # a write of a file fails (SQLite: test_real_full_disk)
def test_disk_full_on_the_log_append_leaves_nothing(acked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A short write (the disk filled up mid-append) is taken back: the workbench is byte-identical."""
    from workbench.api import Bench, validate_workbench
    from workbench.store import eventlog
    from workbench.store.workbench import Workbench

    before = hash_workbench(acked)
    real_write = os.write

    def short_write(fd: int, data: bytes) -> int:
        return real_write(fd, bytes(data)[: len(data) // 2])

    monkeypatch.setattr(eventlog.os, "write", short_write)
    with pytest.raises(OSError) as caught:
        Bench.open(acked).note("lost to a full disk")
    monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC
    assert hash_workbench(acked) == before
    assert validate_workbench(Workbench(acked)) == []
    Bench.open(acked).note("after the disk was freed")
    assert _notes(acked) == ["acknowledged before the trouble", "after the disk was freed"]


@about_files  # a write of a file fails (SQLite: test_real_full_disk)
@pytest.mark.parametrize("failing", ["state.md", "board.json"])
def test_disk_full_on_a_snapshot_keeps_the_logged_change(acked: Path, monkeypatch: pytest.MonkeyPatch,
                                                         failing: str) -> None:
    """The events are in the log (fsync'd) when a snapshot write fails: the change is recorded, the error says
    so in one line, and the next load brings the snapshots up to date."""
    from workbench.api import Bench, replay, validate_workbench
    from workbench.errors import WorkbenchError
    from workbench.store import snapshots
    from workbench.store.workbench import Workbench

    class Full(snapshots.Staged):  # the snapshots' temp files are written (staged) before either is renamed in
        def __init__(self, path: Path, data: bytes) -> None:
            if path.name == failing:
                raise _enospc(path.parent / f".tmp-x1y2-{failing}")
            super().__init__(path, data)

    monkeypatch.setattr(snapshots, "Staged", Full)
    with pytest.raises(WorkbenchError) as caught:
        Bench.open(acked).add_task("recorded despite the full disk")
    monkeypatch.undo()
    message = str(caught.value)
    assert caught.value.exit_code == 1 and "\n" not in message
    assert f"recorded in events.jsonl, but writing {failing} failed: No space left on device" in message
    _no_temp_files(acked)
    assert validate_workbench(Workbench(acked)) == []
    titles = [t["title"] for t in Bench.open(acked).list_tasks()]
    assert titles == ["first", "recorded despite the full disk"]
    Bench.open(acked).note("the next write catches up")
    assert replay(Workbench(acked)).mismatches == []


def test_oserror_is_one_clear_line_not_an_internal_error(acked: Path) -> None:
    from workbench.cli.main import os_problem

    line = os_problem(_enospc(acked / ".workbench" / ".tmp-abc_12-state.md"))
    assert line.startswith("cannot write ") and line.endswith("(afterwards `wb doctor` checks the workbench)")
    assert ".workbench/state.md: No space left on device" in line and ".tmp-" not in line
    assert os_problem(_enospc()).startswith("cannot write the workbench: No space left on device")


# -- disk full, for real: a small tmpfs -------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(path: Path) -> int:
    """Fill the file system holding `path` to the last byte; returns the bytes written."""
    written = 0
    with open(path, "wb", buffering=0) as fh:
        for size in (1 << 16, 1 << 12, 1 << 9, 1 << 6, 1):
            while True:
                try:
                    fh.write(b"\0" * size)
                    written += size
                except OSError as err:
                    assert err.errno == errno.ENOSPC
                    break
    return written


def test_real_full_disk(small_disk: Path) -> None:
    """Fill a 3 MB tmpfs to the last byte, then free 32 kB before each `wb note` (a SQLite write's WAL frames need
    about that; with 16 kB only every third write fit there): every run ends in exit 0
    or one line (exit 1); a change refused before its log append is absent, one whose snapshots could not be
    written says it is recorded — and is; the workbench loads after every run and validates at the end."""
    repo = make_repo(small_disk / "repo")
    init_workbench(repo, config_yaml())
    filler = small_disk / "filler"
    size = _fill(filler)
    present, absent, refusals = [], [], 0
    for i in range(25):
        text = f"note {i} " + "x" * 1500
        proc = wb(repo, "note", text)
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        if proc.returncode == 0:
            present.append(text)  # acknowledged (perhaps with a "written but not committed" warning)
        else:
            line = one_line(proc, 1)
            assert "No space left on device" in line, line
            refusals += 1
            (present if "recorded in events.jsonl" in line else absent).append(text)
        loaded = wb(repo, "status")  # the workbench loads after every run, the disk still (nearly) full
        assert loaded.returncode == 0, loaded.stderr
        size = max(0, size - 32768)
        os.truncate(filler, size)
    assert refusals, "the disk never filled up"
    assert len(present) > refusals / 2, "too few writes fit: the test frees too little space"
    filler.unlink()
    wb_ok(repo, "doctor", "--fix")
    wb_ok(repo, "validate")
    wb_ok(repo, "replay", "--verify")
    notes = _notes(repo)
    assert [t for t in present if t not in notes] == []  # every acknowledged mutation is there
    assert [t for t in absent if t in notes] == []
    _no_temp_files(repo)
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""


# -- a path with spaces and non-ASCII characters ----------------------------------------------------------------

def test_repository_on_a_path_with_spaces_and_accents(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mon dépôt à moi" / "le projet")
    scripts = repo / "outils spéciaux"
    scripts.mkdir()
    (scripts / "dis bonjour.py").write_text("import sys; print('bonjour', *sys.argv[1:])", encoding="utf-8")
    init_workbench(repo, config_yaml(tools={"hello": {
        "argv": [PY, "outils spéciaux/dis bonjour.py", "{who}"], "mode": "safe_readonly", "cwd": "."}}))
    # the workbench before the task (a session commits per step): HEAD on files, the log's last point on SQLite
    before = run_git(repo, "rev-parse", "HEAD").strip() if stored.FILES else f"@{len(stored.events(repo))}"
    wb_ok(repo, "task", "add", "Écrire la doc — «vite»")
    wb_ok(repo, "note", "Décision : garder l'API")
    name = plan(repo, [{"description": "saluer", "tool": "hello", "args": {"who": "Zoë et Jürgen"}}],
                name="le plan.json")
    wb_ok(repo, "run", "dire bonjour", "--plan", name)
    results = [json.loads(line)["payload"]["result"]["stdout"]
               for line in stored.event_bytes(repo).decode().splitlines()
               if '"tool.result"' in line]
    assert results == ["bonjour Zoë et Jürgen\n"]
    diff = wb_ok(repo, "diff", before, "HEAD" if stored.FILES else "now").stdout
    assert "Écrire la doc" in diff
    wb_ok(repo, "diff")
    wb_ok(repo, "validate")
    wb_ok(repo, "replay", "--verify")
    elsewhere = subprocess.run([PY, "-m", "workbench.cli.main", "-C", str(repo), "status"], capture_output=True,
                               text=True, cwd=tmp_path)
    assert elsewhere.returncode == 0, elsewhere.stderr
    log = run_git(repo, "log", "-p", "-3")  # git runs wb's textconv driver on these paths
    assert "Traceback" not in log
    assert sys.getfilesystemencoding() == "utf-8"
