"""The rules the verbs share: which keys a verb may set, the goalposts, what refuses a write."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from workbench.errors import NotFound, Refused, UsageError, WorkbenchError
from workbench.model import reducer
from workbench.store.workbench import Workbench

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

EVENT_TYPE = re.compile(r"^[a-z]+(\.[a-z_]+)+$")  # as schemas/event.schema.json
SETTABLE_TASK_KEYS = ("title", "description", "owner", "acceptance", "depends_on", "status", "reviews", "scope",
                      "priority", "labels", "parent", "assignee")  # issue 22: the last four
# -- scope contract & proof of done (issue 16): what only a proven person changes once a task has started
GOALPOSTS = ("acceptance", "scope")
SETTABLE_STATE_KEYS = ("status", "next_action", "active_task_id", "touched_files", "assumptions", "blockers")
KEPT_STATE_KEYS = ("schema_version", "updated_at", "last_event", "counters", "session")


def lease_seconds(lease: str | int | None) -> int:
    from workbench.model.claims import DEFAULT_LEASE_S, parse_duration

    if lease is None:
        return DEFAULT_LEASE_S
    if isinstance(lease, int):
        if lease <= 0:
            raise UsageError("--lease: it must be longer than 0s")
        return lease
    try:
        return parse_duration(lease)
    except ValueError as err:
        raise UsageError(f"--lease: {err}") from None


def extend_items(extend: Mapping[str, float] | Sequence[str] | None) -> list[str]:
    """`--extend` items (`turns=N`) from a mapping, or the CLI's items as they are."""
    if extend is None:
        return []
    if isinstance(extend, str):
        return [extend]
    if isinstance(extend, Mapping):
        return [f"{name}={number}" for name, number in extend.items()]
    return list(extend)


def read_bytes_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def goalposts_moved(task: dict[str, Any], changes: dict[str, Any]) -> list[str]:
    """The goalposts (acceptance, scope) `changes` moves on a started task: a person's to move (issue 16, 19)."""
    started = task.get("status") != "todo" or bool(task.get("start_head"))
    if not started:
        return []
    return sorted(k for k in changes if k in GOALPOSTS and task.get(k) != changes[k])


def set_command(task_id: str, changes: dict[str, Any], keys: list[str]) -> str:
    """The `wb task set` a person runs to make these changes."""
    import shlex

    shown = " ".join(shlex.quote(f"{k}={json.dumps(changes[k], ensure_ascii=False)}") for k in keys)
    return f"wb task set {task_id} {shown}"


# -- person-only actions (issue 19): a person proven at a terminal; never a flag, MCP or a recorded reason ------
def person_only(action: str, command: str) -> str:
    """The actor of a person-only action: "human", once a person confirmed on /dev/tty (ops/person.py; asked
    at most once a process). MCP is an agent's door whatever its terminal: refused there without asking.
    PersonRequired (exit 5) names `command`, what the person runs."""
    from workbench.ops.person import require_person

    require_person(action, command)
    return "human"


def head_of(root: Path) -> str | None:
    from workbench.git.changes import head

    try:
        return head(root)
    except WorkbenchError:  # no git on PATH: the proof says so by a null HEAD
        return None


def scope_blocking(verdict: dict[str, Any] | None) -> list[str]:
    from workbench.model.scope import blocking

    return blocking(verdict) if verdict else []


def small_json(payload: dict[str, Any]) -> dict[str, Any] | None:
    """`payload` as JSON data when it is so small that `clip_payload` leaves it as it is, redacted first or not
    (the bulk path's shortcut: most events are a few hundred bytes): at most CLIP_TEXT/2 characters of JSON,
    so no string nears CLIP_TEXT even if each secret in it grew to the redaction mark, and fewer brackets than
    CLIP_DEPTH, so nothing nests that deep. None: take the whole way (redact, then clip)."""
    from workbench.model.clip import CLIP_DEPTH, CLIP_TEXT

    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) > CLIP_TEXT // 2 or text.count("[") + text.count("{") >= CLIP_DEPTH:
        return None
    data: dict[str, Any] = json.loads(text)
    return data


def shortened(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def is_archived(board: dict[str, Any], task_id: str) -> bool:
    from workbench.model.archive import holding

    return holding(board, task_id) is not None


def archived_task(wb: Workbench, docs: reducer.Docs, task_id: str) -> dict[str, Any] | None:
    """An archived task (issue 20) as `show_task` returns it: with `archived`, its segment file."""
    from workbench.store.archive import find

    found = find(wb.paths, docs, task_id)
    return {**found[0], "archived": found[1]} if found else None


def not_on_board(wb: Workbench, docs: reducer.Docs, task_id: str) -> NotFound | Refused:
    """Why a write cannot name `task_id`: archived tasks are sealed (read-only), others do not exist."""
    from workbench.model.archive import holding

    ref = holding(docs.board, task_id)
    if ref is not None:
        return Refused(f"{task_id} is archived in .workbench/{ref['file']}: archived tasks are sealed and cannot "
                       "change (see it with `wb task show`; add a new task to take the work up again)")
    return NotFound(f"no task {task_id} on the board (see `wb task list`)")


def parent_problem(board: dict[str, Any], task_id: str, parent: str) -> None:
    """Refuse a parent that is missing, the task itself, or one of its own descendants (issue 22)."""
    seen = {task_id}
    node: str | None = parent
    while node is not None:
        if node in seen:
            raise Refused(f"board.json: {task_id} cannot have {parent} as parent: it would be its own ancestor")
        seen.add(node)
        found = reducer.find_task(board, node)
        if found is None:
            raise Refused(f"board.json: no task {node} to be the parent (see `wb task list`)")
        node = found.get("parent")


def open_children(board: dict[str, Any], task_id: str) -> None:
    """Refuse to finish a parent whose children are not all done or cancelled (issue 22), naming them."""
    left = [f"{t['id']} ({t.get('status')})" for t in board["tasks"]
            if t.get("parent") == task_id and t.get("status") not in ("done", "cancelled")]
    if left:
        raise Refused(f"{task_id} is the parent of {', '.join(left)}: finish or cancel "
                      f"{'it' if len(left) == 1 else 'them'} first")


def require_open(task: dict[str, Any], verb: str) -> None:
    if task["status"] in ("done", "cancelled"):
        raise Refused(f"{task['id']} is {task['status']}; cannot {verb} it "
                      f"(reopen with `wb task set {task['id']} status=todo`)")


def next_task_id(board: dict[str, Any]) -> str:
    """Past every id on the board and in its archive (whose references say their highest without a read)."""
    from workbench.model.archive import highest_archived
    from workbench.model.boardfile import highest_task_number

    return f"T-{max(highest_archived(board), highest_task_number(board['tasks'])) + 1:03d}"
