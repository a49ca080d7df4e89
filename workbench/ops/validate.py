"""`wb validate`: every workbench file against its schema, the log's chain, and the snapshots against the log."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from workbench.errors import NotFound, Refused
from workbench.model import schemas
from workbench.model.jsonl import encode, split_lines
from workbench.progress import advance, tick
from workbench.store.logcheck import SealedCheck
from workbench.store.logprefix import committed_lines_changed
from workbench.store.workbench import Workbench


def validate_workbench(wb: Workbench, progress: Callable[[int, int], None] | None = None, *,
                       full: bool = False) -> list[str]:
    """Every workbench file against its schema, the log's chain, and the snapshots against the log.
    `progress(done, total)` is called every 5,000 events of the log (total = the last seq), as replay does.
    A sealed segment checked before on this machine is trusted by its digest, and the sealed log's fold is
    taken from then (workbench/store/logcheck.py); `full` checks and replays everything again."""
    from workbench.store.config import load_config

    if getattr(wb, "storage", None) is not None:  # the SQLite backend (store/sqlitedb.py)

        from workbench.store.sqlitechecked import Folded

        folded = Folded()
        return sqlite_problems(wb, folded, full=full) or snapshot_disagreements(wb, folded=folded)
    problems: list[str] = []
    p = wb.paths

    def attempt(fn: Any) -> Any:
        try:
            return fn()
        except Refused as err:
            problems.append(str(err))
        except NotFound as err:
            problems.append(str(err))
        return None

    attempt(lambda: load_config(p.config))
    state = None
    if p.state.exists():
        # parsed as the load below parses it, which then reads it from this parse (no cache of wb's: a first run)
        parsed = attempt(lambda: wb.parse_state(p.state.read_bytes()))
        if parsed is not None:
            state = parsed[1]
            if not schemas.is_valid("state", state):  # the compiled check first: jsonschema only to explain
                problems.extend(str(e) for e in schemas.iter_errors("state", state, "state.md"))
    else:
        problems.append("state.md: missing (restore it with `git checkout -- .workbench/state.md`)")
    board = None
    if p.board.exists():
        from workbench.model.boardfile import duplicate_ids, read_board_bytes
        from workbench.model.boardfile import parse_board as _parse_board

        board = attempt(lambda: _parse_board(read_board_bytes(p.board)))
        if board is not None:
            if not schemas.is_valid("board", board):
                problems.extend(str(e) for e in schemas.iter_errors("board", board, "board.json"))
            problems.extend(f"board.json: tasks[{i}].id: duplicate id {tid}"
                            for i, tid in duplicate_ids(board.get("tasks")))
            problems.extend(archive_problems(wb, board))
    else:
        problems.append("board.json: missing (restore it with `git checkout -- .workbench/board.json`)")

    check = SealedCheck(wb.log, p, full=full)

    def events() -> int | None:
        # sealed segments: each checked in full once, then trusted by the digest of its bytes (--full: all)
        total = wb.log.tail().seq if progress else 0
        if not check.run(lambda h: advance(progress, h.first - 1, h.last, total)):
            problems.extend(check.problems)
            return None
        problems.extend(check.orphans_missing())
        n = check.res.chain[-1].last if check.res.chain else 0
        for _line, event in wb.log.iter_unsealed(check.res):
            tick(progress, n, total)
            n += 1
            if not schemas.is_valid("event", event):
                where = f"events.jsonl (seq {event['seq']})"
                problems.extend(str(e) for e in schemas.iter_errors("event", event, where))
        return n

    count = attempt(events)
    tail = wb.log.tail() if count is not None else None
    if tail is not None and tail.torn:
        problems.append(f"events.jsonl: a torn last line ({tail.torn} bytes, an interrupted write); "
                        "`wb doctor --fix` removes it")
    if tail is not None and state is not None and isinstance(state.get("last_event"), int) \
            and state["last_event"] > tail.seq:
        # the pending journal's acknowledged events count (a `git stash` between a write's log append and its
        # commit took the log's lines, not the snapshots written after it): the next write lands them
        ahead = wb.pending_events(tail)
        last = ahead[-1]["seq"] if ahead else tail.seq
        if state["last_event"] > last:
            problems.append(f"state.md: last_event {state['last_event']} is beyond the log's last seq {last}"
                            + (" (the pending journal's events included)" if ahead else "")
                            + "; `wb doctor --fix` rebuilds the snapshots from the log, keeping these aside")
    if p.calls.exists():
        lines, torn = split_lines(p.calls.read_bytes())
        # a torn tail is checked like any line: the next append lands after it, in the middle of the journal
        for number, line in enumerate([*lines, torn] if torn else lines, start=1):
            if not line.strip():
                continue
            try:
                call = json.loads(line)
            except (ValueError, RecursionError):
                problems.append(f"calls.jsonl:{number}: damaged line (not JSON)")
                continue
            problems.extend(str(e) for e in schemas.iter_errors("call", call, f"calls.jsonl:{number}"))
    problems.extend(handoff_problems(wb))
    if count is not None:
        # what the pending journal lands back counts, as the next write counts it (store/logprefix.check): a
        # `git stash` that took a line wb committed from the work tree is the next write's to put back
        ahead = wb.pending_events(tail) if tail is not None else []
        edited = committed_lines_changed(wb, b"".join(encode(e) + b"\n" for e in ahead))
        if edited:
            problems.append(edited)
    if not problems:  # every file is valid on its own: the events after the snapshots must also fold into them
        attempt(lambda: wb.load(detect_human=False))
    if not problems:  # and the whole log must rebuild the snapshots: what `wb replay --verify` finds, this finds
        problems.extend(attempt(lambda: snapshot_disagreements(wb, None if full else check)) or [])
    return problems


def sqlite_problems(wb: Workbench, folded: Any = None, *, full: bool = False) -> list[str]:
    """The SQLite backend's checks (store/sqlitechecked.validate: config.yaml, the events, the snapshots and the
    call records in the database), and what it keeps as files on both backends: the board's archive segments and
    the handoff packet."""
    from workbench.model.boardfile import parse_board
    from workbench.store import sqlitechecked

    problems = sqlitechecked.validate(wb, folded, full=full)  # type: ignore[arg-type]
    with wb.storage.reading():  # type: ignore[attr-defined]
        board_raw = wb.storage.read_snapshot("board.json")  # type: ignore[attr-defined]  # not state.md: MBs
    if board_raw is not None and not problems:
        problems.extend(archive_problems(wb, parse_board(board_raw)))
    return problems + handoff_problems(wb)


def handoff_problems(wb: Workbench) -> list[str]:
    """The handoff packet (issue 16): handoff.json against its schema, when there is one."""
    handoff = wb.paths.wb / "handoff.json"
    if not handoff.exists():
        return []
    try:
        packet = json.loads(handoff.read_bytes())
    except (ValueError, RecursionError):
        return ["handoff.json: not JSON (`wb handoff` writes it again)"]
    return [str(e) for e in schemas.iter_errors("handoff", packet, "handoff.json")]


def archive_problems(wb: Workbench, board: dict[str, Any]) -> list[str]:
    """The board's archive segments (issue 20): each one board.json references is there with the digest it
    records, and holds valid finished tasks whose ids no other segment and not the board has
    (store/archive.check_archive)."""
    from workbench.model.boardfile import has_task_list
    from workbench.store.archive import check_archive

    return check_archive(wb.paths, board) if has_task_list(board) else []


DISAGREE = "the snapshots disagree with the event log; `wb doctor --fix` rebuilds them from it"


def snapshot_disagreements(wb: Workbench, check: SealedCheck | None = None, *, folded: Any = None) -> list[str]:
    """Where state.md and board.json differ from what the whole log rebuilds (a hand edit not yet recorded is
    not one: the next write records it). Each line ends with DISAGREE. With `check` (run already), the sealed
    segments' fold is the one recorded on this machine, and only events.jsonl is replayed; with `folded`
    (store/sqlitechecked.Folded), the fold SQLite's validate made as it read the log."""
    from workbench.ops.replay import compare, replay, replay_sealed_once

    if folded is not None:
        if folded.error is not None:
            raise folded.error  # as the replay would, at the same event
        report = compare(wb, folded.docs, folded.events, 0.0)
    else:
        report = replay(wb) if check is None else replay_sealed_once(wb, check)
    return [f"{m} ({DISAGREE})" for m in report.mismatches
            if "by hand not yet recorded" not in m and "empty log" not in m]
