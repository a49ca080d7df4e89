"""`wb migrate` on a workbench kept in SQLite (store/sqlitedb.py): the snapshots in the database, and
config.yaml beside it, brought to the formats this wb reads by the same registry of migrations
(migrate/registry.py) and recorded by the same `migration.apply` event as on files.

One database transaction, under the write lock (BEGIN IMMEDIATE): plan again under the lock → config.yaml
written atomically (a file; only when it is older) → the events inserted, both snapshots replaced → COMMIT.
A kill before the COMMIT leaves the database as it was (config.yaml, if it was written, already reads at the
new version, and the next `wb migrate` migrates the rest); after it, all of it is there. So no intent file:
SQLite's journal is the one. The event log itself is never rewritten: this backend has only ever written
events and call records of the current version, and one older than that is refused, naming it.
"""

from __future__ import annotations

from typing import Any

from workbench import faults
from workbench.errors import NotFound, Refused
from workbench.migrate.apply import (
    KINDS,
    Context,
    Report,
    body_change,
    field_changes,
    file_entry,
    migration_payload,
    pair_moves,
    render_config,
    upgrade,
)
from workbench.migrate.read import board_found, log_found, read_config, refuse_unknown, state_found
from workbench.model import ids, reducer, schemas
from workbench.model.boardfile import encode_board
from workbench.model.redaction import redact, secret_values
from workbench.store.eventlog import chain


class _Plan:
    def __init__(self, versions: dict[str, int | None]) -> None:
        self.versions = versions
        self.files: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.config: bytes | None = None
        self.state = b""
        self.board = b""
        self.docs: reducer.Docs | None = None
        self.tail: Any = None


def _edges(db: Any, table: str) -> tuple[bytes, bytes] | None:
    key = "seq" if table == "events" else "n"
    first = db.conn.execute(f"SELECT line FROM {table} ORDER BY {key} LIMIT 1").fetchone()  # noqa: S608
    last = db.conn.execute(f"SELECT line FROM {table} ORDER BY {key} DESC LIMIT 1").fetchone()  # noqa: S608
    return (_blob(first[0]), _blob(last[0])) if first and last else None


def _blob(value: Any) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def plan(wb: Any, now: str | None) -> _Plan:
    """What the migration writes, computed from one read of the database and validated; nothing written."""
    from workbench.model import statefile

    db = wb.storage
    state_raw, board_raw = db.read_snapshots()
    if state_raw is None or board_raw is None:
        raise NotFound(f"the workbench's database {db.path} holds no snapshots: run `wb doctor --fix`, which "
                       "folds them from the log")
    found = {"config": read_config(wb.paths.config), "state": state_found(state_raw),
             "board": board_found(board_raw), "events": log_found(_edges(db, "events"), "events.jsonl"),
             "calls": log_found(_edges(db, "calls"), "calls.jsonl")}
    refuse_unknown(found)
    result = _Plan({KINDS[n].file: f.version for n, f in found.items()})
    stale = [n for n, f in found.items() if f.version is not None and f.version < KINDS[n].current]
    if not stale:
        return result
    for name in ("events", "calls"):
        if name in stale:
            raise Refused(f"{KINDS[name].file}: schema_version {found[name].version} in {db.path.name}, older than "
                          f"this wb writes ({KINDS[name].current}); a SQLite workbench's log is never rewritten. "
                          "Nothing was changed")
    ctx = Context(now or ids.utc_now())
    st, bd = found["state"], found["board"]
    assert st.version is not None and bd.version is not None
    fm = st.doc["frontmatter"]
    state_doc = upgrade("state", st.doc, st.version, ctx)
    docs = reducer.Docs(state_doc["frontmatter"], state_doc["body"], upgrade("board", bd.doc, bd.version, ctx))
    tail = wb.log.tail()
    last, board_from = fm.get("last_event"), bd.doc.get("last_event")
    if isinstance(last, int) and not isinstance(last, bool) and last < tail.seq:
        board_from = board_from if isinstance(board_from, int) and not isinstance(board_from, bool) else 0
        for event in wb.log.read_after(last):
            reducer.apply(docs, event, board_from=board_from)
    config = upgrade("config", found["config"].doc, found["config"].version or 0, ctx) if "config" in stale else None
    config_doc = config or found["config"].doc or {}
    secrets = secret_values(config_doc if isinstance(config_doc, dict) else {})
    event = {"schema_version": 1, "id": ids.new_id(), "ts": ctx.now, "type": "migration.apply", "actor": "wb",
             "session": None, "payload": redact(migration_payload(found, stale, docs), secrets)}
    chain([event], tail)
    order = list(docs.state)
    reducer.apply(docs, event)  # exactly what a replay does, so the snapshots are the replay's result
    docs.state = {**{k: docs.state[k] for k in order if k in docs.state}, **docs.state}
    if config is not None:
        schemas.check("config", config, "config.yaml")
        result.config = render_config(found["config"].raw or b"", config)
        result.files.append(file_entry("config.yaml", found["config"].version,
                                       field_changes(found["config"].doc, config)))
    schemas.check("state", docs.state, "state.md")
    schemas.check("board", docs.board, "board.json")
    schemas.check("event", event, f"events (seq {event['seq']})")
    result.state = statefile.render(st.node if "schema_version" in fm else None, docs.state, docs.body)
    again = statefile.parse(result.state)
    if again.data != docs.state or again.body != docs.body:
        raise Refused("state.md: the migrated snapshot does not read back as the migrated document (a wb bug); "
                      "nothing was changed")
    result.files.append(file_entry("state.md", st.version,
                                   pair_moves(field_changes(fm, docs.state)) + body_change(st.doc["body"], docs.body)))
    result.board = encode_board(docs.board)
    if result.board != bd.raw:
        result.files.append(file_entry("board.json", bd.version, field_changes(bd.doc, docs.board)))
    result.files.append(file_entry("events.jsonl", found["events"].version,
                                   [{"op": "append", "path": "events", "new": [event["type"]]}]))
    result.events, result.docs, result.tail = [event], docs, tail
    return result


def migrate_sqlite(wb: Any, *, dry_run: bool = False, now: str | None = None) -> Report:
    """`wb migrate [--dry-run]` on SQLite. Idempotent: a current workbench is left as it is."""
    from workbench.store.atomic import write_workbench_file

    with wb.storage.reading():
        planned = plan(wb, now)  # a refusal (a newer version) comes before the lock: nothing is touched
    if dry_run or not planned.events:
        return _report(wb, planned, dry_run=dry_run)
    lock = wb.lock()
    lock.acquire()
    try:
        planned = plan(wb, now)  # again, under the lock: another wb may have written meanwhile
        if planned.events:
            if planned.config is not None:
                write_workbench_file(wb.paths.wb, "config.yaml", planned.config)
            wb.log.append(planned.events, planned.tail)
            assert planned.docs is not None
            wb.storage.put_snapshots(planned.state, planned.board, (planned.docs.state, planned.docs.body))
            faults.point("sqlite_migrate_before_commit")
            lock.commit()
    finally:
        lock.release()
    return _report(wb, planned)


def _report(wb: Any, planned: _Plan, *, dry_run: bool = False) -> Report:
    return Report(str(wb.root), planned.versions, planned.files,
                  [{"seq": e["seq"], "type": e["type"]} for e in planned.events], dry_run=dry_run)

