"""Where everything lives in `.workbench/`, and the checks made of it before wb reads or writes there.

A clone can carry a symbolic link in place of a workbench file, and a workbench can be read-only: both are
refused here, before anything is read through the link or half-written.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.errors import Refused

WB_DIR = ".workbench"

GITIGNORE = """\
# wb: the lock is per machine; temp files are in-flight atomic writes. (.cache/: where wb kept its caches
# before they moved into the git directory; wb never reads one here.)
.lock
.cache/
.tmp-*
"""

GITIGNORE_REF = """\
# wb: this workbench is recorded on the branch named by git.ref in config.yaml, never on yours:
# nothing here is tracked on the checked-out branch, so `git status` stays clean.
*
"""

# The files every commit of a files-backend workbench carries, each as the commit gate checked it: the user's git
# may rewrite one while wb commits (a checkout or a stash unlinks a file, then writes it again; wb does not hold
# git's locks), and a commit listing .workbench/ in that moment would record it deleted or older than the rest.
COMMITTED_FILES = ("config.yaml", "state.md", "board.json", "events.jsonl", "calls.jsonl")

# Entries of .workbench/ that wb reads or writes: none may be a symbolic link (a clone can carry one).
LINK_CHECKED = ("config.yaml", "state.md", "board.json", "events.jsonl", "calls.jsonl", "artifacts", "archive",
                ".cache", ".lock", ".gitignore", ".gitattributes", ".migrate.json", "log")


def git_dir_of(root: Path) -> Path:
    """The work tree's own git directory, found as git finds it from the top of the work tree and without a
    subprocess: `.git` itself, or the directory a `.git` file names (a linked worktree, a submodule). Neither
    is ever in a clone, so nothing committed can point it elsewhere."""
    dot_git = root / ".git"
    try:
        if dot_git.is_file() and not dot_git.is_symlink():
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                named = Path(text[len("gitdir:"):].strip())
                return named if named.is_absolute() else root / named
    except OSError:
        pass
    if not dot_git.exists():  # no repository: a workbench kept in SQLite without git keeps wb's own files here
        local = root / WB_DIR / ".local"  # (store/sqlitedb.NoGit; `wb init --no-git --backend sqlite`)
        if local.is_dir():
            return local
    return dot_git


class Paths:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.wb = root / WB_DIR
        self.state = self.wb / "state.md"
        self.board = self.wb / "board.json"
        self.events = self.wb / "events.jsonl"  # the tail segment of the log
        self.log = self.wb / "log"  # its sealed segments, NNNNNN.jsonl (workbench/model/segments.py)
        self.calls = self.wb / "calls.jsonl"
        self.config = self.wb / "config.yaml"
        self.artifacts = self.wb / "artifacts"
        self.lock = self.wb / ".lock"
        # where wb kept its caches before they moved into the git directory: never read (a clone or an agent
        # can put anything there); `wb doctor` reports one and `--fix` removes it
        self.tree_cache = self.wb / ".cache"
        self._git_dir: Path | None = None
        self._cache: Path | None = None

    @property
    def git_dir(self) -> Path:
        """This work tree's own git directory (`.git`, or `.git/worktrees/<name>` for a linked worktree)."""
        if self._git_dir is None:
            self._git_dir = git_dir_of(self.root)
        return self._git_dir

    @property
    def cache(self) -> Path:
        """wb's caches of this work tree's files: in its own git directory, which no commit, clone or merge
        writes, so what is there was written by wb (`.workbench/.cache/` is never read). Made once: a write
        asks for it some thirty times."""
        if self._cache is None:
            self._cache = self.git_dir / "wb" / "cache"
        return self._cache

    @property
    def state_cache(self) -> Path:
        return self.cache / "state.json"

    @property
    def board_cache(self) -> Path:
        return self.cache / "board.json"


def check_writable(p: Paths) -> None:
    """Raise PermissionError when the workbench cannot take a write (checked before anything is written)."""
    import errno

    for path in (p.wb, p.events, p.calls):
        if path.exists() and not os.access(path, os.W_OK | (os.X_OK if path == p.wb else 0)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))


def check_no_links(p: Paths) -> None:
    """Refuse a `.workbench` (or a file wb writes in it) that is a symbolic link: wb would write through it to
    anywhere, and commit what it points at."""
    for path in (p.wb, *(p.wb / name for name in LINK_CHECKED)):
        if path.is_symlink():
            raise Refused(f"{path.relative_to(p.root).as_posix()} is a symbolic link: wb reads and writes only "
                          "inside .workbench/ (replace the link with the real file or directory)")
