"""`wb doctor` on a workbench kept in SQLite (store/sqlitedb.py): what can go wrong in one database.

Checked: the database file itself (`PRAGMA quick_check`; `integrity_check` with --full), the event log (each
line JSON holding its seq, no gap, the `prev` hash chain, each line still the one whose hash was recorded when
it was written, each event against its schema), the `type` column each event is indexed by, the snapshots
(present, valid against their schemas, state.md's frontmatter and decision log kept apart equal to state.md,
and equal to the fold of the whole log), the call records against their schema, config.yaml, and (as on files)
an agent's client wired to wb whose hooks were never heard.

Repaired with `fix`: what is derived from the log — the snapshots (folded again from the whole log, the one
fold, workbench.model.reducer) and the type index — in one database transaction under the write lock. The log
itself is never rewritten, as on files: it is the audit trail, and a damaged event has no other copy. Nothing
of the files doctor that is about files or git (a torn tail, temp files, git's drivers, uncommitted changes,
the pending journal, sealed segments) applies here, and nothing is claimed about it.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from workbench.errors import WorkbenchError
from workbench.model import reducer, schemas
from workbench.model.jsonl import line_hash
from workbench.ops.doctor import Finding, Report, add_agent_wiring_finding
from workbench.store import sqlitechecked


def examine_sqlite(wb: Any, fix: bool = False, *, full: bool = False) -> Report:
    """The findings of a SQLite workbench (`wb` a store/sqlitedb.SqliteWorkbench), repaired with `fix`."""
    report = Report()
    add = report.findings.append
    db = wb.storage
    problems = _integrity(db, full)
    if problems:
        finding = Finding("db_damaged", f"{db.path}: SQLite's {'integrity' if full else 'quick'} check fails: "
                                        f"{'; '.join(problems[:3])}", True)
        if fix:  # the indexes are derived from the tables: rebuilt, damage confined to them is gone
            try:
                with wb.lock():
                    db.conn.execute("REINDEX")
            except (sqlite3.DatabaseError, WorkbenchError):
                pass
            finding.fixed = not _integrity(db, True)
        if not finding.fixed:
            finding.fixable = not fix  # tried, and not enough: a person's turn
            finding.message += (" — not repaired (rebuilding the indexes did not clear it): " if fix else
                                " — `wb doctor --fix` rebuilds the indexes, which clears damage confined to "
                                "them; otherwise ") + ("restore the database from a backup, or `wb export` what "
                                                       "still reads into a fresh one")
        add(finding)
        if not finding.fixed:
            return report
    with db.reading():
        # from the last checkpoint a check on this machine reached, when the lines up to it are unchanged
        # (store/sqlitechecked.py; --full: from the first event): those lines are hashed, not parsed again
        misrecorded: list[int] = []
        start = None if full else sqlitechecked.checked_start(wb.paths, db, misrecorded)
        after, prev, base = (start.seq, line_hash(start.last), start.docs) if start is not None else (0, None, None)
        log_ok, events, retype = _check_log(db, add, after, prev)
        if start is not None and not start.columns_known:  # the columns' digests differ from the record's
            before = _retyped_before(db, after)
            if not before and not misrecorded:  # checked row by row, and right: the next doctor compares digests
                sqlitechecked.vouch_columns(wb.paths, db, start)
            retype = before + retype
        if misrecorded:
            log_ok = False
            add(_log_damaged(db, f"seq {misrecorded[0]}: the line is not the one written (its hash differs from the "
                                 "one recorded then)"))
        if log_ok:
            _check_events(events, add)
        _check_calls(db, add)
    _check_config(wb, add)
    if retype:
        finding = Finding("type_index", f"{len(retype)} event(s) indexed under a type their line does not hold "
                                        f"(seq {retype[0][1]}…): a query by type would miss them", True)
        if fix:
            with wb.lock():
                db.conn.executemany("UPDATE events SET type = ? WHERE seq = ?", retype)
            finding.fixed = True
        add(finding)
    if not log_ok:
        return report  # the snapshots cannot be checked against, nor rebuilt from, a damaged log
    add_agent_wiring_finding(wb, add)  # an agent's client wired to wb whose hooks were never heard
    snaps = _Snapshots(db)  # read and state.md parsed once, for both checks below (issue 33: a 4.7 MB decision log)
    older = _older_snapshots(db, snaps)
    if older:
        add(Finding("migration_needed", f"{older} older than this wb reads: run `wb migrate`", False))
        return report
    remembered = None
    if start is None and not any(f.code == "invalid" for f in report.findings):  # checked whole: say so
        # the columns are vouched for when every row's were right (or the index was rebuilt just now)
        base, events, remembered = _to_checkpoint(db, events, columns=not retype or fix)
    problems = _snapshot_problems(db, events, base, snaps)
    if remembered is not None and not problems:
        sqlitechecked.remember(wb.paths, db, *remembered)
    if problems:
        finding = Finding("snapshots_damaged", "the snapshots disagree with the event log: " + problems[0]
                          + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
                          + " — `wb doctor --fix` folds them again from the log", True)
        if fix:
            rebuild_snapshots(wb)
            finding.fixed = not _snapshot_problems(db, [e for _l, e in wb.log.iter_all()])
        add(finding)
    else:  # the write's own checks, run dry: healthy means the next write succeeds (issue 29)
        from workbench.ops.doctor import write_findings

        write_findings(wb, fix, add)
    return report


def _integrity(db: Any, full: bool) -> list[str]:
    """SQLite's own check of the file (empty: sound)."""
    try:
        rows = [str(r[0]) for r in db.conn.execute("PRAGMA integrity_check" if full else "PRAGMA quick_check")]
    except sqlite3.DatabaseError as err:
        rows = [str(err)]
    return [] if rows == ["ok"] else [part for row in rows for part in row.splitlines() if part.strip()
                                      and not part.startswith("*** in database")]


def _log_damaged(db: Any, problem: str) -> Finding:
    return Finding("log_damaged", f"{db.path.name}: {problem} — not repaired: the log is the audit trail and the "
                                  "event has no other copy; restore the database from a backup, or keep it for "
                                  "inspection", False)


def _to_checkpoint(db: Any, events: list[dict[str, Any]], *, columns: bool) -> tuple[
        reducer.Docs | None, list[dict[str, Any]], tuple[int, str, bytes, bytes, tuple[str, str] | None] | None]:
    """The whole log, checked: folded up to the newest checkpoint, and whether that checkpoint is the fold there
    (what store/sqlitechecked.py remembers so that the next check starts from it, with the digests of the hash
    and type columns when `columns`: the check found each row's right) — (the documents there, the events after
    it, what to remember), or (None, all the events, None)."""
    from workbench.store.sqlitechecked import reached_checkpoint

    kept = [seq for seq in db.checkpoints() if seq <= len(events)]
    if not kept:
        return None, events, None
    at = kept[-1]
    try:
        docs = reducer.fold(events[:at])
    except WorkbenchError:
        return None, events, None  # the snapshot check says where
    found = sqlitechecked.Columns()
    digest, _last = sqlitechecked.joined(db.conn, at, found)
    vouched = found.digests() if columns and not found.blob else None
    return docs, events[at:], reached_checkpoint(db, at, docs, digest.hexdigest(), vouched)


def _retyped_before(db: Any, upto: int) -> list[tuple[str, int]]:
    """The (type, seq) of rows up to `upto` whose type column is not their line's type: asked of SQLite's JSON
    functions (those lines are the ones a check read whole before, so each is an event's JSON)."""
    rows = db.conn.execute("SELECT json_extract(CAST(line AS TEXT), '$.type'), seq FROM events WHERE seq <= ? AND "
                           "type IS NOT json_extract(CAST(line AS TEXT), '$.type') ORDER BY seq", (upto,))
    return [(str(type_), int(seq)) for type_, seq in rows]


def _check_log(db: Any, add: Any, after: int = 0, prev: str | None = None,
               ) -> tuple[bool, list[dict[str, Any]], list[tuple[str, int]]]:
    """Every event row after seq `after` (the line before them hashing to `prev`): (log intact, their events,
    the (type, seq) of rows whose type column is wrong)."""
    events: list[dict[str, Any]] = []
    retype: list[tuple[str, int]] = []
    expect = after + 1
    for seq, type_, recorded, raw in db.conn.execute("SELECT seq, type, hash, line FROM events WHERE seq > ? "
                                                     "ORDER BY seq", (after,)):
        line = raw.encode() if isinstance(raw, str) else bytes(raw)
        problem = None
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            event = None
        if not isinstance(event, dict) or event.get("seq") != seq:
            problem = f"the event at seq {seq} is damaged (not the JSON of an event with seq {seq})"
        elif seq != expect:
            problem = f"seq {seq} follows seq {expect - 1}: a gap in the log"
        elif event.get("prev") != prev:
            problem = f"seq {seq}: hash chain broken (its prev is not the hash of seq {seq - 1})"
        elif line_hash(line) != recorded:
            problem = f"seq {seq}: the line is not the one written (its hash differs from the one recorded then)"
        if problem is not None:
            add(_log_damaged(db, problem))
            return False, events, retype
        assert isinstance(event, dict)
        if event.get("type") != type_:
            retype.append((str(event.get("type")), seq))
        events.append(event)
        prev = recorded
        expect += 1
    return True, events, retype


def _check_events(events: list[dict[str, Any]], add: Any) -> None:
    for event in events:
        for err in schemas.errors("event", event, f"events (seq {event['seq']})"):
            add(Finding("invalid", f"{err} — not repaired: the log is the audit trail", False))


def _check_calls(db: Any, add: Any) -> None:
    for number, line in enumerate(db.calls_bytes().splitlines(), start=1):
        try:
            call = json.loads(line)
        except ValueError:
            add(Finding("invalid", f"calls:{number}: damaged record (not JSON) — not repaired", False))
            continue
        for err in schemas.errors("call", call, f"calls:{number}"):
            add(Finding("invalid", f"{err} — not repaired", False))


def _check_config(wb: Any, add: Any) -> None:
    from workbench.store.config import load_config

    try:
        load_config(wb.paths.config)
    except WorkbenchError as err:
        add(Finding("invalid", f"{err} (fix config.yaml by hand)", False))


class _Snapshots:
    """The snapshots as stored, read once, and state.md as migrate/read.state_found finds it (None when it
    refuses it: each check then says why in its own words)."""

    def __init__(self, db: Any) -> None:
        from workbench.migrate.read import state_found

        with db.reading():  # one state of the database (and its large rows read as blobs: store/sqlitedb.py)
            self.state_raw, self.board_raw = db.read_snapshots()
        self.state: Any = None
        if self.state_raw is not None:
            try:
                self.state = state_found(self.state_raw, node=False)  # only wb writes it: no ruamel (issue 33)
            except WorkbenchError:
                pass


def _older_snapshots(db: Any, snaps: _Snapshots) -> str | None:
    """The snapshots a migration exists for (a schema_version below this wb's), named; None when current."""
    from workbench.migrate.read import board_found
    from workbench.migrate.registry import KINDS

    try:
        board = board_found(snaps.board_raw).version if snaps.board_raw is not None else None
    except WorkbenchError:
        board = None  # the snapshot check says what is wrong with it
    state = snaps.state.version if snaps.state is not None else None
    older = [f"{name} (schema_version {version})" for name, version, kind in
             (("state.md", state, "state"), ("board.json", board, "board"))
             if version is not None and version < KINDS[kind].current]
    return ", ".join(older) or None


def _snapshot_problems(db: Any, events: list[dict[str, Any]], base: reducer.Docs | None = None,
                       snaps: _Snapshots | None = None) -> list[str]:
    """What is wrong with the stored snapshots, against their schemas and the fold of `events` (onto `base`,
    the documents of the events before them, when they are not the whole log)."""
    from workbench.model import statefile
    from workbench.model.boardfile import parse_board
    from workbench.ops.replay import compare_docs

    state_raw, board_raw = (snaps.state_raw, snaps.board_raw) if snaps is not None else db.read_snapshots()
    missing = [name for name, raw in (("state.md", state_raw), ("board.json", board_raw)) if raw is None]
    if missing:
        return [f"{', '.join(missing)} missing from the database"]
    try:
        found = snaps.state if snaps is not None else None  # parsed already, as statefile.parse parses it
        parsed = statefile.StateFile(found.node, found.doc["frontmatter"], found.doc["body"]) if found is not None \
            else statefile.parse(state_raw)
        board = parse_board(board_raw)
    except WorkbenchError as err:
        return [str(err)]
    out = [str(e) for e in schemas.errors("state", parsed.data, "state.md")]
    out += [str(e) for e in schemas.errors("board", board, "board.json")]
    with db.reading():
        kept, body = db.read_snapshot("state.json"), db.read_snapshot("state.body")
    try:
        if kept is not None and json.loads(kept) != parsed.data:
            out.append("state.md: the frontmatter kept beside it (state.json) differs from state.md's")
    except ValueError:
        out.append("state.md: the frontmatter kept beside it (state.json) is damaged (not JSON)")
    if kept is not None and body is not None and body.decode("utf-8", "replace") != parsed.body:
        out.append("state.md: the decision log kept beside it (state.body) differs from state.md's")
    if kept is not None and body is None:
        out.append("state.md: the decision log kept beside it (state.body) is missing")
    if events or base is not None:
        try:
            folded = reducer.fold_more(base, events)
        except WorkbenchError as err:
            return [*out, str(err)]
        assert folded is not None
        out += compare_docs(folded, reducer.Docs(parsed.data, parsed.body, board))
    return out


def rebuild_snapshots(wb: Any) -> None:
    """Both snapshots (and state.md's parts kept apart) folded again from the whole log, in one database
    transaction under the write lock. No event: the log is the truth, and replaying it reproduces them."""
    from workbench.model import statefile
    from workbench.model.boardfile import encode_board

    with wb.lock():
        folded = reducer.fold((event for _line, event in wb.log.iter_all()))
        if folded is None:
            return
        schemas.check("state", folded.state, "state.md")
        schemas.check("board", folded.board, "board.json")
        wb.storage.put_snapshots(statefile.render(None, folded.state, folded.body), encode_board(folded.board),
                                 (folded.state, folded.body))
