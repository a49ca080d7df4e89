"""The user's files around the hooks wb runs (`git.run_hooks: true`, issue 29): wb never changes a user's file.

A hook run for wb's state commit sees the whole work tree, and a formatter over every file (not only the ones
git gives it) rewrites the user's staged, unstaged and untracked work. Before the hooks run, `record` notes
what the user has: the user's index (its bytes), every tracked file's lstat, and the bytes and mode of every
file `git status` lists (staged, unstaged, untracked and not ignored; `.workbench/` is wb's, and ignored files
are not looked at). After each hook, `restore` finds what changed (a stat that moved, then the bytes compared)
and puts the user's bytes and mode back exactly: a tracked file git called clean from the user's index blob,
the others from the bytes kept; a file the hook deleted comes back, one it made where the user had none goes.
The caller refuses the commit and names the hook and the files (tests/git_scenarios/test_hooks_keep_user_files.py).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workbench.model.layout import WB_DIR

if TYPE_CHECKING:
    from collections.abc import Callable


class Checkout(Protocol):
    """What this module reads of git/repo's GitRepo, named here so it imports nothing of repo's (repo calls it)."""

    @property
    def worktree(self) -> Path: ...
    @property
    def git_dir(self) -> Path: ...

Stat = tuple[int, int, int, int, int] | None  # (mode, size, mtime_ns, ctime_ns, inode); None: no file there
Kept = tuple[bytes, int] | None  # (bytes, or a symbolic link's target; st_mode); None: no file there


def _stat(path: Path) -> Stat:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _read(path: Path) -> Kept:
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return os.fsencode(os.readlink(path)), st.st_mode
        if not stat.S_ISREG(st.st_mode):
            return None
        return path.read_bytes(), st.st_mode
    except OSError:
        return None


def _same(a: Kept, b: Kept) -> bool:
    if a is None or b is None:
        return a is b
    return a[0] == b[0] and stat.S_IFMT(a[1]) == stat.S_IFMT(b[1]) and stat.S_IMODE(a[1]) == stat.S_IMODE(b[1])


def _put(path: Path, kept: Kept) -> None:
    """Put `kept` at `path` in one rename (or remove what is there when the user had nothing)."""
    if kept is None:
        if path.is_dir() and not path.is_symlink():
            return  # a directory the hook made over a missing file: not ours to remove whole
        path.unlink(missing_ok=True)
        return
    body, mode = kept
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.wb-restore-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    if stat.S_ISLNK(mode):
        os.symlink(os.fsdecode(body), tmp)
    else:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IMODE(mode))
        try:
            os.write(fd, body)
            os.fchmod(fd, stat.S_IMODE(mode))  # exactly, whatever the umask
        finally:
            os.close(fd)
    os.replace(tmp, path)


class UserFiles:
    def __init__(self, repo: Checkout, cat: Callable[..., Any]) -> None:
        self.repo = repo
        self.cat = cat  # git/repo.cat_batch, passed in: this module imports nothing of repo's (no circle)
        self.index_path = Path(os.environ.get("GIT_INDEX_FILE") or repo.git_dir / "index")
        if not self.index_path.is_absolute():
            self.index_path = repo.worktree / self.index_path
        self.index: bytes | None = None
        self.blobs: dict[str, str] = {}  # tracked path → its blob in the user's index
        self.stats: dict[str, Stat] = {}
        self.kept: dict[str, Kept] = {}  # what `git status` lists: its bytes now

    @classmethod
    def record(cls, repo: Checkout, run_git: Callable[..., Any], cat: Callable[..., Any]) -> UserFiles:
        """What the user has now; `run_git` and `cat` are git/repo's (passed in by the one caller there)."""
        self = cls(repo, cat)
        listed = run_git(repo.worktree, "ls-files", "-s", "-z").stdout.split(b"\0")
        for entry in listed:
            head, _, name = entry.partition(b"\t")
            fields = head.split()
            if len(fields) < 3 or fields[0] == b"160000":  # a submodule is its own repository
                continue
            path = os.fsdecode(name)
            if not path.startswith(WB_DIR + "/"):
                self.blobs.setdefault(path, fields[1].decode())
        status = run_git(repo.worktree, "--no-optional-locks", "status", "--porcelain=v1", "-z",
                         "--untracked-files=all", "--no-renames", "--ignore-submodules").stdout.split(b"\0")
        for entry in status:
            if len(entry) < 4:
                continue
            path = os.fsdecode(entry[3:])
            if not path.startswith(WB_DIR + "/"):
                self.kept[path] = _read(repo.worktree / path)
        for path in (*self.blobs, *self.kept):
            self.stats[path] = _stat(repo.worktree / path)
        try:
            self.index = self.index_path.read_bytes()
        except OSError:
            self.index = None
        return self

    def restore(self) -> list[str]:
        """Put back every user's file a hook changed; the paths changed (the index as `the index`)."""
        root = self.repo.worktree
        moved = [p for p, before in self.stats.items() if _stat(root / p) != before]
        clean = [p for p in moved if p not in self.kept]
        bodies = self.cat(root, [self.blobs[p] for p in clean])
        was: dict[str, Kept] = {}
        for path, found in zip(clean, bodies, strict=True):
            before = self.stats[path]
            was[path] = (found[1], before[0]) if found is not None and before is not None else None
        changed = []
        for path in moved:
            original = self.kept[path] if path in self.kept else was[path]
            if path not in self.kept and original is None:
                continue  # a tracked file that was missing, or whose blob is gone: nothing to compare with
            if not _same(_read(root / path), original):
                _put(root / path, original)
                changed.append(path)
        if self.index is not None:
            try:
                now = self.index_path.read_bytes()
            except OSError:
                now = None
            if now != self.index:
                _put(self.index_path, (self.index, 0o100644))
                changed.append("the index")
        return sorted(changed)
