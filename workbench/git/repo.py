"""Git recording: one commit per mutation containing only `.workbench/`, made without touching the user's
working tree and touching the user's index only at `.workbench/` entries.

Objects (blobs, trees, the commit) are written as loose objects in-process — the same bytes `git
hash-object -w` would write — and the branch moves with `git update-ref` (NEW OLD: a compare-and-swap,
see RefMover), so a concurrent `git commit` by the user is never overwritten. This module is the only one that runs git.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import faults
from workbench.errors import GitError, NotFound, Refused
from workbench.git.packs import DEFAULT_EVERY, Packer, PackIndex
from workbench.model.layout import WB_DIR

if TYPE_CHECKING:  # for annotations only: each function that runs git imports subprocess (wb status runs none)
    import subprocess
    import weakref

    from workbench.git.userfiles import UserFiles

# the longest one wb command waits, in all, while git's index.lock is held (a commit, checkout or stash of the
# user's; or a lock a killed git left behind): then it goes on and says in one line what to do (docs/git.md)
INDEX_LOCK_WAIT_S = 10.0
IGNORED_NAMES = {".lock", ".cache", ".migrate.json"}  # .migrate.json: wb migrate's intent, never committed


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


def run_git(cwd: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
    import subprocess  # here, not at the top: reading the workbench (wb status) runs no git

    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, env=full_env)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {msg[-1] if msg else 'exit ' + str(proc.returncode)}")
    return proc


def cat_batch(cwd: Path, specs: list[str]) -> list[tuple[str, bytes] | None]:
    """The one `git cat-file --batch`: several objects in one subprocess, [(sha, body) or None] in the order
    of `specs` (None: missing or ambiguous)."""
    if not specs:
        return []
    out = run_git(cwd, "cat-file", "--batch", stdin=("\n".join(specs) + "\n").encode()).stdout
    result: list[tuple[str, bytes] | None] = []
    pos = 0
    for _spec in specs:
        end = out.index(b"\n", pos)
        parts = out[pos:end].decode(errors="replace").split()
        pos = end + 1
        if len(parts) != 3 or parts[-1] in ("missing", "ambiguous"):  # a spec may hold spaces: "<spec> missing"
            result.append(None)
            continue
        sha, _kind, size = parts
        result.append((sha, out[pos:pos + int(size)]))
        pos += int(size) + 1
    return result


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
        self._proc: subprocess.Popen[bytes] | None = None
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

    def _process(self) -> subprocess.Popen[bytes]:
        import subprocess

        if self._proc is None or self._pid != os.getpid() or self._proc.poll() is not None:
            _close_at_exit(self)
            try:
                self._proc = subprocess.Popen(["git", "update-ref", "-m", "wb", "--stdin"], cwd=self.worktree,
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE)
            except FileNotFoundError:
                raise GitError("git is not installed or not on PATH") from None
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
        import subprocess

        try:
            _out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
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


class CommitOutcome:
    """What a commit did. A plain class, not a dataclass: `dataclasses` imports `inspect`, a fifth of what
    `wb status` would import, and every reader imports this module."""

    __slots__ = ("sha", "skipped", "warnings")

    def __init__(self, sha: str | None = None, skipped: str | None = None,
                 warnings: list[str] | None = None) -> None:
        self.sha = sha  # the new commit, None when nothing was committed
        self.skipped = skipped  # why no commit was made (said to the user as a warning)
        self.warnings = warnings if warnings is not None else []

    def __repr__(self) -> str:
        return f"CommitOutcome(sha={self.sha!r}, skipped={self.skipped!r}, warnings={self.warnings!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CommitOutcome):
            return NotImplemented
        return (self.sha, self.skipped, self.warnings) == (other.sha, other.skipped, other.warnings)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces


class BlobStatCache:
    """The blob id of each file under .workbench/ as last hashed, by path and stat, kept across processes in
    `<git dir>/wb/blob-stat.json`: a command's commit does not read and hash again the sealed log segments and
    archive chunks that have not changed (git's index does the same for `git add`).

    An entry is (size, mtime_ns, inode, ctime_ns) → sha. It is trusted only while the file's stat is that
    same quadruple — any write changes mtime and ctime, and ctime cannot be set back — and, like git's racy
    timestamps, an entry is recorded only for a file whose last change is RACY_NS old, so a write in the same
    clock tick as the hash cannot hide behind an unchanged stat. A cache that cannot be read is an empty one;
    one that cannot be written is not kept (the next commit hashes again): it is a cache, never the truth."""

    RACY_NS = 2_000_000_000
    VERSION = 1

    def __init__(self, path: Path, algo: str) -> None:
        self.path = path
        self.algo = algo
        self._entries: dict[str, tuple[tuple[int, int, int, int], str]] | None = None
        self._dirty = False

    def _load(self) -> dict[str, tuple[tuple[int, int, int, int], str]]:
        if self._entries is not None:
            return self._entries
        import json

        entries: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        try:
            data = json.loads(self.path.read_bytes())
            if isinstance(data, dict) and data.get("v") == self.VERSION and data.get("algo") == self.algo:
                for rel, row in dict(data.get("files") or {}).items():
                    if (isinstance(row, list) and len(row) == 5 and all(type(x) is int for x in row[:4])
                            and isinstance(row[4], str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", row[4])):
                        entries[str(rel)] = ((row[0], row[1], row[2], row[3]), row[4])
        except (OSError, ValueError, TypeError, AttributeError):
            entries = {}
        self._entries = entries
        return entries

    def get(self, rel: str, key: tuple[int, int, int, int]) -> str | None:
        seen = self._load().get(rel)
        return seen[1] if seen is not None and seen[0] == key else None

    def put(self, rel: str, key: tuple[int, int, int, int], sha: str, now_ns: int) -> None:
        """Record `sha` for the file at `rel` with stat `key` — unless it changed too recently to be sure."""
        entries = self._load()
        if max(key[1], key[3]) >= now_ns - self.RACY_NS:
            if entries.pop(rel, None) is not None:
                self._dirty = True
            return
        if entries.get(rel) != (key, sha):
            entries[rel] = (key, sha)
            self._dirty = True

    def keep_only(self, rels: set[str]) -> None:
        """Forget the files that are gone."""
        entries = self._load()
        for rel in [r for r in entries if r not in rels]:
            del entries[rel]
            self._dirty = True

    def save(self) -> None:
        if not self._dirty or self._entries is None:
            return
        import json

        body = json.dumps({"v": self.VERSION, "algo": self.algo,
                           "files": {rel: [*key, sha] for rel, (key, sha) in sorted(self._entries.items())}},
                          separators=(",", ":")).encode()
        tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        try:
            self.path.parent.mkdir(exist_ok=True)
            with open(tmp, "wb") as fh:
                fh.write(body)
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class GitRepo:
    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree
        self._git_dir: Path | None = None
        self._common_dir: Path | None = None
        self._keep_dir: Path | None = None
        self._algo = "sha1"
        self._ident_cache: tuple[str, str] | None = None
        # the last commit this process made: (ref, commit sha, root tree entries, .workbench files)
        self._last: tuple[str, str, dict[str, tuple[str, str]], dict[str, tuple[str, str]]] | None = None
        # the last parent read through git: (commit sha, root tree entries, .workbench files) — a commit's trees
        # never change, so a second read of the same commit (sealed_changes, then the commit) asks no git again
        self._parent_read: tuple[str, dict[str, tuple[str, str]], dict[str, tuple[str, str]]] | None = None
        self._refs = RefMover(worktree)
        # the blobs hashed before, by path under .workbench/ and stat, kept in the git directory across processes
        self._blob_cache: BlobStatCache | None = None
        # how state commits are made (config.yaml `git:`; set by the store when it reads the config)
        self.author: str | None = None  # "Name <email>": wb's commits are made as this identity
        self.sign: bool | None = None  # None: as commit.gpgsign says; False: never (and never a warning)
        self.run_hooks = False  # run the repository's pre-commit and commit-msg hooks for state commits
        self._gpgsign: bool | None = None
        self._packer: Packer | None = None  # wb's own packs (workbench/git/packs.py), made on first use
        self._pack_index: PackIndex | None = None
        self._written: list[tuple[str, str, str]] = []  # loose objects written since the last journal append
        self._lock_waited: dict[tuple[int, int], float] = {}  # an index.lock -> seconds this process waited for it
        self.pack_every: int | None = None  # config.yaml git.pack_every (None: the default; 0: never pack)

    def configure(self, git_config: dict[str, Any]) -> None:
        """Take config.yaml's `git:` section: author, sign, run_hooks. A `ref` naming a branch checked out in
        any worktree is refused here, before any command writes (see `refuse_checked_out`)."""
        self.author = git_config.get("author") or None
        self.sign = git_config.get("sign")
        self.run_hooks = bool(git_config.get("run_hooks"))
        every = git_config.get("pack_every")
        self.pack_every = every if isinstance(every, int) and not isinstance(every, bool) else None
        if git_config.get("ref"):
            self.refuse_checked_out(str(git_config["ref"]))

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

    def close(self) -> None:
        """End the helper git process (it also ends by itself when this process exits)."""
        self._refs.close()

    # -- discovery ----------------------------------------------------------------------------
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

    def _discover(self) -> None:
        dot_git = self.worktree / ".git"
        if dot_git.is_dir() and not os.environ.get("GIT_DIR") and not os.environ.get("GIT_COMMON_DIR"):
            # the common case, read without a subprocess: a plain repository
            config = (dot_git / "config").read_text(errors="replace") if (dot_git / "config").exists() else ""
            self._git_dir = self._common_dir = dot_git
            self._algo = "sha256" if re.search(r"objectformat\s*=\s*sha256", config, re.I) else "sha1"
            return
        # a linked worktree, a submodule, GIT_DIR: let git say
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
        proc = run_git(self.worktree, "ls-tree", "--name-only", "HEAD", f"{WB_DIR}/config.yaml", check=False)
        if proc.returncode != 0 or not proc.stdout.strip():
            return None
        sparse = run_git(self.worktree, "config", "--bool", "core.sparseCheckout", check=False).stdout.strip()
        if sparse == b"true":
            return (f"HEAD has a {WB_DIR}/ that the sparse checkout leaves out of the work tree: run "
                    f"`git sparse-checkout add {WB_DIR}` to bring it in")
        return (f"HEAD has a {WB_DIR}/ that is missing from the work tree: restore it with "
                f"`git checkout HEAD -- {WB_DIR}`")

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

    def symbolic_head(self) -> str | None:
        """The branch HEAD points at (born or unborn), or None when HEAD is detached."""
        text = (self.git_dir / "HEAD").read_text().strip()
        return text[5:] if text.startswith("ref: ") else None

    def read_ref(self, ref: str) -> str | None:
        proc = run_git(self.worktree, "rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
        return proc.stdout.decode().strip() or None

    def committed_file(self, path: str, ref: str = "HEAD") -> bytes | None:
        """A file as committed at `ref` (None when absent, or when there is no commit yet)."""
        found = self._cat([f"{ref}:{path}"])[0]
        return found[1] if found else None

    def committed_wb_file(self, rel: str, ref: str) -> tuple[str, bytes] | None:
        """(blob id, bytes) of `.workbench/<rel>` in the commit `ref` names — the tree from this process's memory
        or the loose objects when it can (as the commit reads its parent), else one `git cat-file`. None when
        the commit has no such file, or there is no commit."""
        if ref == "HEAD":
            ref = self.symbolic_head() or "HEAD"
        parent, _root, files = self._parent_info(ref)
        entry = files.get(rel) if parent is not None else None
        if entry is None:
            return None
        body = self._loose(entry[1], "blob")
        if body is None:
            found = self._cat([entry[1]])[0]
            if found is None:
                return None
            body = found[1]
        return entry[1], body

    def known_blob(self, rel: str) -> str | None:
        """The blob id of `.workbench/<rel>` in the work tree as the blob cache knows it by its stat (None when
        it does not: read and hash the file to know)."""
        try:
            st = os.lstat(self.worktree / WB_DIR / rel)
        except OSError:
            return None
        return self.blob_cache().get(rel, (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))

    def _read_ref_fast(self, ref: str) -> str | None:
        """The loose ref file, when there is one (what git itself reads first); None means 'ask git'."""
        # branches are shared by every worktree; HEAD and refs/bisect, refs/worktree are each worktree's own
        own = ref == "HEAD" or ref.startswith(("refs/bisect/", "refs/worktree/", "refs/rewritten/"))
        try:
            return ((self.git_dir if own else self.common_dir) / ref).read_text().strip() or None
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    # -- objects ------------------------------------------------------------------------------
    @property
    def packer(self) -> Packer:
        """wb's own packs of the objects it writes (workbench/git/packs.py), in the common git dir."""
        if self._packer is None:
            self._packer = Packer(self.worktree, self.common_dir, 20 if self._algo == "sha1" else 32)
        self._packer.every = DEFAULT_EVERY if self.pack_every is None else self.pack_every
        return self._packer

    def _packed(self, sha: str) -> bool:
        """Whether a pack holds `sha` (git's packs or wb's, read from their .idx files, no git process). A found
        pack is freshened, as git freshens a packed object it reuses."""
        if self._pack_index is None:
            self._pack_index = PackIndex(self.common_dir / "objects", 20 if self._algo == "sha1" else 32)
        pack = self._pack_index.find(sha)
        if pack is None:
            return False
        try:
            os.utime(pack)
        except OSError:
            pass
        return True

    def _journal_written(self) -> None:
        """Journal the loose objects written since the last call, for wb's packs (before the ref moves: a
        kill after it leaves no object unjournalled)."""
        written, self._written = self._written, []
        if written:
            self.packer.record(written)

    def _write_object(self, kind: str, body: bytes, name: str = "") -> str:
        """Write one object loose (unless the store has it already); `name` is its path, for wb's packs to delta
        versions of the same file against each other."""
        import hashlib
        import zlib

        raw = f"{kind} {len(body)}\0".encode() + body
        sha = hashlib.new(self._algo, raw).hexdigest()
        path = self.common_dir / "objects" / sha[:2] / sha[2:]  # shared by every worktree
        if path.exists():
            # freshen it, as git does when it reuses an object: `git gc` prunes unreachable loose objects by
            # age, and this one is about to become reachable from a commit
            try:
                os.utime(path)
                return sha
            except OSError:
                pass  # not ours to touch (a shared repository): write a fresh copy of our own
        elif self._packed(sha):  # packed (by wb or by git's gc): present, never written loose again
            return sha
        path.parent.mkdir(exist_ok=True)
        tmp = path.parent / f"tmp_obj_wb_{os.getpid()}_{sha[:8]}"
        try:
            with open(tmp, "wb") as fh:
                faults.no_space("gitthree_enospc_object_write", str(tmp))
                fh.write(zlib.compress(raw, 1))
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except OSError:  # a full disk: no half-written temp object is left in .git/objects
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        self._written.append((sha, kind, name))
        return sha

    def _write_tree(self, entries: dict[str, tuple[str, str]], name: str = "") -> str:
        # git orders tree entries by name, comparing a directory's name as if it ended with '/'
        def key(name: str) -> bytes:
            return (name + "/" if entries[name][0] == "40000" else name).encode()

        body = b"".join(
            entries[n][0].encode() + b" " + n.encode() + b"\0" + bytes.fromhex(entries[n][1])
            for n in sorted(entries, key=key)
        )
        return self._write_object("tree", body, name)

    def _workbench_tree(self, files: dict[str, tuple[str, str]]) -> str:
        """Build nested trees from {relative path under .workbench: (mode, blob sha)}."""
        root: dict = {}
        for rel, entry in files.items():
            node = root
            parts = rel.split("/")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = entry

        def build(node: dict, path: str) -> str:
            entries = {}
            for name, value in node.items():
                entries[name] = ("40000", build(value, f"{path}/{name}")) if isinstance(value, dict) else value
            return self._write_tree(entries, path)

        return build(root, WB_DIR)

    def blob_cache(self) -> BlobStatCache:
        if self._blob_cache is None:
            self._blob_cache = BlobStatCache(self.git_dir / "wb" / "blob-stat.json", self._algo)
        return self._blob_cache

    def _snapshot_files(self, reachable: set[str] | None = None) -> dict[str, tuple[str, str]]:
        """The files under .workbench/ as (mode, blob sha), each blob written. A file whose stat the blob cache
        knows is not read again when its blob is in `reachable` (the parent commit's .workbench/ blobs: present
        in the object store already); without `reachable`, every file is read and its blob written."""
        import stat

        base = str(self.worktree / WB_DIR)
        files: dict[str, tuple[str, str]] = {}
        cache = self.blob_cache()
        reachable = reachable or set()
        now = time.time_ns()
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES and not d.startswith(".tmp-"))
            for name in filenames:
                if name in IGNORED_NAMES or name.startswith(".tmp-"):
                    continue
                full = os.path.join(dirpath, name)
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    continue  # never follow a link out of .workbench/
                rel = os.path.relpath(full, base).replace(os.sep, "/")
                mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"  # as git records it
                key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
                seen = cache.get(rel, key)
                if seen is not None and seen in reachable:
                    files[rel] = (mode, seen)
                    continue
                with open(full, "rb") as fh:
                    sha = self._write_object("blob", fh.read(), f"{WB_DIR}/{rel}")
                files[rel] = (mode, sha)
                cache.put(rel, key, sha, now)
        cache.keep_only(set(files))
        cache.save()
        return files

    def blob_id(self, data: bytes) -> str:
        """The id git gives a blob of `data` in this repository (nothing is written)."""
        import hashlib

        self.git_dir  # noqa: B018 - discovers the object format
        return hashlib.new(self._algo, f"blob {len(data)}\0".encode() + data).hexdigest()

    def sealed_changes(self, ref_name: str | None, dirs: tuple[str, ...]) -> list[tuple[str, str, str | None]]:
        """The files under `dirs` of .workbench/ (e.g. "log/") that the commit wb's next commit would be made on
        holds, and the work tree has changed or deleted since: (path under .workbench/, "modified" or "deleted",
        the blob id the work tree's file has now, None when deleted). Empty when wb would not commit now (an
        operation in progress, a detached HEAD, a git.ref moved past the work tree, no commit yet). Cheap: a
        stat per file, each hashed only when the blob cache does not know its stat."""
        import stat

        if ref_name is not None:
            ref = ref_name if ref_name.startswith("refs/") else "refs/heads/" + ref_name
            if self.state_ref_moved(ref):
                return []
        else:
            sym = None if self.operation_in_progress() else self.symbolic_head()
            if sym is None:
                return []
            ref = sym
        parent, _root, files = self._parent_info(ref)
        if parent is None:
            return []
        base = self.worktree / WB_DIR
        cache = self.blob_cache()
        now = time.time_ns()
        changed: list[tuple[str, str, str | None]] = []
        for rel, (_mode, sha) in sorted(files.items()):
            if not rel.startswith(dirs):
                continue
            full = base / rel
            try:
                st = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                changed.append((rel, "deleted", None))
                continue
            if not stat.S_ISREG(st.st_mode):  # a link or a directory in its place
                changed.append((rel, "modified", None))
                continue
            key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
            now_sha = cache.get(rel, key)
            if now_sha is None:
                try:
                    body = full.read_bytes()
                except OSError:
                    changed.append((rel, "modified", None))
                    continue
                now_sha = self.blob_id(body)
                cache.put(rel, key, now_sha, now)
            if now_sha != sha:
                changed.append((rel, "modified", now_sha))
        cache.save()
        return changed

    def _ident(self) -> tuple[str, str]:
        """(author, committer) as 'Name <email> <epoch> <tz>': config.yaml's git.author, else git's own identity
        as `git commit` would take it — strictly: no invented `root@host.(none)`, and user.useConfigOnly holds."""
        dated = os.environ.get("GIT_AUTHOR_DATE") or os.environ.get("GIT_COMMITTER_DATE")
        if self.author:
            self._ident_cache = (self.author, self.author)
        elif self._ident_cache is None or dated:
            idents = []
            for var in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
                proc = run_git(self.worktree, "var", var, check=False)
                if proc.returncode != 0:  # git var is strict for one variable: as `git commit` is
                    raise GitError("no identity")
                idents.append(proc.stdout.decode(errors="replace").strip())
            out, com = idents
            self._ident_cache = (out.rsplit(" ", 2)[0], com.rsplit(" ", 2)[0])
            if dated:
                return out, com
        now = int(time.time())
        offset = -time.altzone if time.localtime(now).tm_isdst > 0 else -time.timezone
        tz = f"{'+' if offset >= 0 else '-'}{abs(offset) // 3600:02d}{abs(offset) % 3600 // 60:02d}"
        return f"{self._ident_cache[0]} {now} {tz}", f"{self._ident_cache[1]} {now} {tz}"

    def _parent_info(self, ref: str) -> tuple[str | None, dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
        """(parent commit, its root tree entries, its .workbench files) — from this process's memory when the
        ref has not moved since our last commit, else from one `git cat-file --batch`."""
        if self._last and self._last[0] == ref and self._read_ref_fast(ref) == self._last[1]:
            return self._last[1], self._last[2], self._last[3]
        loose = self._parent_info_loose(ref)
        if loose is not None:
            return loose
        # the ref's commit as its loose ref file names it: read through git once per process (replace refs
        # could make git read other objects for the same id: then git says every time)
        named = None if (self.common_dir / "refs" / "replace").exists() else self._read_ref_fast(ref)
        if named is not None and self._parent_read is not None and self._parent_read[0] == named:
            return self._parent_read
        commit_obj = self._cat([f"{ref}^{{commit}}", f"{ref}^{{tree}}", f"{ref}:{WB_DIR}"])
        if commit_obj[0] is None:
            return None, {}, {}
        parent = commit_obj[0][0]
        root = self._parse_tree(commit_obj[1][1]) if commit_obj[1] else {}
        files: dict[str, tuple[str, str]] = {}
        pending = [("", commit_obj[2][1])] if commit_obj[2] else []
        while pending:  # walk subtrees of .workbench/ (artifacts/), one batch per level
            subtrees: list[tuple[str, str]] = []
            for prefix, body in pending:
                for name, (mode, sha) in self._parse_tree(body).items():
                    if mode == "40000":
                        subtrees.append((prefix + name + "/", sha))
                    else:
                        files[prefix + name] = (mode, sha)
            bodies = self._cat([sha for _prefix, sha in subtrees]) if subtrees else []
            pending = [(prefix, obj[1]) for (prefix, _sha), obj in zip(subtrees, bodies, strict=True) if obj]
        if named == parent:
            self._parent_read = (parent, root, files)
        return parent, root, files

    def _parent_info_loose(self, ref: str) -> tuple[str, dict[str, tuple[str, str]],
                                                    dict[str, tuple[str, str]]] | None:
        """_parent_info read from the loose ref and loose objects, as wb (and `git commit`) write them: no git
        process for the usual commit. None when any of them is not loose (packed by gc, fetched),
        or replace refs could change what git would read: then git says."""
        if (self.common_dir / "refs" / "replace").exists():
            return None
        parent = self._read_ref_fast(ref)
        if parent is None or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", parent):
            return None
        commit = self._loose(parent, "commit")
        if commit is None or not commit.startswith(b"tree "):
            return None
        root_body = self._loose(commit[5:commit.find(b"\n")].decode(errors="replace"), "tree")
        if root_body is None:
            return None
        root = self._parse_tree(root_body)
        files: dict[str, tuple[str, str]] = {}
        pending = [("", root[WB_DIR][1])] if root.get(WB_DIR, ("", ""))[0] == "40000" else []
        while pending:  # .workbench/ and its subtrees (artifacts/)
            prefix, sha = pending.pop()
            body = self._loose(sha, "tree")
            if body is None:
                return None
            for name, (mode, sub) in self._parse_tree(body).items():
                if mode == "40000":
                    pending.append((prefix + name + "/", sub))
                else:
                    files[prefix + name] = (mode, sub)
        return parent, root, files

    def _loose(self, sha: str, kind: str) -> bytes | None:
        """The body of loose object `sha` if it is one of `kind`, else None (packed, absent, unreadable)."""
        import zlib

        if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
            return None
        try:
            raw = zlib.decompress((self.common_dir / "objects" / sha[:2] / sha[2:]).read_bytes())
        except (OSError, zlib.error):
            return None
        header, nul, body = raw.partition(b"\0")
        return body if nul and header == f"{kind} {len(body)}".encode() else None

    def _cat(self, specs: list[str]) -> list[tuple[str, bytes] | None]:
        return cat_batch(self.worktree, specs)

    def _exist(self, shas: list[str]) -> list[bool]:
        """Whether the object store has each object, in one `git cat-file --batch-check` (contents unread)."""
        if not shas:
            return []
        out = run_git(self.worktree, "cat-file", "--batch-check", stdin=("\n".join(shas) + "\n").encode()).stdout
        return [not line.endswith(b" missing") for line in out.splitlines()]

    def _parse_tree(self, body: bytes) -> dict[str, tuple[str, str]]:
        width = 20 if self._algo == "sha1" else 32
        entries: dict[str, tuple[str, str]] = {}
        pos = 0
        while pos < len(body):
            space = body.index(b" ", pos)
            nul = body.index(b"\0", space)
            mode = body[pos:space].decode()
            name = body[space + 1:nul].decode()
            entries[name] = (mode, body[nul + 1:nul + 1 + width].hex())
            pos = nul + 1 + width
        return entries

    # -- the commit -----------------------------------------------------------------------------
    def commit_workbench(self, message: str, ref_name: str | None = None) -> CommitOutcome:
        """Commit the current `.workbench/` files. `ref_name` (config git.ref) names a branch that holds only
        workbench state; otherwise the checked-out branch gets the commit."""
        state_only = ref_name is not None
        if state_only:
            assert ref_name is not None
            ref = ref_name if ref_name.startswith("refs/") else "refs/heads/" + ref_name
        else:
            busy = self.operation_in_progress()
            if busy:
                return CommitOutcome(skipped=f"{busy} is in progress; wrote .workbench/ but did not commit "
                                             "(the next wb command after it ends commits it)")
            sym = self.symbolic_head()
            if sym is None:
                return CommitOutcome(skipped="HEAD is detached; wrote .workbench/ but did not commit "
                                             "(check out a branch, or set git.ref in .workbench/config.yaml)")
            ref = sym
        if state_only and self.checked_out_at(ref) is not None:  # checked out since the config was read
            return CommitOutcome(skipped=f"{ref.removeprefix('refs/heads/')} (git.ref) is checked out now: wrote "
                                         ".workbench/ but did not commit (wb never commits state onto a branch "
                                         "someone works on; set git.ref to a branch of its own)")
        # the parent's blobs are in the object store: a file the blob cache knows is not hashed again
        known = self._parent_info(ref)
        files = self._snapshot_files({sha for _mode, sha in known[2].values()})
        wb_tree = self._workbench_tree(files)
        faults.point("after_git_objects")
        if state_only:
            moved = self.state_ref_moved(ref)
            if moved:
                return CommitOutcome(skipped=moved)
        if self.run_hooks:
            _parent, root, _old = known
            staged = self._write_tree({WB_DIR: ("40000", wb_tree)} if state_only
                                      else {**root, WB_DIR: ("40000", wb_tree)})
            message = self._run_commit_hooks(message, staged, files)
        for attempt in range(5):
            parent, root, old_files = known if attempt == 0 else self._parent_info(ref)
            new_root = {WB_DIR: ("40000", wb_tree)} if state_only else {**root, WB_DIR: ("40000", wb_tree)}
            if parent is not None and root.get(WB_DIR) == ("40000", wb_tree):
                self._last = (ref, parent, root, old_files)
                if state_only and self.state_base(ref) != parent:
                    self.set_state_base(ref, parent)
                outcome = CommitOutcome()  # nothing changed under .workbench/
                if not state_only:  # but a crash after the ref moved may have left the index behind
                    self._sync_index(files, old_files, outcome)
                return outcome
            tree = self._write_tree(new_root)
            author, committer = self._ident_or_raise()
            body = f"tree {tree}\n"
            also = _also_changed(files, old_files) if parent else []
            if parent:
                body += f"parent {parent}\n"
            body += f"author {author}\ncommitter {committer}\n\n{message}"
            if not body.endswith("\n"):
                body += "\n"
            if also:  # a hand edit of config.yaml (tools, modes, hooks) rides along: say so where a reviewer looks
                body += f"Wb-Also-Changed: {', '.join(also)}\n"
            commit = self._signed_commit(body) if self._signing() else self._write_object("commit", body.encode())
            self._journal_written()
            faults.point("before_git_ref")
            if not state_only:
                self.wait_for_users_git()  # their `git commit` would fail on the branch wb just moved
            why = self._refs.move(ref, commit, parent or "0" * len(commit))
            if why is not None:
                if any(m in why for m in ("No space left", "Read-only file system", "Permission denied")):
                    raise GitError(f"git update-ref failed: {why.splitlines()[-1]}")  # retrying cannot help
                self._last = None
                if state_only:  # another worktree (or a sync) moved the state ref: its events are not ours
                    return CommitOutcome(skipped=STATE_REF_MOVED.format(ref=ref))
                continue  # the branch moved under us (a user's commit): rebuild on its new tip
            if state_only:
                self.set_state_base(ref, commit)
            faults.point("after_git_ref")
            self._last = (ref, commit, new_root, files)
            outcome = CommitOutcome(sha=commit)
            if not state_only:
                self._sync_index(files, old_files, outcome)
            self.packer.maybe_pack()  # every git.pack_every commits: wb's loose objects into wb's packs
            self._gc_auto()
            return outcome
        raise GitError(f"could not move {ref}: it kept changing under wb; retry")

    # -- sync: state shared through a ref (wb sync, claims) ----------------------------------------
    # The worktree's .workbench/ is a checkout of the state ref: `state_base` is the commit it was last made
    # from or committed as (kept in this worktree's git dir). A state commit is made only on that commit, so a
    # worktree never commits a tree that lacks what another worktree (or a sync) put on the shared ref; it
    # says so instead, and `wb sync` merges the two by wb's rules (workbench/ops/sync.py).
    def _state_base_path(self) -> Path:
        return self.git_dir / "wb" / "state-base.json"

    def state_base(self, ref: str) -> str | None:
        """The state commit this worktree's .workbench/ was last made from (None: not recorded)."""
        import json

        try:
            value = json.loads(self._state_base_path().read_text()).get(ref)
        except (OSError, ValueError, AttributeError):
            return None
        return value if isinstance(value, str) else None

    @property
    def state_writing_marker(self) -> Path:
        """Present while a sync writes a state commit into the work tree (its snapshots may disagree with its
        log until it is done): loads refuse, and the next `wb sync` finishes the write."""
        return self.git_dir / "wb" / "sync-writing"

    def begin_state_write(self, sha: str) -> None:
        marker = self.state_writing_marker
        marker.parent.mkdir(exist_ok=True)
        with open(marker, "w") as fh:
            fh.write(sha + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def set_state_base(self, ref: str, sha: str) -> None:
        """Record (durably) the commit the work tree was made from; ends a sync's write into it."""
        import json

        path = self._state_base_path()
        try:
            data = json.loads(path.read_text())
            if not isinstance(data, dict):
                data = {}
        except (OSError, ValueError):
            data = {}
        data[ref] = sha
        path.parent.mkdir(exist_ok=True)
        tmp = path.parent / f".state-base.{os.getpid()}.tmp"
        with open(tmp, "w") as fh:
            fh.write(json.dumps(data, sort_keys=True))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        try:
            os.unlink(self.state_writing_marker)
        except FileNotFoundError:
            pass

    def state_ref_moved(self, ref: str) -> str | None:
        """Why this worktree must not commit on `ref` now (it moved past the commit the work tree was made from),
        or None. A base never recorded (a workbench older than sync) is taken as the ref's tip."""
        base = self.state_base(ref)
        if base is None:
            return None
        tip = self._read_ref_fast(ref) or self.read_ref(ref)
        if tip is None or tip == base:
            return None
        return STATE_REF_MOVED.format(ref=ref)

    def worktree_id(self) -> str:
        """A random name for this worktree of this clone, made once (a sync's task.renumber names whose
        unpublished task moved, so `wb task show OLD` resolves OLD there and only there)."""
        path = self.keep_dir / "worktree-id"  # a linked worktree's outlives `git worktree remove` (store/kept.py)
        for where in (path, self.git_dir / "wb" / "worktree-id"):  # (the old place, until the store moves it)
            try:
                value = where.read_text().strip()
                if value:
                    return value
            except OSError:
                pass
        value = os.urandom(6).hex()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as fh:
            fh.write(value + "\n")
        return value

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

    def remotes(self) -> list[str]:
        return run_git(self.worktree, "remote", check=False).stdout.decode().split()

    def config_value(self, key: str) -> str | None:
        out = run_git(self.worktree, "config", "--get", key, check=False).stdout.decode().strip()
        return out or None

    def fetch_branch(self, remote: str, branch: str, tracking: str) -> str | None:
        """Fetch `branch` of `remote` into `tracking` (forced: the tracking ref follows the remote). Returns the
        fetched commit, None when the remote has no such branch; GitError (one line) when the remote cannot be
        reached."""
        proc = run_git(self.worktree, "fetch", "--no-tags", "--quiet", "--no-write-fetch-head", remote,
                       f"+refs/heads/{branch}:{tracking}", check=False, env=_NO_PROMPT)
        if proc.returncode != 0:
            why = proc.stderr.decode(errors="replace").strip()
            if "couldn't find remote ref" in why or "no such ref" in why.lower():
                return None
            raise GitError(f"cannot fetch from {remote}: {_last_line(why)}; local state untouched")
        return self.ref_sha(tracking)

    def push_branch(self, remote: str, sha: str, branch: str) -> str | None:
        """Push commit `sha` to `branch` of `remote`, fast-forward only: the remote's ref update is the
        compare-and-swap. None when pushed (or already there); "rejected" when the remote moved first; GitError
        for any other refusal (a hook, permissions, offline)."""
        faults.point("before_push")
        proc = run_git(self.worktree, "push", "--porcelain", "--quiet", remote, f"{sha}:refs/heads/{branch}",
                       check=False, env=_NO_PROMPT)
        out = proc.stdout.decode(errors="replace")
        faults.point("after_push")
        if proc.returncode == 0:
            return None
        if any(m in out for m in ("[rejected]", "(fetch first)", "(non-fast-forward)", "stale info")) or \
                "cannot lock ref" in proc.stderr.decode(errors="replace"):
            return "rejected"
        why = proc.stderr.decode(errors="replace").strip() or out.strip()
        raise GitError(f"{remote} refused the push: {_last_line(why)}; local state untouched")

    def workbench_files_at(self, commit: str) -> dict[str, tuple[str, bytes]]:
        """{path under .workbench/: (mode, bytes)} as committed at `commit`, less what wb never commits (the
        lock, a `.cache/`, temp files): a state commit pushed by someone else cannot plant them here."""
        out = run_git(self.worktree, "ls-tree", "-r", "-z", commit, "--", WB_DIR + "/").stdout
        entries = []
        for item in out.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, kind, sha = meta.decode().split()
            rel = path.decode()[len(WB_DIR) + 1:]
            top = rel.split("/", 1)[0]
            if top in IGNORED_NAMES or top.startswith(".tmp-"):  # never wb's to commit, nor to take from one
                continue
            if kind == "blob":
                entries.append((rel, mode, sha))
        bodies = self._cat([sha for _p, _m, sha in entries])
        return {rel: (mode, body[1]) for (rel, mode, _sha), body in zip(entries, bodies, strict=True) if body}

    def state_commit(self, files: dict[str, tuple[str, bytes]], parents: list[str], message: str) -> str:
        """A commit whose tree holds only `.workbench/` with `files`, on `parents` (objects only: no ref moves)."""
        blobs = {rel: (mode, self._write_object("blob", data, f"{WB_DIR}/{rel}"))
                 for rel, (mode, data) in files.items()}
        tree = self._write_tree({WB_DIR: ("40000", self._workbench_tree(blobs))})
        author, committer = self._ident_or_raise()
        body = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
        body += f"author {author}\ncommitter {committer}\n\n{message}"
        if not body.endswith("\n"):
            body += "\n"
        commit = self._signed_commit(body) if self._signing() else self._write_object("commit", body.encode())
        self._journal_written()
        return commit

    def count_apart(self, a: str, b: str) -> tuple[int, int]:
        """(commits in `a` not in `b`, commits in `b` not in `a`)."""
        out = run_git(self.worktree, "rev-list", "--left-right", "--count", f"{a}...{b}", check=False).stdout
        parts = out.decode().split()
        return (int(parts[0]), int(parts[1])) if len(parts) == 2 else (0, 0)

    # -- the user's policy: signing, hooks, housekeeping ----------------------------------------
    def _signing(self) -> bool:
        if self.sign is not None:
            return self.sign
        if self._gpgsign is None:
            out = run_git(self.worktree, "config", "--bool", "--get", "commit.gpgsign", check=False).stdout
            self._gpgsign = out.decode().strip() == "true"
        return self._gpgsign

    def _signed_commit(self, body: str) -> str:
        """The commit object signed as `git commit -S` would sign it (user.signingkey, gpg.format): written
        by `git commit-tree -S`, the same headers and message as the unsigned path."""
        headers, _, message = body.partition("\n\n")
        args = ["commit-tree", "-S"]
        env = {}
        tree = ""
        for line in headers.splitlines():
            key, _, value = line.partition(" ")
            if key == "tree":
                tree = value
            elif key == "parent":
                args += ["-p", value]
            elif key in ("author", "committer"):
                name, _, rest = value.partition(" <")
                email, _, date = rest.partition("> ")
                prefix = "GIT_AUTHOR" if key == "author" else "GIT_COMMITTER"
                env.update({f"{prefix}_NAME": name, f"{prefix}_EMAIL": email, f"{prefix}_DATE": date})
        proc = run_git(self.worktree, *args, tree, "-F", "-", stdin=message.encode(), env=env, check=False)
        if proc.returncode != 0:
            why = proc.stderr.decode(errors="replace").strip().splitlines()
            raise GitError(f"commit.gpgsign is set but the state commit could not be signed "
                           f"({why[-1] if why else 'git commit-tree -S failed'}); fix signing, or set "
                           "git.sign: false in .workbench/config.yaml to commit state unsigned")
        sha = proc.stdout.decode().strip()
        self._written.append((sha, "commit", ""))  # loose, written by git: wb's packs take it too
        return sha

    def _run_commit_hooks(self, message: str, staged: str, files: dict[str, tuple[str, str]]) -> str:
        """config.yaml `git.run_hooks: true`: the repository's pre-commit, then commit-msg on the message
        (which it may rewrite), as `git commit` runs them. A hook that fails refuses the commit.

        The hooks run against an index of wb's own (`staged`: the tree about to be committed), never the
        user's: what the hook stages (`git add -u`) goes there and is thrown away, so the user's staged and
        unstaged work stays as it was. A hook that rewrites one of wb's files (a formatter on "changed files")
        would leave `.workbench/` differing from the commit, and the next write would record the hook's edit
        as a person's: wb's own bytes are put back from that index (`git checkout-index`, git writing what wb
        had staged) and the commit is refused, naming the files and what to do."""
        import tempfile

        wb_dir = self.git_dir / "wb"
        wb_dir.mkdir(exist_ok=True)
        index = wb_dir / f"hook-index-{os.getpid()}"
        env = {"GIT_INDEX_FILE": str(index), HOOK_MARK: "1"}
        from workbench.git.userfiles import UserFiles

        users = UserFiles.record(self, run_git, cat_batch)  # wb never changes a user's file: what a hook changes
        #                                                       is put back
        try:
            run_git(self.worktree, "read-tree", staged, env=env)
            proc = run_git(self.worktree, "hook", "run", "--ignore-missing", "pre-commit", env=env, check=False)
            self._refuse_users_changed("pre-commit", users)
            rewritten = self._rewritten(files)
            if rewritten:
                run_git(self.worktree, "read-tree", staged, env=env)  # what the hook staged is not wb's
                run_git(self.worktree, "checkout-index", "-f", "--", *(f"{WB_DIR}/{r}" for r in rewritten), env=env)
                raise GitError(f"the pre-commit hook rewrote {', '.join(f'{WB_DIR}/{r}' for r in rewritten)}: wb put "
                               "its own bytes back and did not commit; keep .workbench/ out of that hook (pre-commit: "
                               "`exclude: ^\\.workbench/`), and the next wb write commits everything")
            if proc.returncode != 0:
                raise GitError(f"the pre-commit hook refused the state commit (exit {proc.returncode}): "
                               f"{proc.stderr.decode(errors='replace').strip()[-300:]}")
            with tempfile.NamedTemporaryFile("w+", suffix=".COMMIT_EDITMSG", delete=False,
                                             encoding="utf-8") as fh:
                fh.write(message)
            try:
                proc = run_git(self.worktree, "hook", "run", "--ignore-missing", "commit-msg", "--", fh.name,
                               env=env, check=False)
                self._refuse_users_changed("commit-msg", users)
                if proc.returncode != 0:
                    raise GitError(f"the commit-msg hook refused the state commit (exit {proc.returncode}): "
                                   f"{proc.stderr.decode(errors='replace').strip()[-300:]}")
                return Path(fh.name).read_text(encoding="utf-8")
            finally:
                os.unlink(fh.name)
        finally:
            for leftover in (index, index.with_name(index.name + ".lock")):
                try:
                    os.unlink(leftover)
                except FileNotFoundError:
                    pass

    @staticmethod
    def _refuse_users_changed(hook: str, users: UserFiles) -> None:
        """After a hook: put back every user's file it changed (git/userfiles.py) and refuse the commit, naming
        the hook and the files. The write stays acknowledged (its events are in the log); the next wb write
        commits it once the hook leaves other files alone."""
        changed = users.restore()
        if not changed:
            return
        names = ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else "")
        raise GitError(f"the {hook} hook changed {names} (yours, not wb's): wb put your bytes back and did not "
                       f"commit; make that hook touch only the files git passes it (or set git.run_hooks: false in "
                       f"{WB_DIR}/config.yaml), and the next wb write commits everything")

    def _rewritten(self, files: dict[str, tuple[str, str]]) -> list[str]:
        """The files of `files` (path under .workbench/ → (mode, blob sha)) whose bytes on disk are not that
        blob any more (changed or removed)."""
        import hashlib

        out = []
        for rel, (_mode, sha) in sorted(files.items()):
            try:
                body = (self.worktree / WB_DIR / rel).read_bytes()
            except OSError:
                out.append(rel)
                continue
            if hashlib.new(self._algo, f"blob {len(body)}\0".encode() + body).hexdigest() != sha:
                out.append(rel)
        return out

    def _gc_auto(self) -> None:
        """`git gc --auto`, as git's own commands run it after they write objects: wb's loose objects (a new
        copy of events.jsonl per commit) get packed. The estimate is git's own (objects/17 holds ~1/256 of
        the loose objects); only past it does a detached `git gc --auto` start, and wb never waits for it."""
        try:
            count = len(os.listdir(self.common_dir / "objects" / "17"))
        except OSError:
            return
        if count <= (self._gc_auto_limit() + 255) // 256:  # git's own estimate, from gc.auto
            return
        import subprocess

        try:
            subprocess.Popen(["git", "gc", "--auto", "--quiet"], cwd=self.worktree, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            pass

    # -- completeness (a `git gc --prune=now` beside a writer can prune what a commit is about to name) --
    def missing_objects(self, ref: str = "HEAD") -> list[str]:
        """The objects wb's last commit on `ref` names for .workbench/ (its tree, the subtree, the blobs) that the
        object store lacks: [] when complete, or when there is no commit."""
        found = self._cat([f"{ref}^{{commit}}"])[0]
        if found is None:
            return []
        tree = next((line[5:] for line in found[1].decode(errors="replace").splitlines()
                     if line.startswith("tree ")), "")
        root = self._cat([tree])[0]
        if root is None:
            return [tree]
        entry = self._parse_tree(root[1]).get(WB_DIR)
        if entry is None:
            return []
        missing = []
        pending = [entry[1]]
        while pending:
            sha = pending.pop()
            body = self._cat([sha])[0]
            if body is None:
                missing.append(sha)
                continue
            blobs = []
            for mode, child in self._parse_tree(body[1]).values():
                if mode == "40000":
                    pending.append(child)
                else:
                    blobs.append(child)
            # one batch per tree (.workbench/log/ holds a blob per sealed segment), their sizes only
            missing.extend(child for child, there in zip(blobs, self._exist(blobs), strict=True) if not there)
        return missing

    def restore_objects(self, ref: str = "HEAD") -> list[str]:
        """Write again, from the files on disk, the objects of `ref`'s commit that were pruned: the .workbench
        blobs and trees (the same bytes give the same ids), and its root tree (the parent's, with this
        .workbench). Returns what is still missing — objects the files no longer match."""
        self._workbench_tree(self._snapshot_files())
        missing = self.missing_objects(ref)
        if missing:
            found = self._cat([f"{ref}^{{commit}}"])[0]
            if found is not None:
                lines = found[1].decode(errors="replace").splitlines()
                tree = next((x[5:] for x in lines if x.startswith("tree ")), "")
                parent = next((x[7:] for x in lines if x.startswith("parent ")), None)
                parent_root = self._parent_info(parent)[1] if parent else {}
                if tree in missing:  # rebuilt as the commit built it; a different id means the files moved on
                    self._write_tree({**parent_root, WB_DIR: ("40000", self._workbench_tree(self._snapshot_files()))})
            missing = self.missing_objects(ref)
        self._journal_written()
        return missing

    def _gc_auto_limit(self) -> int:
        """gc.auto as the repository's own config file sets it (default 6700; 0 turns automatic gc off). Read
        from the file, not through git: this runs after every commit. `git gc --auto` itself reads the full
        configuration again before it does anything."""
        try:
            text = (self.common_dir / "config").read_text(errors="replace")
        except OSError:
            return 6700
        found = re.search(r"^\[gc\][^\[]*?^\s*auto\s*=\s*(-?\d+)", text, re.M | re.S | re.I)
        limit = int(found.group(1)) if found else 6700
        return limit if limit > 0 else 1 << 62

    def _ident_or_raise(self) -> tuple[str, str]:
        try:
            return self._ident()
        except GitError:
            raise GitError("git has no identity for commits: set `git config user.name` and `git config "
                           "user.email`, or git.author in .workbench/config.yaml") from None

    def _sync_index(self, files: dict[str, tuple[str, str]], old: dict[str, tuple[str, str]],
                    outcome: CommitOutcome) -> None:
        """Point the user's index entries under .workbench/ at the new commit, so `git status` is clean there.
        Only those entries change: what the user staged elsewhere stays staged."""
        lines = [f"{mode} {sha}\t{WB_DIR}/{rel}" for rel, (mode, sha) in files.items()]
        zero = "0" * 40 if self._algo == "sha1" else "0" * 64
        lines += [f"0 {zero}\t{WB_DIR}/{rel}" for rel in old if rel not in files]
        stdin = ("\n".join(lines) + "\n").encode()
        for attempt in range(40):
            proc = run_git(self.worktree, "update-index", "--index-info", stdin=stdin, check=False)
            if proc.returncode == 0:
                return
            if self.index_lock.exists():  # the user's git holds the index: within the one wait for it
                if not self.wait_for_users_git():
                    outcome.warnings.append(f"committed, but {self.index_lock_advice()}, then `git reset -q -- "
                                            ".workbench` so `git status` is clean under .workbench/")
                    return
            else:
                time.sleep(0.05 * (1 + attempt % 4))
        outcome.warnings.append("committed, but git's index could not be updated: run `git reset -q -- "
                                ".workbench` so `git status` is clean under .workbench/")


WRITTEN_BY_WB = {"state.md", "board.json", "events.jsonl", "calls.jsonl"}
STATE_REF_MOVED = ("{ref} moved past this worktree's state (another worktree or a sync wrote it); recorded, not "
                   "committed: `wb sync` merges the two and commits")
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0",  # a sync never waits on a password prompt: it fails in one line
              "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND") or "ssh -o BatchMode=yes"}


def _last_line(text: str) -> str:
    """git's reason in one line: its last line, after what the remote said (a hook's own words) — `error:
    failed to push some refs` alone names no reason (issue 23 §9)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("hint:") and line not in _GIT_ADVICE] or lines
    if not lines:
        return "no reason given"
    last = lines[-1].removeprefix("fatal: ").removeprefix("error: ")
    said = [line[len("remote:"):].strip() for line in lines if line.startswith("remote:")]
    said = [line for line in said if line][-3:]
    if said:
        return f"{'; '.join(said)} ({last})"
    # the cause comes first ("Permission denied (publickey).", "'x' does not appear to be a git repository"),
    # git's summary last ("Could not read from remote repository."): both, in git's order
    first = lines[0].removeprefix("fatal: ").removeprefix("error: ")
    return f"{first} ({last})" if len(lines) > 1 and first != last else last


# the advice git prints after a refused fetch or push: no reason in it
_GIT_ADVICE = frozenset({"Please make sure you have the correct access rights", "and the repository exists."})



def _also_changed(files: dict[str, tuple[str, str]], old: dict[str, tuple[str, str]]) -> list[str]:
    """The workbench files a commit changes besides the four wb writes on every mutation and the tools'
    artifacts: config.yaml and .gitattributes edited by hand, most of all."""
    return sorted(rel for rel in set(files) | set(old)
                  if rel not in WRITTEN_BY_WB and not rel.startswith(("artifacts/", "log/"))  # log/: sealed by wb
                  and files.get(rel) != old.get(rel))


# .workbench/.gitattributes: inside the workbench, so it is committed with it and travels with every clone,
# and nothing outside .workbench/ changes. The drivers it names are defined in each clone's git config.
