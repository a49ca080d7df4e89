"""What a linked worktree keeps past `git worktree remove` (issue 29): the place (store/spool.keep_dir_of), the
move out of the old place on first open, and the one line that says where a missing database is.

Before, wb kept a linked worktree's SQLite database and pending journal in its own git directory
(`.git/worktrees/NAME/wb/`), which `git worktree remove` and `git worktree prune` delete without a word. They now
live in the common git directory (`.git/wb/worktrees/<key>/`); what an older wb left in the old place moves there
the first time this wb opens the worktree: the journals by rename (atomic), the database by SQLite's backup
under a write lock of the old one (so no write of another process falls between the copy and the removal).
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.git.keep import KEPT, KEPT_FOR, keep_dir_of

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.git.discovery import RepoDirs

# store/pending.Pending's two, and the worktree's name in the task.renumber events a sync writes (GitRepo.worktree_id)
JOURNALS = ("pending.jsonl", "committed.jsonl", "worktree-id")


def keep_dir(root: Path, git_dir: Path) -> Path:
    return Path(keep_dir_of(root, git_dir))


def prepare(git: RepoDirs) -> Path:
    """The worktree's keep dir, made and named, with the journals an older wb left in the old place moved in."""
    keep = git.keep_dir
    if keep != git.git_dir / "wb":
        note(keep, git.worktree)
        adopt_journals(git.worktree, git.git_dir / "wb", keep)
    return keep


def note(keep: Path, root: Path) -> None:
    """Make the place, naming the work tree it is kept for (read back by `missing`)."""
    record = keep / KEPT_FOR
    if record.exists():
        return
    keep.mkdir(parents=True, exist_ok=True)
    tmp = keep / f"{KEPT_FOR}.{os.getpid()}"
    tmp.write_text(os.path.realpath(root) + "\n", encoding="utf-8")
    os.replace(tmp, record)


def adopt_journals(root: Path, old_dir: Path, keep: Path) -> None:
    """Move the pending journal an older wb kept in the worktree's own git directory (a rename: atomic, and an
    append already open writes into the moved file)."""
    if keep == old_dir:
        return
    from workbench.store.atomic import fsync_dir  # here: a reader's open of its keep dir moves nothing

    for name in JOURNALS:
        old = old_dir / name
        if not old.exists() or (keep / name).exists():
            continue
        note(keep, root)
        try:
            os.rename(old, keep / name)
        except FileNotFoundError:  # another wb moved it first
            continue
        fsync_dir(keep)


def adopt_database(root: Path, old: Path, new: Path, timeout: float = 10.0) -> None:
    """Move a database an older wb kept in the worktree's own git directory to `new`, once: copied with
    SQLite's backup inside a write transaction of the old one (its WAL included), made durable, linked into
    place (never over a database already there) and the old files removed before that lock is released."""
    if old == new or not old.exists() or new.exists():
        return
    import sqlite3  # here: every load of a files workbench imports this module, and this is its only SQLite

    note(new.parent, root)
    # one connection holds the write lock (no other wb writes meanwhile), the other reads the copy: SQLite
    # refuses a backup from the connection that is writing (WAL: a reader is never blocked by the writer)
    writer = sqlite3.connect(str(old), timeout=timeout, isolation_level=None)
    src = sqlite3.connect(str(old), timeout=timeout, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        if new.exists() or not old.exists():  # another wb moved it while this one waited for the lock
            return
        tmp = new.with_name(f"{new.name}.moving-{os.getpid()}")
        for stale in (tmp, Path(f"{tmp}-journal")):
            stale.unlink(missing_ok=True)
        dst = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            src.backup(dst)
        finally:
            dst.close()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, new)
        except FileExistsError:
            tmp.unlink()
            return
        tmp.unlink()
        from workbench.store.atomic import fsync_dir

        fsync_dir(new.parent)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{old}{suffix}").unlink(missing_ok=True)
    finally:
        src.close()
        writer.close()


def missing(root: Path, path: Path, named: str | None, git_dir: Path | None) -> str:
    """The one line for a database that is not where config.yaml says: where one kept for this worktree at
    another path is (and the command that brings it), or what removed it and how to start again."""
    start = "`wb init --backend sqlite` starts an empty one"
    if named:
        inside = not os.path.isabs(named) and os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)
        if inside:
            return (f"the workbench's database {path} is missing: it is in the work tree and ignored by git, so "
                    f"`git clean -x` (or a hand delete) removes it; restore it from a copy, or {start}; keep it out "
                    "of the work tree (drop sqlite_path from .workbench/config.yaml: the default is in the git "
                    "directory)")
        return f"the workbench's database {path} is missing: restore it, or {start}"
    if git_dir is not None and path.parent.parent.name == KEPT:
        others = []
        for kept in sorted(path.parent.parent.iterdir()):
            db = kept / path.name
            if kept == path.parent or not db.exists():
                continue
            try:
                was = (kept / KEPT_FOR).read_text(encoding="utf-8").strip()
            except OSError:
                was = "?"
            if was != "?" and os.path.exists(os.path.join(was, ".git")):
                continue  # a worktree still there: its own
            wal = Path(f"{db}-wal")
            command = f"mv {db} {path}" + (f" && mv {wal} {path}-wal" if wal.exists() else "")
            others.append(f"one is kept for the worktree that was at {was}: `{command}` brings it here")
        if others:
            return f"the workbench's database {path} is missing; " + "; ".join(others) + f" (or {start})"
        return (f"the workbench's database {path} is missing (a linked worktree keeps it in the common git "
                f"directory, which `git worktree remove` leaves alone; a re-clone does not have it): restore it, "
                f"or {start}")
    return f"the workbench's database {path} is missing: restore it, or {start}"


def set_aside_snapshots(keep: Path, paths: list[Path]) -> Path:
    """Move the snapshot files `paths` (state.md, board.json) out of the work tree into a new folder
    `<keep>/set-aside/<UTC time>/` (the caller holds the workbench lock): kept for a person, never deleted, so
    the next load rebuilds them from the log. Returns the folder."""
    import time

    from workbench.store.atomic import fsync_dir

    aside = keep / "set-aside" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside.mkdir(parents=True, exist_ok=True)
    for f in paths:
        if f.exists():
            f.replace(aside / f.name)
    fsync_dir(aside)
    return aside
