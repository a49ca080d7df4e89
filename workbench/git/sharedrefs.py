"""State shared through a ref (wb sync, claims): the worktree's .workbench/ is a checkout of the state ref, and
`state_base` is the commit it was last made from or committed as (kept in this worktree's git dir). A state
commit is made only on that commit, so a worktree never commits a tree that lacks what another worktree (or a
sync) put on the shared ref; it says so instead, and `wb sync` merges the two by wb's rules
(workbench/ops/sync.py). Here too: fetching and pushing a branch (never a password prompt), and a state commit
made of objects only. `SharedRefs` is GitRepo's fifth layer (git/userpolicy.py below)."""

from __future__ import annotations

import os
from pathlib import Path

from workbench import faults
from workbench.errors import GitError
from workbench.git.plumbing import run_git
from workbench.git.userpolicy import RepoPolicy
from workbench.model.layout import WB_DIR

STATE_REF_MOVED = ("{ref} moved past this worktree's state (another worktree or a sync wrote it); recorded, not "
                   "committed: `wb sync` merges the two and commits")


_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0",  # a sync never waits on a password prompt: it fails in one line
              "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND") or "ssh -o BatchMode=yes"}


class SharedRefs(RepoPolicy):
    """The state ref shared by worktrees and clones (GitRepo's fifth layer)."""

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
