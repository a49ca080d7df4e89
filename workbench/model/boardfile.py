"""board.json: written one task per line, read with the checks every reader relies on, validated where touched."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from workbench.errors import Refused, SchemaRefused
from workbench.model import schemas
from workbench.model.jsonl import check_unicode

if TYPE_CHECKING:
    from workbench.model.reducer import Docs


def encode_board(board: dict[str, Any]) -> bytes:
    """One task per line: readable, diff- and merge-friendly, and written by json's C encoder (indent= is not)."""
    head = {k: v for k, v in board.items() if k != "tasks"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    tasks = [json.dumps(t, ensure_ascii=False) for t in board.get("tasks", [])]
    if tasks:
        lines.append('  "tasks": [')
        lines.append(",\n".join("    " + t for t in tasks))
        lines.append("  ]")
    else:
        lines.append('  "tasks": []')
    lines.append("}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def parse_board(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except RecursionError:
        raise Refused("board.json: nested too deeply to read (fix the file, or restore it with git)") from None
    except ValueError as err:
        line = getattr(err, "lineno", "?")
        raise Refused(f"board.json:{line}: broken JSON: {getattr(err, 'msg', err)} "
                      "(fix the file, or restore it with git)") from None
    if not isinstance(data, dict):
        raise Refused("board.json: (top level): must be a JSON object with schema_version and tasks")
    check_unicode(raw, data, "board.json")
    return data


def check_board_shape(board: dict[str, Any]) -> None:
    """What every reader relies on, checked on each load (cheap): `tasks` is a list of objects with string ids.
    The full schema check of a hand-edited board happens on load and in the write path."""
    tasks = board.get("tasks")
    if not isinstance(tasks, list) or not all(isinstance(t, dict) and isinstance(t.get("id"), str) for t in tasks):
        schemas.check("board", board, "board.json")  # names the first problem
        raise SchemaRefused("board.json", "tasks", "every task must be an object with a string id")


def check_board(docs: Docs) -> None:
    """Validate the board. Tasks not touched since load were valid when written: only the touched ones and the
    top level are checked (a 5,000-task board costs ~70 ms to check whole), plus the ids' uniqueness."""
    board = docs.board
    tasks = board.get("tasks")
    if not isinstance(tasks, list) or None in docs.touched:
        schemas.check("board", board, "board.json")
        return
    touched = [t for t in tasks if not isinstance(t, dict) or t.get("id") in docs.touched]
    if not schemas.is_valid("board", {**board, "tasks": touched}):
        schemas.check("board", board, "board.json")  # the full check names the right index
    seen: set[Any] = set()
    for i, task in enumerate(tasks):
        tid = task.get("id") if isinstance(task, dict) else None
        if tid in seen:
            raise SchemaRefused("board.json", f"tasks[{i}].id", f"duplicate id {tid}")
        seen.add(tid)
