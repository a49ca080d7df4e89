"""The board's archive on disk: sealing the segments a write makes due, writing them before the board that
references them, and reading them back for `wb task show`, `wb task list --all` and `wb validate`.

The format and the fold are model/archive.py's. A segment is sealed by a `board.archive` event the
transaction emits (`seal_due`) when its board changed and holds more finished tasks than config.yaml's
`archive.keep` + `archive.chunk`; its bytes are written (`write_sealed`) after the log append and before
board.json, so a crash anywhere leaves either the old board (the next load folds the event again and writes
the segment) or a board whose segments are all on disk.
"""

from __future__ import annotations

import json
from itertools import repeat

from workbench import faults
from workbench.errors import Refused, SchemaRefused
from workbench.model import archive
from workbench.model.boardfile import parse_board
from workbench.store.atomic import read_or_none, write_workbench_file

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.model.layout import Paths
    from workbench.model.reducer import Docs
    from workbench.store.stagecontext import StageContext


def settings(config: dict[str, Any]) -> tuple[int, int]:
    """(keep, chunk) from config.yaml's `archive` (defaults: model/archive.py)."""
    section = config.get("archive") or {}
    return (int(section.get("keep", archive.DEFAULT_KEEP)), int(section.get("chunk", archive.DEFAULT_CHUNK)))


def seal_due(tx: StageContext) -> int:
    """Emit the `board.archive` events the transaction's board makes due (wb's own bookkeeping: actor wb).
    Returns how many."""
    keep, chunk = settings(tx.wb.config)
    board = tx.docs.board
    if chunk <= 0 or finished_count(board["tasks"]) < keep + chunk:
        return 0
    due = archive.plan(board, keep, chunk)
    for payload in due:
        tx.emit("board.archive", payload, actor="wb", via="wb")
    return len(due)


def finished_count(tasks: list[Any]) -> int:
    """How many tasks are done or cancelled: counted by C when every task is a dict (issue 33: each write asks)."""
    try:
        statuses = list(map(dict.get, tasks, repeat("status")))
    except TypeError:
        return sum(1 for t in tasks if t.get("status") in archive.FINISHED)
    return sum(map(statuses.count, archive.FINISHED))


def write_sealed(p: Paths, docs: Docs) -> None:
    """Put on disk the segments folded since the load that are not there byte for byte (durable: the board
    written next references them)."""
    for rel, raw in docs.sealed.items():
        if read_or_none(p.wb / rel) != raw:
            write_workbench_file(p.wb, rel, raw)
            faults.point("after_archive_write")
    docs.sealed.clear()


def read_segment(p: Paths, ref: dict[str, Any], docs: Docs | None = None) -> list[dict[str, Any]]:
    """The tasks of one referenced segment, its digest checked (Refused naming the file when it is missing,
    altered or not a segment). `docs`: a segment folded but not yet written is read from there."""
    rel = str(ref.get("file", ""))
    raw = docs.sealed.get(rel) if docs is not None else None
    if raw is None:
        raw = read_or_none(p.wb / rel) if rel.startswith(archive.ARCHIVE_DIR + "/") and ".." not in rel else None
    if raw is None:
        raise Refused(f".workbench/{rel}: missing, though board.json references it (restore it with git: "
                      f"`git checkout -- .workbench/{archive.ARCHIVE_DIR}`)")
    if archive.digest(raw) != ref.get("sha256"):
        raise Refused(f".workbench/{rel}: its sha256 is not the one board.json records: a sealed archive "
                      "segment was changed (restore it with git)")
    data = parse_board(raw)
    tasks = data.get("tasks")
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise Refused(f".workbench/{rel}: not an archive segment (restore it with git)")
    return tasks


def find(p: Paths, docs: Docs, task_id: str) -> tuple[dict[str, Any], str] | None:
    """(task, segment file) of an archived task, or None: only the segment its ranges name is read."""
    ref = archive.holding(docs.board, task_id)
    if ref is None:
        return None
    for task in read_segment(p, ref, docs):
        if task.get("id") == task_id:
            return task, str(ref["file"])
    return None


def all_archived(p: Paths, docs: Docs) -> list[dict[str, Any]]:
    """Every archived task, oldest segment first (each with `archived`: its segment file)."""
    out: list[dict[str, Any]] = []
    for ref in archive.refs(docs.board):
        out.extend({**t, "archived": ref["file"]} for t in read_segment(p, ref, docs))
    return out


def check_archive(p: Paths, board: dict[str, Any]) -> list[str]:
    """What `wb validate` reports of the archive: each referenced segment present, its digest the recorded
    one, its tasks valid board tasks matching the reference (count, ranges), and no id twice across the board
    and the segments. [] when all holds."""
    from workbench.model import reducer, schemas

    problems: list[str] = []
    if not archive.refs(board):
        return problems
    seen = {t.get("id") for t in board.get("tasks", []) if isinstance(t, dict) and isinstance(t.get("id"), str)}
    for ref in archive.refs(board):
        rel = ref.get("file")
        try:
            tasks = read_segment(p, ref)
        except Refused as err:
            problems.append(str(err))
            continue
        try:  # its tasks are board tasks: checked by the board's schema
            schemas.check("board", {"schema_version": reducer.BOARD_VERSION, "last_event": 0, "tasks": tasks},
                          f".workbench/{rel}")
        except SchemaRefused as err:
            problems.append(str(err))
            continue
        ids = [str(t["id"]) for t in tasks]
        if len(ids) != ref.get("tasks") or archive.ranges(ids) != ref.get("ranges"):
            problems.append(f".workbench/{rel}: holds {len(ids)} tasks ({json.dumps(archive.ranges(ids))[:60]}), "
                            "not the ones board.json records")
        unfinished = [t["id"] for t in tasks if t.get("status") not in archive.FINISHED]
        if unfinished:
            problems.append(f".workbench/{rel}: {unfinished[0]} is {tasks[ids.index(unfinished[0])]['status']}: "
                            "only done and cancelled tasks are archived")
        twice = [i for i in ids if i in seen]
        if twice:
            problems.append(f".workbench/{rel}: {twice[0]} is also on the board or in another segment")
        seen.update(ids)
    return problems
