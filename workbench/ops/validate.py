"""`wb validate`: every workbench file against its schema, the log's chain, and the snapshots against the log."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from workbench.errors import GitError, NotFound, Refused, WorkbenchError
from workbench.model import schemas
from workbench.model.jsonl import split_lines
from workbench.model.layout import WB_DIR
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
        from workbench.model.boardfile import duplicate_ids, read_board_bytes
        from workbench.model.boardfile import parse_board as _parse_board

        board = attempt(lambda: _parse_board(read_board_bytes(p.board)))
        if board is not None:
            problems.extend(str(e) for e in schemas.iter_errors("board", board, "board.json"))
            problems.extend(f"board.json: tasks[{i}].id: duplicate id {tid}"
                            for i, tid in duplicate_ids(board.get("tasks")))
            problems.extend(archive_problems(wb, board))
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
    # the handoff packet (issue 16): handoff.json against its schema, when there is one
    handoff = p.wb / "handoff.json"
    if handoff.exists():
        try:
            packet = json.loads(handoff.read_bytes())
        except (ValueError, RecursionError):
            problems.append("handoff.json: not JSON (`wb handoff` writes it again)")
        else:
            problems.extend(str(e) for e in schemas.iter_errors("handoff", packet, "handoff.json"))
    if count is not None:
        edited = committed_lines_changed(wb)
        if edited:
            problems.append(edited)
    if not problems:  # every file is valid on its own: the events after the snapshots must also fold into them
        attempt(lambda: wb.load(detect_human=False))
    if not problems:  # and the whole log must rebuild the snapshots: what `wb replay --verify` finds, this finds
        problems.extend(attempt(lambda: snapshot_disagreements(wb)) or [])
    return problems


def archive_problems(wb: Workbench, board: dict[str, Any]) -> list[str]:
    """The board's archive segments (issue 20): each one board.json references is there with the digest it
    records, and holds valid finished tasks whose ids no other segment and not the board has
    (store/archive.check_archive)."""
    from workbench.model.boardfile import has_task_list
    from workbench.store.archive import check_archive

    return check_archive(wb.paths, board) if has_task_list(board) else []


DISAGREE = "the snapshots disagree with the event log; `wb doctor --fix` rebuilds them from it"


def snapshot_disagreements(wb: Workbench) -> list[str]:
    """Where state.md and board.json differ from what the whole log rebuilds (a hand edit not yet recorded is
    not one: the next write records it). Each line ends with DISAGREE."""
    from workbench.ops.replay import replay

    report = replay(wb)
    return [f"{m} ({DISAGREE})" for m in report.mismatches
            if "by hand not yet recorded" not in m and "empty log" not in m]


def committed_lines_changed(wb: Workbench) -> str | None:
    """The log is only ever appended to, so the last commit that recorded it anchors its chain: an edit of a
    committed line — the last one included, which no `prev` of a later line protects yet — is reported. None
    when the file still starts with every committed line (or there is no commit to compare with)."""
    try:
        git_cfg = wb.config["git"]
    except WorkbenchError:
        return None  # config.yaml itself is reported as a problem of its own
    if git_cfg.get("commit") == "off" or wb.git.operation_in_progress():
        return None  # mid-merge or mid-rebase the file is git's to rewrite until the operation ends
    ref = git_cfg.get("ref")
    ref = (ref if ref.startswith("refs/") else "refs/heads/" + ref) if ref else "HEAD"
    try:
        committed = wb.git.committed_file(f"{WB_DIR}/events.jsonl", ref)
        current = wb.paths.events.read_bytes()
    except (GitError, OSError):
        return None
    if committed is None:
        return None
    committed = committed[:committed.rfind(b"\n") + 1]  # a torn last line committed by hand was never an event
    if current.startswith(committed):
        return None
    old_lines, new_lines = committed.split(b"\n"), current.split(b"\n")
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if old != new:
            return (f"events.jsonl:{number}: a committed line was changed after {ref} recorded it (the log is "
                    "append-only; restore it with `git checkout -- .workbench/events.jsonl` after saving what you "
                    "need)")
    return (f"events.jsonl: {len(old_lines) - len(new_lines)} committed line(s) were removed after {ref} recorded "
            "them (restore the log with `git checkout -- .workbench/events.jsonl`)")
