"""The user's commit policy, as config.yaml's `git:` and git's own config say: the identity (git.author, else
git's, strictly), signing (git.sign, else commit.gpgsign: `git commit-tree -S`), the repository's pre-commit
and commit-msg hooks (git.run_hooks, against an index of wb's own; git/userfiles.py puts back any user's file a
hook changes), and `git gc --auto` after a commit. `RepoPolicy` is GitRepo's fourth layer (git/objects.py below)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from workbench.errors import GitError
from workbench.git.discovery import HOOK_MARK
from workbench.git.gitconfig import Config, config_of, explicit_ident, git_bool, start_reading
from workbench.git.objects import RepoObjects
from workbench.git.plumbing import cat_batch, run_git
from workbench.model.layout import WB_DIR

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.git.spawn import Git
    from workbench.git.userfiles import UserFiles


class RepoPolicy(RepoObjects):
    """How state commits are made (GitRepo's fourth layer)."""

    def __init__(self, worktree: Path) -> None:
        super().__init__(worktree)
        self._ident_cache: tuple[str, str] | None = None
        # how state commits are made (config.yaml `git:`; set by the store when it reads the config)
        self.author: str | None = None  # "Name <email>": wb's commits are made as this identity
        self.sign: bool | None = None  # None: as commit.gpgsign says; False: never (and never a warning)
        self.run_hooks = False  # run the repository's pre-commit and commit-msg hooks for state commits
        self._gpgsign: bool | None = None
        self._config: Config | None = None  # git's configuration, read once (git/gitconfig.py)
        self._config_proc: Git | None = None  # that read, started ahead (`read_config_ahead`)

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

    def _ident(self) -> tuple[str, str]:
        """(author, committer) as 'Name <email> <epoch> <tz>': config.yaml's git.author, else git's own identity
        as `git commit` would take it — strictly: no invented `root@host.(none)`, and user.useConfigOnly holds."""
        dated = os.environ.get("GIT_AUTHOR_DATE") or os.environ.get("GIT_COMMITTER_DATE")
        if self.author:
            self._ident_cache = (self.author, self.author)
        else:
            if self._ident_cache is None and not dated:
                self._ident_cache = self._explicit_idents()
            if self._ident_cache is None or dated:
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

    def read_config_ahead(self) -> None:
        """Start reading git's configuration now, when a commit will need it (its identity or commit.gpgsign)
        and has other work to do first: git runs while it does."""
        if self._config is None and self._config_proc is None and (not self.author or self.sign is None):
            self._config_proc = start_reading(self.worktree)

    def settle_config(self) -> None:
        if self._config_proc is not None:
            self._git_config()

    def _git_config(self) -> Config | None:
        """git's configuration, read once (None: git could not read it; then git is asked each thing)."""
        if self._config is None:
            proc, self._config_proc = self._config_proc, None
            self._config = config_of(proc or start_reading(self.worktree)) or {"": None}
        return None if "" in self._config else self._config

    def _explicit_idents(self) -> tuple[str, str] | None:
        """(author, committer) without the date, when git's config and environment give both explicitly (one
        `git config --list` where `git var` took a process each); None: `git var` decides."""
        config = self._git_config()
        if config is None:
            return None
        author, committer = explicit_ident(config, "author"), explicit_ident(config, "committer")
        return None if author is None or committer is None else (author, committer)

    def _ident_or_raise(self) -> tuple[str, str]:
        try:
            return self._ident()
        except GitError:
            raise GitError("git has no identity for commits: set `git config user.name` and `git config "
                           "user.email`, or git.author in .workbench/config.yaml") from None

    def _signing(self) -> bool:
        if self.sign is not None:
            return self.sign
        if self._gpgsign is None:
            config = self._git_config()
            self._gpgsign = None if config is None else git_bool(config.get("commit.gpgsign", b"false"))
        if self._gpgsign is None:  # a value git_bool does not know: git says
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
        from workbench.model import digest

        out = []
        for rel, (_mode, sha) in sorted(files.items()):
            try:
                body = (self.worktree / WB_DIR / rel).read_bytes()
            except OSError:
                out.append(rel)
                continue
            if digest.new(self._algo, f"blob {len(body)}\0".encode() + body).hexdigest() != sha:
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

    def _gc_auto_limit(self) -> int:
        """gc.auto as the repository's own config file sets it (default 6700; 0 turns automatic gc off). Read
        from the file, not through git: this runs after every commit. `git gc --auto` itself reads the full
        configuration again before it does anything."""
        try:
            text = (self.common_dir / "config").read_text(errors="replace")
        except OSError:
            return 6700
        found = "[gc]" in text.lower() and re.search(r"^\[gc\][^\[]*?^\s*auto\s*=\s*(-?\d+)", text,
                                                      re.M | re.S | re.I)  # compiled only for a [gc] section
        limit = int(found.group(1)) if found else 6700
        return limit if limit > 0 else 1 << 62
