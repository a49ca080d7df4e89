"""The SQLite backend's transaction (store/sqlitedb.py): the files backend's Transaction with its load,
write and commit replaced by one database transaction. A module of its own so that a reader (`wb status`)
imports no write path."""

from __future__ import annotations

from typing import Any

from workbench import faults
from workbench.errors import Refused
from workbench.git.repo import CommitOutcome
from workbench.model import schemas
from workbench.store import archive
from workbench.store.eventlog import chain
from workbench.store.transaction import Transaction


class SqliteTransaction(Transaction):
    """One mutation in one database transaction: BEGIN IMMEDIATE → load → emit → validate → insert the
    events, replace both snapshots, insert the call records → COMMIT. Nothing is written before the COMMIT but
    the new files a `create` makes (config.yaml), and `put_file`'s after it."""

    wb: Any  # store/sqlitedb.SqliteWorkbench (which imports this module when it opens a transaction)

    def __enter__(self) -> Transaction:
        if self.create:
            self.wb.paths.wb.mkdir(exist_ok=True)
        self._lock.acquire()
        try:
            self._begin()
        except BaseException:
            self._lock.release()
            raise
        return self

    def _begin(self) -> None:
        self._board_seen = None
        self._loaded = self.wb.load(create=self.create)
        self._body0 = self._loaded.docs.body  # the decision log as loaded: rewritten only when it changed
        self.events = []
        self.adopted = 0
        self.agent_board_changed = False
        self.board_changed = bool(self._loaded.rebuilt)
        self.deferred = None
        self.refused = []
        self._config_seen = False
        self.spool_size = 0
        if not self.create:
            self._fold_spool()
        self._begun = len(self.events)  # the caller's own events follow

    def _fold_spool(self) -> None:
        """The agent hooks' events, spooled beside the database (store/spool.py, as on files): folded into this
        transaction, and dropped from the spool once its COMMIT returned (`__exit__`). A kill between the two
        leaves lines the next fold finds in the log by their id and skips."""
        from workbench.store import spool

        spool.fold(self)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self.commit()
                if not self.dry:  # a dry run (`wb doctor`) commits nothing: the lock's release rolls back
                    self._settle_spool()
        finally:
            self._lock.release()  # rolls back whatever was not committed

    def _settle_spool(self) -> None:
        from workbench.store import spool

        spool.settle(self)

    def commit(self) -> None:
        from workbench.model import statefile
        from workbench.model.statefile import too_deep
        from workbench.store.atomic import write_workbench_file

        loaded = self._loaded
        assert loaded is not None
        docs = self.docs
        lock: Any = self._lock  # store/sqlitedb.SqliteLock: COMMIT is where the write is acknowledged
        if not self.events and not self.dry:
            self._write_new_files()
            if loaded.rebuilt:
                self.wb.storage.put_snapshots(loaded.state_raw, docs.encode_board())
            lock.commit()
            return
        if self.board_changed:  # finished tasks past the threshold move to a sealed segment, as on files
            archive.seal_due(self)
        try:
            chain(self.events, loaded.tail)
        except UnicodeEncodeError:
            raise Refused("refused: the change holds text that is not valid Unicode (a lone surrogate, such as "
                          "bytes that are not UTF-8 in a command-line argument)") from None
        for event in self.events:
            schemas.check("event", event, f"events (seq {event['seq']})")
        schemas.check("state", docs.state, "state.md")
        if too_deep(docs.state.get("session"), 56):
            from workbench.errors import SchemaRefused

            raise SchemaRefused("state.md", "session", "nested more than 56 levels deep (a step's args?)")
        if self.board_changed:
            from workbench.model.boardfile import check_board

            check_board(docs)
        for record in self.calls:
            schemas.check("call", record, "calls.jsonl")
        if self.dry:  # `wb doctor`: every check the write runs, and nothing written
            return
        faults.point("before_event_append")
        self._write_new_files()
        state_raw = statefile.render_fast(loaded.state_raw, loaded.file_state, docs.state, docs.body) \
            if loaded.state_node is None else None
        if state_raw is None:
            state_raw = statefile.render(loaded.state_node, docs.state, docs.body)
        # the board's archive segments: content-addressed files in .workbench/archive/, written before the COMMIT
        # of the board that references them (a kill between leaves a segment no board names, which the next
        # write that seals it writes again, byte for byte)
        archive.write_sealed(self.wb.paths, docs)
        from workbench.store.sqliteerrors import os_errors

        with os_errors(self.wb.storage.path):  # a full disk: one line (exit 1), rolled back, as on files
            self.wb.log.append(self.events, loaded.tail)
            self.wb.storage.put_snapshots(state_raw, docs.encode_board(), (docs.state, docs.body),
                                          body_changed=docs.body != self._body0)
            if self.calls:
                self.wb.storage.append_calls(self.calls)
        faults.point("sqlite_before_commit")
        lock.commit()  # durable once this returns (WAL, synchronous=FULL): the write is acknowledged
        faults.point("sqlite_after_commit")
        for rel, data in self.put_files.items():  # the files the events name (acceptance output, the handoff)
            write_workbench_file(self.wb.paths.wb, rel, data)
        self.outcome = CommitOutcome()
