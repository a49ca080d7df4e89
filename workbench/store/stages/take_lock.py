"""Stage `lock`: take the workbench lock (store/lock.py), and wait out a git command of the user's that has the
work tree half-way (a checkout or stash is not read)."""

from __future__ import annotations

from workbench.model import schemas

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from workbench.store.stagecontext import StageContext


def run(tx: StageContext) -> None:
    if tx.create:
        tx.wb.paths.wb.mkdir(exist_ok=True)
    else:
        warm()
    tx.lock.acquire()
    tx.held = True
    if not tx.create:
        tx.wb.git.wait_for_users_git()


def warm() -> None:
    """What a write imports and compiles on its first use, done before the lock rather than under it: while
    one writer holds the lock, every writer queued behind it waits, so its time there is paid many times over
    (the validators of the documents it checks, the state.md writer)."""
    from workbench.model import statefile  # noqa: F401 - imported for its side effect: loaded once per process

    for kind in ("event", "state", "board"):
        schemas.is_valid(kind, None)
