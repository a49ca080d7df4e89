"""`diff` of a path between two revisions, by meaning (docs/diff.md)."""

from __future__ import annotations

from pathlib import Path

from workbench.errors import NotFound, UsageError, WorkbenchError
from workbench.store import opening

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def diff(path: str | Path | None = None, rev_a: str | None = None, rev_b: str | None = None, *,
         all_fields: bool = False) -> dict[str, Any]:
    """`wb diff [REV [REV]]` in the git work tree containing `path`, as the dict `wb diff --format json` prints.
    No revision: HEAD (or the branch config.yaml `git.ref` records state on) against the working tree; one:
    it against the working tree (`A..B` and `A...B` as in git); two: `rev_a` against `rev_b`. `all_fields`
    keeps the fields every write changes (updated_at, last_event). A revision may be a point of the event log
    (`@SEQ`, `@-N`; docs/diff.md), the only kind a workbench kept in SQLite takes (with `now`; no revision is
    the start of its latest session against now). A module-level function as well as a verb: like `git diff`,
    it needs no workbench for git revisions (a side without one is an empty workbench)."""
    from workbench.git.repo import find_worktree
    from workbench.review.diff import diff as compare_revs
    from workbench.review.logpoints import LogSides
    from workbench.store import backend

    if rev_a is None and rev_b is not None:
        raise UsageError("a second revision needs a first")
    start = Path(path) if path is not None else Path.cwd()
    try:
        root = find_worktree(start)
    except NotFound:  # outside any repository: a workbench kept in SQLite without git, or none
        found = backend.find_nogit(start)
        if found is None:
            raise
        root = found
    sqlite = backend.is_sqlite_config(root / ".workbench" / "config.yaml")  # its history is its event log
    points = LogSides(root, lambda: opening.discover(root), sqlite)
    revs = [r for r in (rev_a, rev_b) if r is not None]
    return compare_revs(root, revs, all_fields=all_fields, default_base="HEAD" if revs else default_base(root),
                        points=points)


def default_base(root: Path) -> str:
    """HEAD, or the branch config.yaml's git.ref records state on (then HEAD's tree has no workbench)."""
    config = root / ".workbench" / "config.yaml"
    if not config.exists():
        return "HEAD"
    from workbench.store.config import load_config

    try:
        ref = load_config(config)["git"].get("ref")
    except WorkbenchError:
        return "HEAD"
    return str(ref) if ref else "HEAD"
