"""Sides of a `wb diff` that name a point in the event log rather than a git revision: `@SEQ` is the workbench
as the log's first SEQ events fold it (`@0`: before the first event; `@-N`: N events before the last). They
work on both backends — on files the log (sealed segments and events.jsonl) is folded as `wb replay` folds it —
and they are the only revisions a SQLite workbench has: nothing of it is in git (docs/storage.md).

A log point's side holds what the files of that moment would hold: state.md and board.json rendered from the
fold (workbench.model.reducer, the one fold), the event lines up to SEQ, the call records made by then (those
stamped no later than event SEQ), and config.yaml as it is now (the log does not record config.yaml): a
log point compares no settings.

On SQLite, the side "now" is the database's snapshots, events and calls; with no revision the diff is
`@K` against now, where K is the last event before the latest session began (the latest event that names a
session; @0 when no event names one): what the agent's latest session changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import takewhile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import NotFound, UsageError
from workbench.model.layout import WB_DIR
from workbench.review.sides import FILES, Side, read_revs, read_worktree, resolve

if TYPE_CHECKING:
    from workbench.store.workbench import Workbench

POINT = re.compile(r"^@(-?\d+)$")
NOW = "now"


def is_point(rev: str) -> bool:
    return POINT.match(rev) is not None


class LogSides:
    """The log points of one workbench, opened when first needed (`open_wb`): on files, a diff of two git
    revisions needs no workbench at all."""

    def __init__(self, root: Path, open_wb: Callable[[], Workbench], sqlite: bool) -> None:
        self.root = root
        self.open_wb = open_wb
        self.sqlite = sqlite
        self._wb: Workbench | None = None

    @property
    def wb(self) -> Workbench:
        if self._wb is None:
            self._wb = self.open_wb()
        return self._wb

    def _storage(self) -> Any:
        """The SQLite workbench's database (store/sqlitedb.SqliteStorage)."""
        return getattr(self.wb, "storage")  # noqa: B009 - only a SqliteWorkbench has one

    def _config(self) -> bytes | None:
        try:
            return (self.root / WB_DIR / "config.yaml").read_bytes()
        except OSError:
            return None

    def point(self, rev: str) -> Side:
        """`@SEQ` (or `@-N`) as a side: the fold of the log's events up to that seq."""
        from workbench.model import reducer, statefile
        from workbench.model.boardfile import encode_board

        match = POINT.match(rev)
        assert match is not None
        wanted = int(match.group(1))
        last = self.wb.log.tail().seq
        seq = last + wanted if match.group(1).startswith("-") else wanted
        if not 0 <= seq <= last:
            if not last:
                raise NotFound(f"'{rev}': the event log is empty; @0 is its only point")
            raise NotFound(f"'{rev}': the event log holds seq 1 to {last}; name a point from @0 to @{last} "
                           "(or @-N: N events before the last)")
        if self.sqlite:
            return self._sqlite_point(rev, seq, last)
        lines: list[bytes] = []
        last_ts = [""]  # the time of the last event read

        def upto() -> Iterator[dict[str, Any]]:  # folded as read: the events are never all held (issue 33)
            if not seq:
                return
            for line, event in self.wb.log.iter_all():
                lines.append(line)
                last_ts[0] = str(event["ts"])
                yield event
                if event["seq"] >= seq:
                    return

        files: dict[str, bytes | None] = {name: None for name in FILES}
        files["config.yaml"] = self._config()  # not in the log: as it is now, on every side
        docs = reducer.fold(upto())
        if lines:
            assert docs is not None
            files["state.md"] = statefile.render(None, docs.state, docs.body)
            files["board.json"] = encode_board(docs.board)
            lines.append(b"")
            files["events.jsonl"] = b"\n".join(lines)
            del lines[:]
            files["calls.jsonl"] = self._calls_until(last_ts[0] if seq < last else None)
        return Side(rev, None, files)

    def _sqlite_point(self, rev: str, seq: int, last: int) -> Side:
        """`point` on SQLite: folded from the nearest checkpoint at or before `seq` (the snapshots as a write left
        them at that seq, store/sqlitedb.py) when there is one, else from the first event; its event lines are not
        read here but by the diff, only those between the two sides (`Side.log_range`)."""
        from workbench.model import reducer, statefile
        from workbench.model.boardfile import encode_board, parse_board

        files: dict[str, bytes | None] = {name: None for name in FILES}
        files["config.yaml"] = self._config()  # not in the log: as it is now, on every side
        side = Side(rev, None, files, seq=seq, log_range=self._log_range)
        if not seq:
            return side
        storage = self._storage()
        log: Any = self.wb.log  # store/sqlitedb.SqliteLog
        with storage.reading():
            near = storage.read_checkpoint(seq)
            docs = None
            if near is not None:
                at, state_raw, board_raw = near
                near = None
                state, body = statefile.read_plain(state_raw)
                del state_raw  # the decision log is held as text from here: not its bytes too (issue 33: memory)
                # a checkpoint of another schema version than this wb writes is not used (a migration came since)
                if state.get("schema_version") == reducer.STATE_VERSION:
                    docs = reducer.fold_more(reducer.Docs(state, body, parse_board(board_raw)),
                                             log.read_between(at, seq))
            if docs is None:
                docs = reducer.fold(takewhile(lambda event: event["seq"] <= seq,
                                              (event for _line, event in log.iter_all())))
            last_ts = str(log.read_between(seq - 1, seq)[0]["ts"])
        assert docs is not None
        files["state.md"] = statefile.render(None, docs.state, docs.body)
        files["board.json"] = encode_board(docs.board)
        files["calls.jsonl"] = self._calls_until(last_ts if seq < last else None)
        return side

    def _log_range(self, shared: int, upto: int) -> bytes:
        """A SQLite side's events.jsonl from the point both sides share (`shared`, the older side's seq) up to
        its own seq `upto`: the lines from the last one at or before `shared` that ends a write on — the line
        that says where the older side stands; a write's lines before its last carry `more`, and a side that
        ends inside a write ends where that write began, as on files (review/parse.complete_lines). In front,
        the same on both sides, go the earlier `session.start` and `plan.commit` lines: the story of a session
        begun before the older side looks its goal and steps up there (review/story.py)."""
        log: Any = self.wb.log  # store/sqlitedb.SqliteLog
        start = log.write_start(shared)
        return bytes(log.bytes_of_types(("session.start", "plan.commit"), start) + log.bytes_between(start, upto))

    def _calls_until(self, ts: str | None) -> bytes:
        """The call records stamped no later than `ts` (None: all of them)."""
        raw = self._storage().calls_bytes() if self.sqlite else _read(self.wb.paths.calls)
        if ts is None:
            return raw
        kept = []
        for line in raw.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                kept.append(line)  # shown as damaged, as on the files' side
                continue
            if not isinstance(record, dict) or str(record.get("ts", "")) <= ts:
                kept.append(line)
        return b"".join(line + b"\n" for line in kept)

    def now(self) -> Side:
        """The workbench as it is: the working tree (files) or the database (SQLite)."""
        if not self.sqlite:
            return read_worktree(self.root)
        storage = self._storage()
        with storage.reading():
            state, board = storage.read_snapshots()
            files = {"state.md": state, "board.json": board, "events.jsonl": None,
                     "calls.jsonl": storage.calls_bytes(), "config.yaml": self._config()}
            seq = self.wb.log.tail().seq
        return Side(NOW, None, files, seq=seq, log_range=self._log_range)

    def session_start(self) -> Side:
        """The default old side on SQLite: the log just before the latest session's first event."""
        session = None
        start = 0
        for _line, event in self.wb.log.iter_backwards():
            if session is None and event.get("session"):
                session = event["session"]
            if session is not None:
                if event.get("session") == session:
                    start = event["seq"] - 1
                elif event.get("session"):
                    break  # an earlier session: the latest one began after it
        side = self.point(f"@{start}")
        side.label = f"@{start} (the start of session {session})" if session else "@0 (before the first event)"
        return side

    def side(self, rev: str, end: bool = False) -> Side:
        """One revision: a log point, or (files only) a git revision; an empty end of a range means HEAD on
        files and now on SQLite."""
        if not rev:
            return self.now() if self.sqlite else read_revs(self.root, [("HEAD", False)])[0]
        if is_point(rev):
            return self.point(rev)
        if rev == NOW and self.sqlite:
            return self.now()
        if self.sqlite:
            back = re.fullmatch(r"HEAD(?:~(\d+)|(\^+))", rev)
            n = (int(back.group(1)) if back.group(1) else len(back.group(2))) if back else 1
            raise UsageError(f"'{rev}': use `wb diff @-{n}` (the workbench {n} event{'s' if n != 1 else ''} back): "
                             "a workbench kept in SQLite has no git history of its state, only its event log "
                             "(also @SEQ, after event SEQ, and now; docs/diff.md)")
        return read_revs(self.root, [(rev, False)])[0]


def resolve_sides(root: Path, revs: list[str], default_base: str, points: LogSides | None) -> tuple[Side, Side]:
    """`sides.resolve`, with log points (`@SEQ`) on either side and the SQLite backend's sides."""
    if points is None or (not points.sqlite and not any(is_point(part) for rev in revs
                                                         for part in re.split(r"\.\.\.?", rev))):
        return resolve(root, revs, default_base)
    if len(revs) > 2:
        raise UsageError("wb diff takes at most two revisions")
    if not revs:
        return points.session_start(), points.now()
    if len(revs) == 1 and "..." in revs[0]:
        raise UsageError(f"'{revs[0]}': A...B (from the merge base) takes git revisions, not log points; "
                         "write @A..@B")
    if len(revs) == 1 and ".." in revs[0]:
        a, _, b = revs[0].partition("..")
        return points.side(a), points.side(b)
    if len(revs) == 1:
        return points.side(revs[0]), points.now()
    if any(".." in r for r in revs):
        raise UsageError("a range (A..B or A...B) takes no second revision")
    return points.side(revs[0]), points.side(revs[1])


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
