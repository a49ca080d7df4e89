"""Module-level entry points: init, join, diff of a path, export and import of a workbench."""

from __future__ import annotations

from pathlib import Path

from workbench.api.bench import Bench
from workbench.errors import Refused, UsageError
from workbench.store import opening
from workbench.store.transaction import LastWrite
from workbench.store.workbench import Workbench

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def join(path: str | Path | None = None, ref: str = "wb-state", remote: str | None = None) -> bool:
    """A worktree or fresh clone without `.workbench/` takes up the existing state branch `ref` (this clone's,
    else the remote's) and registers wb's drivers; False when there is none to take up."""
    from workbench.git.repo import find_worktree
    from workbench.ops import sync as syncop
    from workbench.store.drivers import register_drivers

    root = find_worktree(Path(path) if path is not None else Path.cwd())
    wb = Workbench(root)
    if wb.paths.wb.is_dir() and wb.paths.events.exists():
        return False
    if not syncop.join(wb, ref, remote):
        return False
    register_drivers(root, wb.git.common_dir)
    return True


def init(path: str | Path | None = None, ref: str | None = None, *, backend: str | None = None, no_git: bool = False,
         db: str | None = None) -> tuple[Bench, bool, LastWrite]:
    """Create `.workbench/` (idempotent). `ref` records state on that branch instead of the checked-out one.
    `backend="sqlite"` keeps it in one SQLite database (`db`, default under the git directory; `no_git`: no
    repository, the database in `.workbench/`; docs/storage.md). Returns (bench, created, what was committed)."""
    from workbench.ops import init as initcmd

    if backend is None:  # WB_DEFAULT_BACKEND: a CI runner's (or the test suite's) choice for every `wb init`
        import os

        backend = os.environ.get("WB_DEFAULT_BACKEND") or "files"
        if backend not in ("files", "sqlite"):
            raise UsageError(f"WB_DEFAULT_BACKEND: {backend!r} is not files or sqlite")
        if backend == "sqlite" and not no_git:  # a workbench already here stays in its own backend
            from workbench.git.repo import find_worktree
            from workbench.store import backend as storage

            config = find_worktree(Path(path) if path is not None else Path.cwd()) / ".workbench" / "config.yaml"
            if config.exists() and not storage.is_sqlite_config(config):
                backend = "files"
    if backend == "sqlite":
        if ref is not None:
            raise Refused("--ref records state on a git branch: not with --backend sqlite")
        wb, created, last = initcmd.init_sqlite(Path(path) if path is not None else Path.cwd(), no_git=no_git, db=db)
        return Bench(wb), created, last
    if no_git or db is not None:
        raise Refused(f"{'--no-git' if no_git else '--db'} needs --backend sqlite: the files backend keeps the "
                      "workbench in git")
    moved: list[str] | None = None
    if ref is None:  # a fresh clone of a repository whose state is on a branch of its own: take that up
        ref = _state_branch_to_take_up(path)
    joined = ref if ref is not None and join(path, ref) else None
    if ref is not None and joined is None:  # issue 15: take up the state branch that exists, or move to it
        from workbench.git.repo import find_worktree
        from workbench.ops.sync import move_to_ref

        root = find_worktree(Path(path) if path is not None else Path.cwd())
        if (root / ".workbench" / "config.yaml").exists():
            moved = move_to_ref(Workbench(root), ref)
    wb, created, last = initcmd.init(Path(path) if path is not None else Path.cwd(), ref)
    if moved:
        last.warnings.extend(moved)
    bench = Bench(wb)
    bench.joined = joined
    return bench, created, last


def _state_branch_to_take_up(path: str | Path | None) -> str | None:
    """`wb init` with no --ref where neither the work tree nor HEAD has a workbench, but this clone already
    knows a `wb-state` branch holding one (its own, or a remote's as `git clone` fetched it): "wb-state", which
    `wb init` then takes up as `wb init --ref wb-state` does — never a second, empty workbench beside it."""
    from workbench.git.repo import find_worktree

    root = find_worktree(Path(path) if path is not None else Path.cwd())
    if (root / ".workbench").exists():
        return None
    wb = Workbench(root)
    if wb.git.committed_file(".workbench/events.jsonl") is not None:
        return None  # the branch has one (a sparse checkout, a deletion): `wb init` says so
    for ref in ["refs/heads/wb-state", *(f"refs/remotes/{r}/wb-state" for r in wb.git.remotes())]:
        sha = wb.git.ref_sha(ref)
        if sha is not None and "events.jsonl" in wb.git.workbench_files_at(sha):
            return "wb-state"
    return None


def export_workbench(path: str | Path | None, target: str | Path) -> dict[str, Any]:
    """`wb export FILE`: the workbench found from `path`, whichever backend keeps it, dumped to `target`
    (ops/transfer.py): every event and call record as stored, and config.yaml."""
    from workbench.ops import transfer

    return transfer.export(opening.discover(Path(path) if path is not None else None), Path(target))


def import_workbench(path: str | Path | None, source: str | Path, backend: str = "files", *, no_git: bool = False,
                     db: str | None = None) -> dict[str, Any]:
    """`wb import FILE`: a new workbench in the git work tree of `path` (with `no_git`, `path` itself) from a
    dump `wb export` wrote, kept in `backend` ("files" or "sqlite")."""
    from workbench.ops import transfer

    return transfer.import_(Path(path) if path is not None else Path.cwd(), Path(source), backend, no_git=no_git,
                            db=db)
