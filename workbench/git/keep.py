"""Where wb keeps what must outlive a linked worktree's own git directory (issue 29): the place only, computed
from two paths with no subprocess (a hook asks where the database is). The store moves what an older wb left in
the old place (store/kept.py)."""

from __future__ import annotations

import os

KEPT = "worktrees"  # <common git dir>/wb/worktrees/<key>/: what a linked worktree keeps past `git worktree remove`
KEPT_FOR = "worktree"  # in each: the work tree's path it is kept for (to name it when the key does not match)


def keep_dir_of(root: str | os.PathLike[str], git_dir: str | os.PathLike[str]) -> str:
    """Where wb keeps what must outlive this worktree's git directory: the workbench's SQLite database (by
    default) and the pending journal. A main worktree (or a submodule, or `.workbench/.local/` without git) keeps
    them in its git directory's `wb/`; a linked worktree's git directory (`.git/worktrees/NAME/`, the one with
    a `commondir` file) is deleted by `git worktree remove` and `git worktree prune`, so it keeps them in the
    common git directory, under `wb/worktrees/<key>/`, the key the work tree's base name and a hash of its real
    path: a worktree added again at the same path finds them (docs/git.md#what-outlives-git-worktree-remove).
    Read without a subprocess: a hook asks where the database is."""
    git_dir = os.fspath(git_dir)
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as f:
            common = f.read().strip()
    except OSError:
        return os.path.join(git_dir, "wb")
    if not common:
        return os.path.join(git_dir, "wb")
    from workbench.model.digest import sha256

    real = os.path.realpath(os.fspath(root))
    digest = sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real))[:40] or "worktree"
    return os.path.join(os.path.normpath(os.path.join(git_dir, common)), "wb", KEPT, f"{name}-{digest}")
