"""Where the repository is and what state it is in, read from the git directories without a subprocess where
it can be: the work tree's top (`find_worktree`), this worktree's git directory and the common one (objects and
branches), wb's keep directory, an operation in progress (a merge, a rebase, a commit's hook), the user's
index.lock and the wait for it, and whether a branch is checked out in any worktree (git.ref must not be).

`RepoDirs` is the lowest layer of git/repo.py's GitRepo (then refs, objects, userpolicy, sharedrefs): each layer
is a class built on the one below, in a module of its own."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from workbench.errors import NotFound, Refused
from workbench.model.layout import WB_DIR

# the longest one wb command waits, in all, while git's index.lock is held (a commit, checkout or stash of the
# user's; or a lock a killed git left behind): then it goes on and says in one line what to do (docs/git.md)
INDEX_LOCK_WAIT_S = 10.0


def find_worktree(start: Path) -> Path:
    """The git work-tree root containing `start` (walks up like git; no subprocess). With GIT_DIR in the
    environment (vcsh, a dotfiles shell, a hook): GIT_WORK_TREE is honoured (a bare repository's layout), and a
    GIT_DIR that is not the git directory of the repository `start` is in is refused — wb would otherwise
    commit this workbench into that other repository."""
    start = start.resolve()
    found = next((c for c in (start, *start.parents) if (c / ".git").exists()), None)
    env_dir = os.environ.get("GIT_DIR")
    if env_dir:
        git_dir = (Path.cwd() / env_dir).resolve()
        env_tree = os.environ.get("GIT_WORK_TREE")
        if env_tree:
            tree = (Path.cwd() / env_tree).resolve()
            if start != tree and tree not in start.parents:
                raise Refused(f"GIT_WORK_TREE is {tree}, and {start} is outside it: run wb inside that work tree, "
                              "or unset GIT_DIR and GIT_WORK_TREE")
            found = tree
        elif found is None or _git_dir_of(found) != git_dir:
            where = f"the repository at {found}" if found is not None else "no repository"
            raise Refused(f"GIT_DIR is set to {git_dir}, but {start} is in {where}: unset GIT_DIR (e.g. "
                          "`env -u GIT_DIR wb ...`), or set GIT_WORK_TREE too")
        os.environ["GIT_DIR"] = str(git_dir)  # wb runs git in the work tree's top: a relative one would move
        os.environ["GIT_WORK_TREE"] = str(found)
        return found
    if found is None:
        raise NotFound(f"not inside a git repository: {start} (run `git init` first, or pass -C PATH)")
    return found


def _git_dir_of(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_dir():
        return dot.resolve()
    try:
        text = dot.read_text(errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return (root / text[len("gitdir:"):].strip()).resolve()


HOOK_MARK = "WB_STATE_COMMIT_HOOK"  # set in the environment of the hooks wb runs for its own commits (git.run_hooks)


def in_commit_hook() -> bool:
    """Whether this process runs inside a commit's hook (pre-commit, commit-msg, …) of a `git commit` — the
    user's, or wb's own with `git.run_hooks`. git gives its commit hooks GIT_INDEX_FILE (the index it is
    committing, `.git/index.lock` for `commit -a`) along with GIT_PREFIX; the `git commit` around the hook
    then moves HEAD from the commit it read, so a wb commit made here would make it fail ("cannot lock ref
    'HEAD'"), and an index update would land in the commit being made. wb records the mutation in the pending
    journal instead, as during a merge, and the first wb command after the commit writes and commits it."""
    if os.environ.get(HOOK_MARK):
        return True
    index = os.environ.get("GIT_INDEX_FILE")
    return bool(index) and ("GIT_PREFIX" in os.environ or str(index).endswith(".lock"))


def _own_index(index: str, worktree: Path, git_dir: Path) -> bool:
    """Whether GIT_INDEX_FILE (relative: to the work tree's top, where git runs its hooks) is in this
    repository's git directory — not another repository's, whose hook wb was started from."""
    path = Path(index) if os.path.isabs(index) else worktree / index
    try:
        return path.resolve().parent == git_dir.resolve() or git_dir.resolve() in path.resolve().parents
    except OSError:
        return False


class RepoDirs:
    """A repository's directories and what is going on in it (the first layer of GitRepo)."""

    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree
        self._git_dir: Path | None = None
        self._common_dir: Path | None = None
        self._keep_dir: Path | None = None
        self._algo = "sha1"
        self._lock_waited: dict[tuple[int, int], float] = {}  # an index.lock -> seconds this process waited for it

    @property
    def git_dir(self) -> Path:
        """This worktree's own git directory: HEAD, the index, MERGE_HEAD and the other per-worktree files."""
        if self._git_dir is None:
            self._discover()
        assert self._git_dir is not None
        return self._git_dir

    @property
    def keep_dir(self) -> Path:
        """Where wb keeps what must outlive this worktree's git directory (the pending journal, a SQLite
        database): `git_dir`/wb, or for a linked worktree `<common dir>/wb/worktrees/<key>/` (git/keep.py); the
        store moves what an older wb left in the old place (store/kept.prepare)."""
        if self._keep_dir is None:
            from workbench.git.keep import keep_dir_of

            self._keep_dir = Path(keep_dir_of(self.worktree, self.git_dir))
        return self._keep_dir

    @property
    def common_dir(self) -> Path:
        """The git directory every worktree of the repository shares: objects and branches live here. The
        same as `git_dir` in a plain repository; `.git` of the main worktree for a linked one."""
        if self._common_dir is None:
            self._discover()
        assert self._common_dir is not None
        return self._common_dir

    @property
    def state_writing_marker(self) -> Path:
        """Present while a sync writes a state commit into the work tree (its snapshots may disagree with its
        log until it is done): loads refuse, and the next `wb sync` finishes the write (git/sharedrefs.py). Here,
        not there: a read looks for it without building the layers that write."""
        return self.git_dir / "wb" / "sync-writing"

    def _discover(self) -> None:
        dot_git = self.worktree / ".git"
        if dot_git.is_dir() and not os.environ.get("GIT_DIR") and not os.environ.get("GIT_COMMON_DIR"):
            # the common case, read without a subprocess: a plain repository
            config = (dot_git / "config").read_text(errors="replace") if (dot_git / "config").exists() else ""
            self._git_dir = self._common_dir = dot_git
            # (the pattern compiled only for a config that names an object format at all)
            sha256 = "objectformat" in config.lower() and re.search(r"objectformat\s*=\s*sha256", config, re.I)
            self._algo = "sha256" if sha256 else "sha1"
            return
        # a linked worktree, a submodule, GIT_DIR: let git say
        from workbench.git.plumbing import run_git  # here: a plain repository's reader runs no git

        out = run_git(self.worktree, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir",
                      "--show-object-format").stdout
        lines = out.decode().splitlines()
        self._git_dir = Path(lines[0])
        self._common_dir = Path(lines[1]) if len(lines) > 1 else self._git_dir
        self._algo = lines[2].strip() if len(lines) > 2 else "sha1"

    def workbench_left_out(self) -> str | None:
        """Why HEAD has a `.workbench/` the work tree lacks (a sparse checkout that leaves it out, or files
        deleted by hand) and what brings it back; None when HEAD has none. Asked only when the work tree has no
        workbench: `wb init` must never commit an empty one over the branch's real one."""
        from workbench.git.plumbing import run_git

        proc = run_git(self.worktree, "ls-tree", "--name-only", "HEAD", f"{WB_DIR}/config.yaml", check=False)
        if proc.returncode != 0 or not proc.stdout.strip():
            return self._state_ref_left_out()
        sparse = run_git(self.worktree, "config", "--bool", "core.sparseCheckout", check=False).stdout.strip()
        if sparse == b"true":
            return (f"HEAD has a {WB_DIR}/ that the sparse checkout leaves out of the work tree: run "
                    f"`git sparse-checkout add {WB_DIR}` to bring it in")
        return (f"HEAD has a {WB_DIR}/ that is missing from the work tree: restore it with "
                f"`git checkout HEAD -- {WB_DIR}`")

    def _state_ref_left_out(self) -> str | None:
        """The state ref this worktree's `.workbench/` was last checked out from (`wb init --ref`, docs/sync.md),
        when that ref still exists: git ignores the checkout, so a `git clean -x` removes it, and nothing of the
        state is lost. None when this worktree recorded no state ref."""
        import json

        from workbench.git.plumbing import run_git

        try:
            bases = json.loads((self.git_dir / "wb" / "state-base.json").read_text())
        except (OSError, ValueError):
            return None
        for ref in bases if isinstance(bases, dict) else []:
            if isinstance(ref, str) and ref.startswith("refs/heads/") and run_git(
                    self.worktree, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False).returncode == 0:
                return (f"its state is kept on {ref}, of which {WB_DIR}/ was a checkout git ignores (a `git clean -x` "
                        f"removes it): nothing recorded is lost; run `wb init` to check it out again")
        return None

    def operation_in_progress(self) -> str | None:
        if in_commit_hook():
            index = os.environ.get("GIT_INDEX_FILE")
            if os.environ.get(HOOK_MARK) or (index and _own_index(index, self.worktree, self.git_dir)):
                return "a git commit (wb runs in its hook)"
            # another repository's commit hook: its index is not this repository's, and wb's own git must not
            # write into it
            os.environ.pop("GIT_INDEX_FILE", None)
        g = self.git_dir
        for name, what in (("MERGE_HEAD", "a merge"), ("rebase-merge", "a rebase"), ("rebase-apply", "a rebase"),
                           ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert"),
                           ("BISECT_LOG", "a bisect")):
            if (g / name).exists():
                return what
        return None

    def wait_for_users_git(self, seconds: float = INDEX_LOCK_WAIT_S) -> bool:
        """Wait while a git command of the user's holds the index lock (a commit, stash, merge or checkout in
        progress), so wb neither moves their branch nor writes their work tree under it. False when it is
        still held after `seconds` (wb then goes on: a lock git left behind must not stop wb for ever).

        One lock file is waited for INDEX_LOCK_WAIT_S at most in all by this process, however many steps of a
        write ask (the load, the append, the commit and the index update each waited 10 s on their own: 35 s
        a write); a lock that outlasted that is not waited for again, and the write says what to do."""
        lock = self.index_lock
        deadline = time.monotonic() + seconds
        while True:
            try:
                st = os.stat(lock)
            except OSError:
                return True
            from workbench.git import indexfile  # here: only a held lock needs it

            if indexfile.recover(self.git_dir):  # a wb killed while it wrote the index left it: gone now
                continue
            held = (st.st_ino, st.st_ctime_ns)  # this lock file: an inode alone is soon reused by the next one
            spent = self._lock_waited.get(held, 0.0)
            now = time.monotonic()
            if now >= deadline or spent >= INDEX_LOCK_WAIT_S:
                return False
            pause = min(0.02, deadline - now, INDEX_LOCK_WAIT_S - spent)
            time.sleep(pause)
            self._lock_waited[held] = spent + pause

    @property
    def index_lock(self) -> Path:
        return self.git_dir / "index.lock"

    def index_lock_advice(self, waited: bool = True) -> str:
        """What to do about git's index.lock — one that outlasted wb's wait (`waited`), or one doctor found —
        in the words of one line."""
        try:
            where = os.path.relpath(self.index_lock, Path.cwd())
            age = f", {max(0, int(time.time() - self.index_lock.stat().st_mtime))}s old"
        except (ValueError, OSError):
            where, age = str(self.index_lock), ""
        held = f"held git's index for over {INDEX_LOCK_WAIT_S:g}s" if waited else f"locks git's index{age}"
        return (f"{where} {held} (a git command still running, or one that was killed): if no git command is "
                f"running, `rm {where}`")

    # -- git.ref is never a branch someone works on --------------------------------------------
    def checked_out_at(self, ref: str) -> Path | None:
        """The work tree where branch `ref` is checked out — its HEAD, or the branch a rebase in it is on — in
        any worktree of this repository; None when it is checked out nowhere. Read from the git directories
        (no subprocess: every command with git.ref set asks)."""
        full = ref if ref.startswith("refs/") else "refs/heads/" + ref
        common = self.common_dir
        config = common / "config"
        bare = config.exists() and re.search(r"(?m)^\s*bare\s*=\s*true\s*$", config.read_text(errors="replace"))
        dirs = [] if bare else [common]
        if (common / "worktrees").is_dir():
            dirs += sorted(d for d in (common / "worktrees").iterdir() if d.is_dir())
        for git_dir in dirs:
            for name in ("HEAD", "rebase-merge/head-name", "rebase-apply/head-name"):
                try:
                    text = (git_dir / name).read_text(errors="replace").strip()
                except OSError:
                    continue
                if text.removeprefix("ref:").strip() == full:
                    return self._worktree_of(git_dir)
        return None

    def _worktree_of(self, git_dir: Path) -> Path:
        if git_dir == self.git_dir:
            return self.worktree
        try:  # a linked worktree's git dir names the `.git` file at its top
            return Path((git_dir / "gitdir").read_text(errors="replace").strip()).parent
        except OSError:
            return git_dir.parent if git_dir.name == ".git" else git_dir

    def refuse_checked_out(self, ref: str) -> None:
        """Refuse `ref` as the state branch (config git.ref, `wb init --ref`) when it is checked out anywhere: a
        state commit holds only `.workbench/`, so on a branch someone works on it would drop every project file
        from its next commit — and a cloned config.yaml can name any branch."""
        where = self.checked_out_at(ref)
        if where is None:
            return
        branch = ref.removeprefix("refs/heads/")
        raise Refused(f"git.ref names {branch}, which is checked out in {where}: wb records state only on a branch "
                      "of its own (its commits hold nothing but .workbench/); set git.ref in .workbench/config.yaml "
                      "(or `wb init --ref`) to another branch, e.g. wb-state, or to null to commit on yours")
