"""Refs: reading them (from the loose ref file when there is one: no subprocess), comparing commits, and moving
a branch with RefMover — one long-lived `git update-ref --stdin`, a compare-and-swap per move, so a concurrent
`git commit` of the user's is never overwritten. `RepoRefs` is GitRepo's second layer (git/discovery.py below)."""

from __future__ import annotations

import os
import re

from workbench.git.discovery import RepoDirs
from workbench.git.plumbing import run_git

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    import weakref
    from pathlib import Path

    from workbench.git.spawn import Git


class RefMover:
    """Moves branches with one long-lived `git update-ref --stdin`, one transaction per move.

    Starting git costs ~3 ms, which a process making many commits (the Python API, the harness) would pay
    twice per commit; this pays it once. Git still does all the locking and the compare-and-swap: `prepare`
    locks the ref and checks its old value, `commit` renames the lock into place. Between moves the process
    holds no lock. When a move is refused git exits, and the next move starts a new process. The reflog
    message is fixed ("wb") because `-m` is per process; the commit carries the subject.
    """

    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree
        self._proc: Git | None = None
        self._pid = 0

    def move(self, ref: str, new: str, old: str) -> str | None:
        """Point `ref` at `new` if it is at `old` (all zeros: if it does not exist). None when moved, else
        git's reason."""
        proc = self._process()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(f"start\nupdate {ref} {new} {old}\nprepare\ncommit\n".encode())
            proc.stdin.flush()
            replies = [proc.stdout.readline() for _ in range(3)]
        except (BrokenPipeError, OSError):
            replies = []
        if replies == [b"start: ok\n", b"prepare: ok\n", b"commit: ok\n"]:
            return None
        return self._died()

    def start(self) -> None:
        """Start git now, when a move will follow some work: git starts up while that work is done."""
        self._process()

    def _process(self) -> Git:
        from workbench.git.spawn import PIPE, Git  # not subprocess: a commit imports none of it (git/spawn.py)

        if self._proc is None or self._pid != os.getpid() or self._proc.poll() is not None:
            _close_at_exit(self)
            self._proc = Git(self.worktree, ["update-ref", "-m", "wb", "--stdin"], stdin=PIPE, stdout=PIPE,
                             stderr=PIPE)
            self._pid = os.getpid()  # a forked child must not share this process's pipes
        return self._proc

    def _died(self) -> str:
        code, why = self._end()
        return why or f"git update-ref exited {code}"

    def close(self) -> None:
        if self._pid != os.getpid():  # a forked child: the process is its parent's to end
            self._proc = None
            return
        self._end()

    def _end(self) -> tuple[int | None, str]:
        """Close git's stdin (it ends on that), reap it, and return its exit status and what it said."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None, ""
        try:
            _out, err = proc.communicate(timeout=5)
        except TimeoutError:
            proc.kill()
            _out, err = proc.communicate()
        return proc.returncode, err.decode(errors="replace").strip()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit; git ends by itself on its closed stdin
            pass


_LIVE: weakref.WeakSet[RefMover] | None = None  # made at the first move


def _close_at_exit(mover: RefMover) -> None:
    """End every helper git at interpreter exit, before the objects are torn down in no particular order
    (a Bench kept in a module global would otherwise leave Python warning about a running subprocess)."""
    global _LIVE
    if _LIVE is None:
        import atexit
        import weakref

        _LIVE = weakref.WeakSet()
        atexit.register(_close_all)
    _LIVE.add(mover)


def _close_all() -> None:
    for mover in list(_LIVE or ()):
        mover.close()


class RepoRefs(RepoDirs):
    """Reading refs and comparing commits (GitRepo's second layer)."""

    def symbolic_head(self) -> str | None:
        """The branch HEAD points at (born or unborn), or None when HEAD is detached."""
        text = (self.git_dir / "HEAD").read_text().strip()
        return text[5:] if text.startswith("ref: ") else None

    def read_ref(self, ref: str) -> str | None:
        proc = run_git(self.worktree, "rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
        return proc.stdout.decode().strip() or None

    def _read_ref_fast(self, ref: str) -> str | None:
        """The loose ref file, when there is one (what git itself reads first); None means 'ask git'."""
        # branches are shared by every worktree; HEAD and refs/bisect, refs/worktree are each worktree's own
        own = ref == "HEAD" or ref.startswith(("refs/bisect/", "refs/worktree/", "refs/rewritten/"))
        try:
            return ((self.git_dir if own else self.common_dir) / ref).read_text().strip() or None
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def ref_sha(self, ref: str) -> str | None:
        """`read_ref` of a branch or remote-tracking ref, from its loose file when it has one (no subprocess:
        a sync reads refs several times)."""
        fast = self._read_ref_fast(ref) if ref.startswith("refs/") else None
        if fast and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", fast):
            return fast
        return self.read_ref(ref)

    def update_ref(self, ref: str, new: str, old: str | None) -> bool:
        """Compare-and-swap: point `ref` at `new` only if it is at `old` (None: only if it does not exist)."""
        zero = "0" * len(new)
        proc = run_git(self.worktree, "update-ref", "-m", "wb sync", ref, new, old or zero, check=False)
        return proc.returncode == 0

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if ancestor == descendant:
            return True
        proc = run_git(self.worktree, "merge-base", "--is-ancestor", ancestor, descendant, check=False)
        return proc.returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of two commits, or None when their histories never met."""
        proc = run_git(self.worktree, "merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def count_apart(self, a: str, b: str) -> tuple[int, int]:
        """(commits in `a` not in `b`, commits in `b` not in `a`)."""
        out = run_git(self.worktree, "rev-list", "--left-right", "--count", f"{a}...{b}", check=False).stdout
        parts = out.decode().split()
        return (int(parts[0]), int(parts[1])) if len(parts) == 2 else (0, 0)

    def remotes(self) -> list[str]:
        return run_git(self.worktree, "remote", check=False).stdout.decode().split()

    def config_value(self, key: str) -> str | None:
        out = run_git(self.worktree, "config", "--get", key, check=False).stdout.decode().strip()
        return out or None
