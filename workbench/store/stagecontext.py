"""What a stage of the write path may read and set of the transaction it runs in, and of the workbench under it:
two Protocols, below the stages (store/stages/) and the helpers they call, so that none of them names
`Transaction` or `Workbench` — the transaction runs the stages and the workbench opens transactions, and naming
them back would tie store/ into one import circle, if only for the type checker (issue 34). `Transaction`
(store/transaction.py) is a `StageContext` and `Workbench` (store/workbench.py) a `StageWorkbench`, checked by
mypy where each is passed as one. A plain attribute is one a stage sets; a property, one it only reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from workbench.git.repo import CommitOutcome, GitRepo
    from workbench.model.layout import Paths
    from workbench.model.reducer import Docs
    from workbench.store.eventlog import Appended, EventLog, Tail
    from workbench.store.loaded import Loaded
    from workbench.store.lock import WorkbenchLock
    from workbench.store.pending import Pending

__all__ = ["StageContext", "StageWorkbench"]


class StageWorkbench(Protocol):
    """The parts of `Workbench` the write path uses: its files, config, log, repository and pending journal."""

    @property
    def paths(self) -> Paths: ...
    @property
    def config(self) -> dict[str, Any]: ...
    @property
    def log(self) -> EventLog: ...
    @property
    def git(self) -> GitRepo: ...
    @property
    def pending(self) -> Pending: ...

    def lock(self) -> WorkbenchLock: ...
    def load(self, *, detect_human: bool = True, need_node: bool = False, need_body: bool = True,
             create: bool = False, thorough: bool = False) -> Loaded: ...
    def deferred(self) -> str | None: ...
    def parse_state(self, raw: bytes) -> tuple[Any, dict[str, Any], str]: ...
    def keep_state_node(self, raw: bytes, node: Any, data: dict[str, Any], body: str) -> None: ...
    def keep_board(self, raw: bytes | None, docs: Docs | None) -> None: ...


class StageContext(Protocol):
    """The transaction as its stages see it (store/pipeline.py runs them; `run(tx)` in each of store/stages/)."""

    # set by the stages
    events: list[dict[str, Any]]
    adopted: int
    revived: int
    begun: int
    loaded: Loaded
    board_seen: bytes | None
    body0: str
    board_changed: bool
    agent_board_changed: bool
    deferred: str | None
    refused: list[dict[str, Any]]
    aside: str | None
    spool_size: int
    config_seen: bool
    config_edit: dict[str, Any] | None
    edit_warnings: list[str]
    alone: bool
    recorded_first: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    new_files: dict[str, bytes]
    put_files: dict[str, bytes]
    summary: str | None
    git_commit: bool
    held: bool
    kept: str | None
    left: bool
    appended: Appended | None
    outcome: CommitOutcome | None

    # read by the stages
    @property
    def wb(self) -> StageWorkbench: ...
    @property
    def lock(self) -> WorkbenchLock: ...
    @property
    def actor(self) -> str: ...
    @property
    def create(self) -> bool: ...
    @property
    def dry(self) -> bool: ...
    @property
    def rebuild(self) -> bool: ...
    @property
    def secrets(self) -> list[str]: ...
    @property
    def failed(self) -> BaseException | None: ...
    @property
    def on_os_error(self) -> list[Callable[[], None]]: ...
    @property
    def docs(self) -> Docs: ...
    @property
    def tail(self) -> Tail: ...

    def begin(self) -> None: ...
    def commit(self) -> None: ...
    def emit(self, type_: str, payload: dict[str, Any], *, actor: str | None = None,
             session: str | None = None, ts: str | None = None, via: str | None = None) -> dict[str, Any]: ...
    def log_ends_with_ours(self) -> bool: ...
    def default_summary(self) -> str: ...
