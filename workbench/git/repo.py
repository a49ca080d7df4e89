"""Git recording: one commit per mutation containing only `.workbench/`, made without touching the user's
working tree and touching the user's index only at `.workbench/` entries.

Objects (blobs, trees, the commit) are written as loose objects in-process — the same bytes `git
hash-object -w` would write — and the branch moves with `git update-ref` (NEW OLD: a compare-and-swap,
see RefMover), so a concurrent `git commit` by the user is never overwritten. Only git/ runs git.

GitRepo is built in layers, each a class in a module of its own, each on the one before: git/discovery.py
(where the repository is, what is going on in it), git/refs.py (reading and moving refs), git/objects.py (loose
objects, trees, reading a commit), git/userpolicy.py (identity, signing, hooks, gc) and git/sharedrefs.py (the
state ref, sync's fetch and push). This module adds the commit of `.workbench/` and the check that its objects
are all present, and keeps the names the rest of wb imports from here (`from workbench.git.repo import ...`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from workbench import faults
from workbench.errors import GitError
from workbench.git import indexfile
from workbench.git.blobstat import BlobStatCache
from workbench.git.discovery import HOOK_MARK, INDEX_LOCK_WAIT_S, find_worktree, in_commit_hook
from workbench.git.objects import IGNORED_NAMES, listing_key
from workbench.git.plumbing import cat_batch, run_git
from workbench.git.refs import RefMover
from workbench.git.sharedrefs import STATE_REF_MOVED, SharedRefs
from workbench.model.layout import COMMITTED_FILES, WB_DIR

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:  # annotations only: a commit imports subprocess when it starts git
    import subprocess
    from collections.abc import Callable

    # commit_workbench's `gate`: (the parent's .workbench files, the listing to commit) → a reason not to, or None
    Gate = Callable[[dict[str, tuple[str, str]], dict[str, tuple[str, str]]], str | None]

__all__ = ["HOOK_MARK", "IGNORED_NAMES", "INDEX_LOCK_WAIT_S", "STATE_REF_MOVED", "WRITTEN_BY_WB", "BlobStatCache",
           "CommitOutcome", "GitRepo", "RefMover", "cat_batch", "find_worktree", "in_commit_hook", "run_git"]


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


class GitRepo(SharedRefs):
    """One repository as wb records into it: every layer of git/ (see the module's docstring), the helper that
    moves branches, and the commit of `.workbench/`."""

    def __init__(self, worktree: Path) -> None:
        super().__init__(worktree)
        self._refs = RefMover(worktree)
        self._index_plain: bool | None = None  # the index update is written in-process (_index_in_process)

    def close(self) -> None:
        """Wait for a pack run this repository started (git/packs.py), then end the helper git process (it also
        ends by itself when this process exits)."""
        if self._packer is not None:
            self._packer.wait()
        self._refs.close()

    # -- the commit -----------------------------------------------------------------------------
    def commit_workbench(self, message: str, ref_name: str | None = None,
                         checked: dict[str, tuple[int, int, int, int] | None] | None = None,
                         gate: Gate | None = None) -> CommitOutcome:
        """Commit the current `.workbench/` files. `ref_name` (config git.ref) names a branch that holds only
        workbench state; otherwise the checked-out branch gets the commit. `checked`: the listing key
        (objects.listing_key) of each file as the caller's gate checked it; a file that differs when listed,
        or a COMMITTED_FILES file the parent holds and the listing does not, is not committed (see _moved). `gate`:
        asked of the parent's .workbench files and the listing, {path: (mode, blob id)} each, before the commit is
        made: a reason not to make it (then the outcome's `skipped`), or None."""
        try:
            return self._commit_workbench(message, ref_name, checked, gate)
        finally:
            self.settle_config()  # a read of git's config started ahead, and not needed after all: reaped

    def _commit_workbench(self, message: str, ref_name: str | None,
                          checked: dict[str, tuple[int, int, int, int] | None] | None,
                          gate: Gate | None) -> CommitOutcome:
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
        # the two git processes a commit needs start now, and start up while its trees are built (issue 33)
        self._refs.start()
        self.read_config_ahead()
        # the parent's blobs are in the object store: a file the blob cache knows is not hashed again
        known = self._parent_info(ref)
        faults.point("before_git_listing")
        files = self._snapshot_files({sha for _mode, sha in known[2].values()})
        moved = _moved(self.worktree / WB_DIR, files, known[2], checked)
        if moved:
            return CommitOutcome(skipped=f"not committed: .workbench/{moved} changed while wb committed (a git "
                                         "command rewriting it?); the write is kept, and the next wb write "
                                         "commits it")
        wb_tree = self._workbench_tree(files)
        faults.point("after_git_objects")
        if state_only:
            moved = self.state_ref_moved(ref)
            if moved:
                return CommitOutcome(skipped=moved)
        refused = gate(known[2], files) if gate is not None and known[0] is not None else None
        if refused is not None:
            return CommitOutcome(skipped=refused)
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
            index = None
            if not state_only:
                self.wait_for_users_git()  # their `git commit` would fail on the branch wb just moved
                if not self._index_in_process():
                    # the index update starts up while the branch moves; it is fed (and writes) only once it moved
                    index = _IndexUpdate(self.worktree)
            try:
                why = self._refs.move(ref, commit, parent or "0" * len(commit))
            except BaseException:
                _abandon(index)
                raise
            if why is not None:
                _abandon(index)
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
                self._sync_index(files, old_files, outcome, index)
            self.packer.maybe_pack()  # every git.pack_every commits: wb's loose objects into wb's packs
            self._gc_auto()
            return outcome
        raise GitError(f"could not move {ref}: it kept changing under wb; retry")

    def _sync_index(self, files: dict[str, tuple[str, str]], old: dict[str, tuple[str, str]],
                    outcome: CommitOutcome, started: _IndexUpdate | None = None) -> None:
        """Point the user's index entries under .workbench/ at the new commit, so `git status` is clean there.
        Only those entries change: what the user staged elsewhere stays staged. `started`: a `git update-index
        --index-info` started ahead (_IndexUpdate), fed first."""
        zero = "0" * 40 if self._algo == "sha1" else "0" * 64
        entries = [(f"{WB_DIR}/{rel}", f"{mode} {sha}") for rel, (mode, sha) in files.items()]
        entries += [(f"{WB_DIR}/{rel}", f"0 {zero}") for rel in old if rel not in files]
        if started is None and self._index_in_process():
            why = indexfile.update(self.git_dir, entries)
            if why is None:
                return
            if why == "git":  # not an index written in-process: git writes it from now on
                self._index_plain = False
        stdin = "".join(f"{entry}\t{path}\n" for path, entry in entries).encode()
        if started is not None and started.feed(stdin):
            return
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

    def _index_in_process(self) -> bool:
        """Whether the index update can be written in-process (git/indexfile.py) rather than by `git
        update-index`: a SHA-1 repository, no GIT_INDEX_FILE, and no git configuration that changes how git
        writes its index (git's configuration is read once per process, as for the identity)."""
        if self._index_plain is None:
            self.git_dir  # noqa: B018 - discovers the object format
            self._index_plain = self._algo == "sha1" and indexfile.config_allows(self._git_config())
        return self._index_plain and not os.environ.get("GIT_INDEX_FILE")

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
        base = os.path.join(self.worktree, WB_DIR)  # strings, not Paths: twice a write, a join per sealed file
        cache = self.blob_cache()
        now = time.time_ns()
        changed: list[tuple[str, str, str | None]] = []
        for rel, (_mode, sha) in sorted(files.items()):
            if not rel.startswith(dirs):
                continue
            full = f"{base}/{rel}"
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
                    with open(full, "rb") as fh:
                        body = fh.read()
                except OSError:
                    changed.append((rel, "modified", None))
                    continue
                now_sha = self.blob_id(body)
                cache.put(rel, key, now_sha, now)
            if now_sha != sha:
                changed.append((rel, "modified", now_sha))
        cache.save()
        return changed

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


WRITTEN_BY_WB = {"state.md", "board.json", "events.jsonl", "calls.jsonl"}


class _IndexUpdate:
    """A `git update-index --index-info` started ahead of its input, on a thread (its fork and exec overlap the
    branch's move): git loads and reads its config meanwhile, then waits on stdin holding index.lock, and
    changes nothing on an empty input."""

    def __init__(self, worktree: Path) -> None:
        import threading

        self.proc: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._start, args=(worktree,), daemon=True)
        self._thread.start()

    def _start(self, worktree: Path) -> None:
        import subprocess

        try:
            self.proc = subprocess.Popen([_git_path(), "update-index", "--index-info"], cwd=worktree,
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
        except OSError:  # the update then runs as before, with run_git
            self.proc = None

    def feed(self, stdin: bytes) -> bool:
        """Give it its lines and wait for it: whether it updated the index (False: it could not start, or the
        index was locked by someone else — the caller retries)."""
        self._thread.join()
        proc = self.proc
        if proc is None:
            return False
        try:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
            proc.stdin.close()
        except OSError:  # it ended before reading (index.lock held by someone else)
            pass
        return proc.wait() == 0


def _git_path() -> str:
    """git as PATH finds it, looked up once per PATH (each exec otherwise tries every PATH entry before it)."""
    import shutil

    path = os.environ.get("PATH", "")
    if _GIT_FOUND.get(path) is None:
        _GIT_FOUND.clear()
        _GIT_FOUND[path] = shutil.which("git") or "git"
    return _GIT_FOUND[path]


_GIT_FOUND: dict[str, str] = {}


def _abandon(index: _IndexUpdate | None) -> None:
    """End a started index update unfed: on an empty input git changes nothing and lets go of index.lock."""
    if index is not None:
        index.feed(b"")


def _also_changed(files: dict[str, tuple[str, str]], old: dict[str, tuple[str, str]]) -> list[str]:
    """The workbench files a commit changes besides the four wb writes on every mutation and the tools'
    artifacts: config.yaml and .gitattributes edited by hand, most of all."""
    return sorted(rel for rel in set(files) | set(old)
                  if rel not in WRITTEN_BY_WB and not rel.startswith(("artifacts/", "log/"))  # log/: sealed by wb
                  and files.get(rel) != old.get(rel))


def _moved(base: Path, files: dict[str, tuple[str, str]], parent: dict[str, tuple[str, str]],
           checked: dict[str, tuple[int, int, int, int] | None] | None) -> str | None:
    """The first workbench file that is not as it may be committed: one of COMMITTED_FILES the parent commit
    holds that the listing found missing (the user's git unlinks a file before writing it again: committed
    then, the event log would be deleted on the branch), or, after the listing, a file not as the caller's gate
    checked it (git put back an older log beside the new snapshots). The write stays in the log and the
    pending journal either way; only this commit waits for the next write."""
    for rel in COMMITTED_FILES:
        if rel in parent and rel not in files:
            return rel
    for rel, key in (checked or {}).items():
        if listing_key(base / rel) != key:
            return rel
    return None
