"""The board's archive: finished tasks sealed into immutable segment files under `.workbench/archive/`.

A long-lived board keeps its open tasks and its most recent finished ones; the oldest finished (done or
cancelled) tasks move, `chunk` at a time, into a segment file the board references (board.json's `archive`
list: the file, its sha256, how many tasks, the first and last id, and the id ranges it holds). A segment is
written once and never again: git stores it once, and a write of the board no longer rewrites thousands of
finished tasks.

The move is the `board.archive` event, folded here (pure, like every reducer): its payload names the segment
file, the ids it takes and the sha256 of the segment's bytes. The fold takes those tasks off the board, encodes
them the one way (`encode_segment`) and checks the digest; replaying the log therefore rebuilds the same board
and the same segment bytes. A `board.archive` whose tasks are not all on the board exactly as it sealed them
(a merge put another branch's change to one of them before it) is void: its tasks stay on the board and the
next write archives them again, so nothing is lost and nothing is archived twice.

File names carry the first and last id and the digest (`archive/T-000001_T-000250_3fa2c1d9e0b4.json`,
numbers padded to 6 so the names sort in id order; older segments' 3-digit names still read): two clones
that each archived since they parted never write the same name with different bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

from workbench.model.boardfile import encode_board

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

ARCHIVE_DIR = "archive"
FINISHED = ("done", "cancelled")
SEGMENT_VERSION = 1
DEFAULT_KEEP = 100  # finished tasks the board keeps
DEFAULT_CHUNK = 250  # tasks per segment (0: never archive)


def number(task_id: str) -> int:
    return int(task_id[2:]) if isinstance(task_id, str) and task_id[2:].isdigit() else 0


def encode_segment(tasks: list[dict[str, Any]]) -> bytes:
    """A segment's bytes, one task per line as board.json is written: `{"schema_version": 1, "tasks": [...]}`."""
    return encode_board({"schema_version": SEGMENT_VERSION, "tasks": tasks})


def digest(raw: bytes) -> str:
    from workbench.model.digest import sha256  # here: most commands never seal a segment

    return sha256(raw).hexdigest()


NAME_DIGITS = 6  # the ids' numbers in a segment's name: names sort in id order up to T-999999


def segment_file(tasks: list[dict[str, Any]], sha: str, digits: int = NAME_DIGITS) -> str:
    """`archive/T-<first>_T-<last>_<12 hex of the digest>.json`, relative to `.workbench/`, the numbers padded
    to `digits` so the names sort as the ids do (`T-000250_…` before `T-001001_…`). Segments named before
    (numbers padded to 3) keep their names: `is_segment_file` accepts both."""
    nums = sorted(number(t["id"]) for t in tasks)
    return f"{ARCHIVE_DIR}/T-{nums[0]:0{digits}d}_T-{nums[-1]:0{digits}d}_{sha[:12]}.json"


def is_segment_file(name: str, tasks: list[dict[str, Any]], sha: str) -> bool:
    """`name` is the segment's name, as wb names it now or named it before (3-digit numbers)."""
    return name in (segment_file(tasks, sha), segment_file(tasks, sha, 3))


def ranges(task_ids: Iterable[str]) -> list[list[int]]:
    """The ids' numbers as sorted, inclusive [from, to] runs: a segment's ids in a few numbers."""
    out: list[list[int]] = []
    for n in sorted(number(t) for t in task_ids):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def reference(file: str, sha: str, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """What board.json's `archive` list records of one segment."""
    run = ranges(t["id"] for t in tasks)
    ref = {"file": file, "sha256": sha, "tasks": len(tasks), "first": f"T-{run[0][0]:03d}",
           "last": f"T-{run[-1][1]:03d}", "ranges": run}
    cancelled = [t["id"] for t in tasks if t.get("status") == "cancelled"]
    if cancelled:  # the rest are done: a dependency on one is met without opening the segment
        ref["cancelled"] = cancelled
    return ref


def refs(board: dict[str, Any]) -> list[dict[str, Any]]:
    archive = board.get("archive")
    return [r for r in archive if isinstance(r, dict)] if isinstance(archive, list) else []


def holding(board: dict[str, Any], task_id: str) -> dict[str, Any] | None:
    """The reference of the segment that holds `task_id` (by its ranges: no file is read), or None."""
    archive = refs(board)
    n = number(task_id) if archive else 0  # most boards have no archive: a list asks once per dependency
    if not n:
        return None
    for ref in archive:
        for run in ref.get("ranges") or []:
            if isinstance(run, list) and len(run) == 2 and run[0] <= n <= run[1]:
                return ref
    return None


def archived_done(board: dict[str, Any] | None, task_id: str) -> bool:
    """Whether `task_id` is an archived task that was done (not cancelled): a dependency on it is met."""
    if not board:
        return False
    ref = holding(board, task_id)
    return ref is not None and task_id not in (ref.get("cancelled") or [])


def archived_count(board: dict[str, Any]) -> int:
    return sum(int(r.get("tasks", 0)) for r in refs(board))


def highest_archived(board: dict[str, Any]) -> int:
    """The highest task number any segment holds (0: none): new ids are allocated past it."""
    return max([number(str(r.get("last", ""))) for r in refs(board)] or [0])


def plan(board: dict[str, Any], keep: int, chunk: int) -> list[dict[str, Any]]:
    """The `board.archive` payloads due: while more than `keep + chunk - 1` finished tasks are on the board, the
    oldest `chunk` of them (in board order) make one segment. Deterministic: the same board plans the same."""
    if chunk <= 0:
        return []
    finished = [t for t in board.get("tasks", []) if t.get("status") in FINISHED]
    out = []
    start = 0
    while len(finished) - start >= keep + chunk:
        tasks = finished[start:start + chunk]
        raw = encode_segment(tasks)
        sha = digest(raw)
        out.append({"file": segment_file(tasks, sha), "ids": [t["id"] for t in tasks], "sha256": sha})
        start += chunk
    return out


def fold_archive(board: dict[str, Any], payload: dict[str, Any]) -> tuple[str, bytes] | None:
    """Apply one `board.archive` to `board` in place: (file, segment bytes) when it moved its tasks, None when
    it is void (a task missing or unfinished, or the bytes not the ones it sealed: see the module docstring)."""
    wanted = payload["ids"]
    if not isinstance(wanted, list) or not wanted:
        raise ValueError("board.archive names no task")
    want = set(wanted)
    tasks = [t for t in board["tasks"] if t.get("id") in want]
    if len(tasks) != len(want) or any(t.get("status") not in FINISHED for t in tasks):
        return None
    raw = encode_segment(tasks)
    sha = digest(raw)
    if sha != payload["sha256"] or not is_segment_file(payload["file"], tasks, sha):
        return None
    board["tasks"] = [t for t in board["tasks"] if t.get("id") not in want]
    board["archive"] = [*refs(board), reference(payload["file"], sha, tasks)]
    return payload["file"], raw
