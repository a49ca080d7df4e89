"""`wb validate`: every workbench file against its schema, the log's chain, and the snapshots against the log."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from workbench.errors import NotFound, Refused
from workbench.model import schemas
from workbench.model.jsonl import split_lines
from workbench.progress import tick
from workbench.store.workbench import Workbench


def validate_workbench(wb: Workbench, progress: Callable[[int, int], None] | None = None) -> list[str]:
    """Every workbench file against its schema, the log's chain, and the snapshots against the log.
    `progress(done, total)` is called every 5,000 events of the log (total = the last seq), as replay does."""
    from workbench.model import statefile
    from workbench.store.config import load_config

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
        parsed = attempt(lambda: statefile.parse(p.state.read_bytes()))
        if parsed is not None:
            state = parsed.data
            problems.extend(str(e) for e in schemas.iter_errors("state", state, "state.md"))
    else:
        problems.append("state.md: missing (restore it with `git checkout -- .workbench/state.md`)")
    board = None
    if p.board.exists():
        from workbench.model.boardfile import duplicate_ids
        from workbench.model.boardfile import parse_board as _parse_board

        board = attempt(lambda: _parse_board(p.board.read_bytes()))
        if board is not None:
            problems.extend(str(e) for e in schemas.iter_errors("board", board, "board.json"))
            problems.extend(f"board.json: tasks[{i}].id: duplicate id {tid}"
                            for i, tid in duplicate_ids(board.get("tasks")))
    else:
        problems.append("board.json: missing (restore it with `git checkout -- .workbench/board.json`)")

    def events() -> int:
        n = 0
        total = wb.log.tail().seq if progress else 0
        for _line, event in wb.log.iter_all():
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
            problems.append(f"state.md: last_event {state['last_event']} is beyond the log's last seq {tail.seq}")
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
    if not problems:  # every file is valid on its own: the events after the snapshots must also fold into them
        attempt(lambda: wb.load(detect_human=False))
    return problems
