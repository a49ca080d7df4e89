"""What the user's work tree and history say right now, for the scope contract, the handoff packet and resume:
HEAD, the branch, the paths changed since a commit (committed and not), and a digest of the dirty tree.
Paths under `.workbench/` are wb's own and left out. Every question is one git subprocess (via `run_git`)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from workbench.git.plumbing import size_batch
from workbench.git.repo import run_git
from workbench.model.layout import WB_DIR

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

OUTSIDE_WB = (".", f":(exclude){WB_DIR}")


def head(root: Path) -> str | None:
    """HEAD's commit, or None when there is no commit yet."""
    out = run_git(root, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).stdout.decode().strip()
    return out or None


def code_head(root: Path) -> str | None:
    """The newest commit reachable from HEAD that touches anything outside `.workbench/`: HEAD as the user's
    own work sees it (wb's state commits move HEAD on every write)."""
    proc = run_git(root, "log", "-1", "--format=%H", "HEAD", "--", *OUTSIDE_WB, check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def branch(root: Path) -> str | None:
    """The checked-out branch's short name, or None when HEAD is detached."""
    proc = run_git(root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def _lines(out: bytes) -> list[str]:
    return [p for p in out.decode(errors="replace").split("\0") if p]


def dirty(root: Path) -> list[str]:
    """Paths outside `.workbench/` with changes not committed (staged, unstaged or untracked), sorted."""
    proc = run_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *OUTSIDE_WB, check=False)
    paths: list[str] = []
    entries = _lines(proc.stdout)
    i = 0
    while i < len(entries):
        entry = entries[i]
        paths.append(entry[3:])
        if entry[:1] in ("R", "C"):  # a rename names its source next
            i += 1
            if i < len(entries):
                paths.append(entries[i])
        i += 1
    return sorted(set(paths))


def committed_since(root: Path, base: str | None) -> list[str]:
    """Paths outside `.workbench/` changed by the commits from `base` (exclusive) to HEAD; [] without a base or
    when `base` is not an ancestor git can read."""
    if not base:
        return []
    proc = run_git(root, "diff", "--name-only", "-z", "--no-renames", f"{base}..HEAD", "--", *OUTSIDE_WB,
                   check=False)
    return sorted(set(_lines(proc.stdout))) if proc.returncode == 0 else []


def changed_since(root: Path, base: str | None) -> list[str]:
    """What changed since `base`: its commits up to HEAD, and the work tree's uncommitted changes."""
    return sorted(set(committed_since(root, base)) | set(dirty(root)))


def commits_since(root: Path, base: str | None, limit: int = 50) -> list[dict[str, str]]:
    """The commits from `base` to HEAD that touch anything outside `.workbench/` (newest first): [{sha, subject}]."""
    if not base:
        return []
    proc = run_git(root, "log", f"-{limit}", "--format=%H%x00%s", f"{base}..HEAD", "--", *OUTSIDE_WB, check=False)
    if proc.returncode != 0:
        return []
    out = []
    for line in proc.stdout.decode(errors="replace").splitlines():
        sha, _, subject = line.partition("\0")
        out.append({"sha": sha, "subject": subject})
    return out


def commits_touching(root: Path, base: str | None, paths: list[str], limit: int = 20) -> list[dict[str, str]] | None:
    """The commits after `base` (all of HEAD's history when None) up to HEAD that change any of `paths`, newest
    first: [{sha, subject}], at most `limit`; None when git cannot say (`base` is not a commit here)."""
    span = f"{base}..HEAD" if base else "HEAD"
    specs = [f":(literal){p}" for p in paths]
    proc = run_git(root, "log", f"-{limit}", "--format=%H%x00%s", span, "--", *specs, check=False)
    if proc.returncode != 0:
        return None
    out = []
    for line in proc.stdout.decode(errors="replace").splitlines():
        sha, _, subject = line.partition("\0")
        out.append({"sha": sha, "subject": subject})
    return out


def is_ancestor(root: Path, base: str, tip: str = "HEAD") -> bool:
    return run_git(root, "merge-base", "--is-ancestor", base, tip, check=False).returncode == 0


def path_digests(root: Path, paths: list[str]) -> dict[str, str]:
    """{path: a sha256 of its content} for paths under `root` ("-" for one that is not a regular file, "?" for
    one that cannot be read): what `wb task start` records of the tree already dirty then."""
    out = {}
    for rel in paths:
        path = root / rel
        try:
            if path.is_file() and not path.is_symlink():
                with path.open("rb") as f:
                    out[rel] = hashlib.file_digest(f, "sha256").hexdigest()
            else:
                out[rel] = "-"
        except OSError:
            out[rel] = "?"
    return out


def dirty_digest(root: Path, paths: list[str] | None = None) -> str:
    """A sha256 of the dirty work tree outside `.workbench/`: each dirty path with its content's hash, so any
    edit, new or deleted file changes it, and a clean tree has one fixed digest."""
    digest = hashlib.sha256()
    for rel in dirty(root) if paths is None else paths:
        digest.update(rel.encode() + b"\0")
        path = root / rel
        try:
            if path.is_file() and not path.is_symlink():
                with path.open("rb") as f:  # streamed: a large file of the user's is not read into memory
                    digest.update(hashlib.file_digest(f, "sha256").digest())
            else:
                digest.update(b"-")
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def worktree_name(root: Path) -> str:
    """Which checkout `root` is, without a machine's paths: "main" for the repository's own work tree, the
    linked worktree's name (as `git worktree add` made it) otherwise."""
    git = root / ".git"
    if git.is_file():  # a linked worktree: "gitdir: <common>/worktrees/<name>"
        text = git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            return Path(text[7:].strip()).name
    return "main"


def where_now(root: Path) -> dict[str, Any]:
    """Where the work tree stands: HEAD, the user's own HEAD (`code_head`), the branch, the checkout, and the
    digest and count of its dirty paths. Recorded at a session's start and at each yield (issue 16)."""
    paths = dirty(root)
    return {"head": head(root), "code_head": code_head(root), "branch": branch(root),
            "worktree": worktree_name(root), "dirty": dirty_digest(root, paths), "dirty_files": len(paths)}


def since(root: Path, then: dict[str, Any] | None) -> dict[str, Any] | None:
    """What changed since `then` (a `where_now`): the user's new commits, the files they changed, whether the
    dirty tree differs, and a plain sentence when the branch or the checkout is not the one of then. None when
    nothing was recorded then."""
    if not isinstance(then, dict):
        return None
    now = where_now(root)
    base = then.get("code_head")
    new_commits: list[dict[str, str]] = []
    files: list[str] = []
    diverged = False
    if isinstance(base, str) and base != now["code_head"]:
        if is_ancestor(root, base):
            new_commits = commits_since(root, base)
            files = committed_since(root, base)
        else:
            diverged = True
    notes = []
    if then.get("branch") != now["branch"]:
        notes.append(f"the branch is {now['branch'] or 'detached HEAD'}, not {then.get('branch') or 'detached HEAD'}"
                     " as when the session yielded")
    if then.get("worktree") != now["worktree"]:
        notes.append(f"this is worktree {now['worktree']}, not {then.get('worktree')} where the session yielded")
    if diverged:
        notes.append(f"HEAD no longer contains {str(base)[:12]}, the commit the session yielded on "
                     "(a reset, rebase or another branch)")
    return {"then": then, "now": now, "new_commits": new_commits, "files_changed": files,
            "dirty_changed": then.get("dirty") != now["dirty"], "notes": notes,
            "changed": bool(new_commits or files or diverged or notes or then.get("dirty") != now["dirty"])}


# A file this size or more is not handed to `git status` when its size alone says it changed: wb writes the index
# without stat data, so git hashes every such file to compare it (16 s for a 1 GB sparse board.json).
BIG_FILE_BYTES = 8 * 1024 * 1024


def workbench_status(root: Path) -> str:
    """`git status --porcelain -- .workbench` as text, without git reading a big file whose size already differs
    from what the index holds: such a file is listed ` M` from its size, the rest is asked of git."""
    base = root / WB_DIR
    big: dict[str, int] = {}
    for folder, _dirs, files in os.walk(base):
        for name in files:
            path = Path(folder) / name
            try:
                size = path.lstat().st_size
            except OSError:
                continue
            if size >= BIG_FILE_BYTES:
                big[path.relative_to(root).as_posix()] = size
    changed: list[str] = []
    if big:
        listed = run_git(root, "ls-files", "-s", "-z", "--", *big, check=False).stdout.decode(errors="replace")
        blobs = {}
        for entry in listed.split("\0"):
            meta, _, name = entry.partition("\t")
            if name and meta.split()[2:3] == ["0"]:  # stage 0: a conflicted path is left to git
                blobs[name] = meta.split()[1]
        sizes = size_batch(root, list(blobs.values()))
        changed = [name for (name, _blob), size in zip(blobs.items(), sizes, strict=False)
                   if size is not None and size != big[name]]
    excluded = [f":(exclude){name}" for name in changed]
    rest = run_git(root, "status", "--porcelain", "--", WB_DIR, *excluded, check=False).stdout.decode().strip()
    return "\n".join([*(f" M {name}" for name in changed), *([rest] if rest else [])])
