"""board.json: written one task per line, read with the checks every reader relies on, validated where touched."""

from __future__ import annotations

import json
import os
import re
from itertools import repeat
from operator import itemgetter

from workbench.errors import Refused, SchemaRefused
from workbench.model import schemas
from workbench.model.jsonl import DuplicateKey, check_unicode, loads_unique

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Protocol

    class TouchedBoard(Protocol):
        """What `check_board` reads of the reducer's Docs, named here so this module needs nothing of the
        reducer's (the reducer encodes its board with this module)."""

        board: dict[str, Any]
        touched: set[str]


def encode_board(board: dict[str, Any], reuse: dict[str, str] | None = None) -> bytes:
    """One task per line: readable, diff- and merge-friendly, and written by json's C encoder (indent= is not).
    `reuse`: {task id: its line as last written} for the tasks unchanged since (`task_lines`), not encoded again."""
    head = {k: v for k, v in board.items() if k != "tasks"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    if reuse:
        tasks = [reuse.get(t.get("id")) or json.dumps(t, ensure_ascii=False) for t in board.get("tasks", [])]
    else:
        tasks = [json.dumps(t, ensure_ascii=False) for t in board.get("tasks", [])]
    if tasks:
        lines.append('  "tasks": [')
        lines.append(",\n".join("    " + t for t in tasks))
        lines.append("  ]")
    else:
        lines.append('  "tasks": []')
    lines.append("}")
    return ("\n".join(lines) + "\n").encode("utf-8")


_TASKS_OPEN, _TASKS_CLOSE = b'\n  "tasks": [\n', b"\n  ]\n}\n"  # how encode_board brackets the task lines
_TASK_IDS = rb'\n    \{"id": "([^"\\]*)"'  # each task line's id, searched from the tasks' start (compiled on use)


def splice_board(board: dict[str, Any], raw: bytes, touched: set[str]) -> bytes | None:
    """`encode_board(board)`, made from `raw` — board.json's bytes as encode_board wrote them for the board
    before a write — when the write kept every task in its place: the untouched tasks' lines are copied as one
    run of bytes, the touched ones and those appended after the rest are encoded. What Python does per task is
    the change's, not the board's (issue 33: an add on a 2,000-task board); what scans the whole file is C
    (a regex for the ids, a count of lines, the copy). None when the tasks did not stay in place (one archived,
    removed or moved), an id repeats, or `raw` is not laid out so: the caller encodes as before."""
    tasks = board.get("tasks")
    start = raw.find(_TASKS_OPEN)
    end = len(raw) - len(_TASKS_CLOSE)
    if not isinstance(tasks, list) or not tasks or start < 0 or not raw.endswith(_TASKS_CLOSE):
        return None
    laid = _laid_out(raw, start, end)
    if laid is None:
        return None
    old_ids, old_set = laid
    kept = len(old_ids)
    if len(tasks) < kept:
        return None
    try:
        if b"\n".join(old_ids) != "\n".join(map(itemgetter("id"), tasks[:kept])).encode("utf-8"):
            return None
    except (KeyError, TypeError):  # a task without a string id: not one this can place
        return None
    places = {tid.encode("utf-8") for tid in touched if isinstance(tid, str)}
    pieces = ["\n".join(["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},"
                                 for k, v in board.items() if k != "tasks"]).encode("utf-8")]
    at = start
    for index in sorted(old_ids.index(key) for key in places.intersection(old_ids)):
        line = raw.find(b'\n    {"id": "' + old_ids[index] + b'"', start, end) + 1
        stop = raw.find(b"\n", line, end + 1)
        stop -= raw[stop - 1:stop] == b","  # the comma between lines is not the task's
        pieces += [raw[at:line], b"    " + json.dumps(tasks[index], ensure_ascii=False).encode("utf-8")]
        at = stop
    pieces.append(raw[at:end])
    pieces += [b",\n    " + json.dumps(t, ensure_ascii=False).encode("utf-8") for t in tasks[kept:]]
    pieces.append(_TASKS_CLOSE)
    out = b"".join(pieces)
    _remember_layout(out, old_ids, old_set, tasks[kept:])
    return out


# the bytes splice_board made last and their ids (a list, a set), for the next write of the same process, whose
# board.json is very often exactly those bytes (store/sqliteboard.py keeps them): found by identity, a bytes
# object being immutable, so the layout need not be read again (issue 33: a regex over every task line)
_last_layout: tuple[bytes, list[bytes], set[bytes]] | None = None


def _laid_out(raw: bytes, start: int, end: int) -> tuple[list[bytes], set[bytes]] | None:
    """The ids of `raw`'s task lines between `start` and `end`, in order, when each task is one line led by its
    id and no id repeats; None otherwise."""
    last = _last_layout
    if last is not None and last[0] is raw:
        return last[1], last[2]
    old_ids = re.compile(_TASK_IDS).findall(raw, start, end)  # re's cache: compiled by a write, not by a reader
    old_set = set(old_ids)
    if raw.count(b"\n", start + len(_TASKS_OPEN), end) + 1 != len(old_ids) or len(old_set) != len(old_ids):
        return None  # a line not led by its id (a task line holds no newline), or a repeat
    return old_ids, old_set


def _remember_layout(out: bytes, old_ids: list[bytes], old_set: set[bytes], added: list[Any]) -> None:
    """Keep `out`'s layout: the ids kept in place, then those of the `added` tasks (each one line after them)."""
    global _last_layout
    try:  # each added line led by its id, written as it is (nothing JSON escapes), so the regex reads it back
        escaped = re.compile(_ESCAPED)
        plain = all(next(iter(t)) == "id" and not escaped.search(t["id"]) for t in added)
        new = [t["id"].encode("utf-8") for t in added] if plain else []
    except (StopIteration, KeyError, TypeError, AttributeError, UnicodeEncodeError):
        plain = False
    if not plain or not old_set.isdisjoint(new) or len(set(new)) != len(new):
        _last_layout = None  # read again next time: what the regex finds there decides
        return
    _last_layout = (out, old_ids + new, old_set.union(new))


# what json.dumps(ensure_ascii=False) writes otherwise than as it is; this and _NUMBERED are compiled by re on
# first use (its cache): a reader (`wb task list`) compiles neither (issue 33: a quarter of a millisecond)
_ESCAPED = r'["\\\x00-\x1f]'


def task_list_as_read(raw: bytes, count: int) -> bytes | None:
    """board.json's `count` task lines as one JSON list, a task a line at two spaces' indent (what `wb task list
    --json` writes, cli/output.emit_json_items), copied from `raw` as `encode_board` wrote it: each line is
    `json.dumps(task, ensure_ascii=False)` of the task read from it. None when `raw` is not laid out so."""
    start = raw.find(_TASKS_OPEN)
    if start < 0 or not raw.endswith(_TASKS_CLOSE):
        return None
    lines = raw[start + len(_TASKS_OPEN) - 1:len(raw) - len(_TASKS_CLOSE)]  # b"\n    {…},\n    {…}"
    if lines.count(b"\n") != count:  # a task line holds no newline
        return None
    return b"[" + lines.replace(b"\n    ", b"\n  ") + b"\n]\n"


def task_texts(raw: bytes) -> dict[str, str] | None:
    """{id: its task's JSON} of board.json's bytes as `encode_board` wrote them: each task line as it is, which
    is `json.dumps(task, ensure_ascii=False)` of the task read from it — what writing that task as JSON again
    writes, read rather than encoded (issue 33: `wb task list --json` of 2,000 tasks). None when `raw` is not
    laid out so (no tasks, a line not led by its id, an id repeated)."""
    start = raw.find(_TASKS_OPEN)
    end = len(raw) - len(_TASKS_CLOSE)
    if start < 0 or not raw.endswith(_TASKS_CLOSE):
        return None
    laid = _laid_out(raw, start, end)
    if laid is None:
        return None
    lines = raw[start + len(_TASKS_OPEN):end].decode("utf-8").split(",\n")  # a task line holds no newline
    if len(lines) != len(laid[0]):
        return None
    return dict(zip([tid.decode("utf-8") for tid in laid[0]], [line[4:] for line in lines], strict=True))


def task_lines(raw: bytes, unchanged: Any) -> dict[str, str]:
    """{id: line} of the tasks in board.json's bytes as `encode_board` wrote them, for the ids `unchanged`
    holds (a container): what the next `encode_board` of the same board need not encode again."""
    out: dict[str, str] = {}
    prefix = '    {"id": "'
    for line in raw.decode("utf-8").split("\n"):
        if line.startswith(prefix):
            end = line.find('"', len(prefix))
            tid = line[len(prefix):end]
            if tid in unchanged:
                out[tid] = line[4:].rstrip(",")
    return out


class BrokenJSON(Refused):
    """board.json is not JSON: the line of the problem, for the readers that say it their own way."""

    def __init__(self, line: object, msg: object) -> None:
        super().__init__(f"board.json:{line}: broken JSON: {msg} (fix the file, or restore it with git)")
        self.line = line


class NotABoard(Refused):
    """board.json holds JSON, but not an object."""


MAX_BOARD_BYTES = 64 * 1024 * 1024  # a board of 100,000 tasks is well under it


def too_big(size: int) -> Refused:
    return Refused(f"board.json: {size} bytes, over the cap of {MAX_BOARD_BYTES}: not a board wb wrote "
                   "(restore it with git)")


def read_board_bytes(path: Path) -> bytes:
    """board.json's bytes, refused by its size before it is read (a 1 GB file is not read whole)."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_BOARD_BYTES:
            raise too_big(size)
        # read(n) allocates n bytes up front: ask for what fstat says is there (and one more, to see it grew),
        # not the cap — a read of the cap held 64 MiB for a 130 KB board (issue 33's first-command peak)
        data = fh.read(size + 1)
        if len(data) > size:  # grew meanwhile: the rest, up to the cap
            data += fh.read(MAX_BOARD_BYTES + 1 - len(data))
    if len(data) > MAX_BOARD_BYTES:  # grew meanwhile
        raise too_big(len(data))
    return data


def parse_board(raw: bytes, *, own: bool = False) -> dict[str, Any]:
    """The one reader of board.json's bytes: a JSON object, or Refused naming the size cap, the line
    (BrokenJSON), a repeated key (two `acceptance` in a task: which would run is a reader's guess), the nesting
    or the lone surrogate, or NotABoard. Its shape is `has_task_list`'s and the schema's to check. `own`: the
    bytes are the ones wb last wrote (its cache says so), checked when written: read by json's C parser alone."""
    if len(raw) > MAX_BOARD_BYTES:
        raise too_big(len(raw))
    if own:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):  # not what wb wrote after all (a row rewritten by hand): say why below
            data = None
        if isinstance(data, dict):
            return data
    try:
        data = loads_unique(raw)
    except DuplicateKey as err:
        raise Refused(f"board.json: {err.msg} in one object: refused, since which value counts would be a "
                      "guess (fix the file, or restore it with git)") from None
    except RecursionError:
        raise Refused("board.json: nested too deeply to read (fix the file, or restore it with git)") from None
    except ValueError as err:
        raise BrokenJSON(getattr(err, "lineno", "?"), getattr(err, "msg", err)) from None
    if not isinstance(data, dict):
        raise NotABoard("board.json: (top level): must be a JSON object with schema_version and tasks")
    check_unicode(raw, data, "board.json")
    return data


def has_task_list(board: dict[str, Any], *, required: bool = True) -> bool:
    """What every reader relies on: `tasks` is a list of objects with string ids (absent: only if not
    `required`)."""
    tasks = board.get("tasks") if required or "tasks" in board else []
    return isinstance(tasks, list) and all(isinstance(t, dict) and isinstance(t.get("id"), str) for t in tasks)


def task_ids(tasks: list[Any]) -> list[Any] | None:
    """Each task's `id` (None where it has none), read by C rather than a Python loop (issue 33: the write path
    asks it of every task at each write); None when a task is not a dict."""
    try:
        return list(map(dict.get, tasks, repeat("id")))
    except TypeError:
        return None


def unique(ids: list[Any]) -> bool:
    """Whether no id repeats (False also when one cannot be compared so: the caller then looks closely)."""
    try:
        return len(set(ids)) == len(ids)
    except TypeError:  # an unhashable id, in a board a person edited
        return False


def highest_task_number(tasks: list[Any]) -> int:
    """The highest N of the ids `T-N` (three digits or more) on the board, 0 when none."""
    ids = task_ids(tasks)
    if ids is not None:
        try:
            joined = "\n".join(ids)
        except TypeError:  # an id that is not a string (or none): the loop below skips it
            joined = None
        if joined is not None and joined.count("\n") == len(ids) - 1:  # no id holds a newline: one line each
            return _highest_of_lines(joined)
    from workbench.model.ids import TASK_ID  # here: a reader (`wb task list`) numbers nothing

    highest = 0
    for task in tasks:
        tid = task.get("id", "")
        if isinstance(tid, str) and tid[2:].isdigit() and TASK_ID.match(tid):
            highest = max(highest, int(tid[2:]))
    return highest


_NUMBERED = r"^T-(\d{3,})$"  # a line that is a TASK_ID (re.M), its number apart
# the ids (one a line) highest_task_number read last and its answer: the next write's board is most often the same
# ids with some added after them, whose lines alone are then read (issue 33: each add asks it of every task)
_last_highest: tuple[str, int] = ("", 0)


def _highest_of_lines(joined: str) -> int:
    global _last_highest
    before, highest = _last_highest
    if before and joined.startswith(before) and joined[len(before):len(before) + 1] in ("", "\n"):
        highest = max(highest, *map(int, re.compile(_NUMBERED, re.M).findall(joined, len(before))), 0)
    else:
        highest = max(map(int, re.compile(_NUMBERED, re.M).findall(joined)), default=0)
    _last_highest = (joined, highest)
    return highest


def duplicate_ids(tasks: Any) -> list[tuple[int, str]]:
    """(index, id) of each task whose string id an earlier task already has."""
    if isinstance(tasks, list):
        ids = task_ids(tasks)
        if ids is not None and unique(ids):
            return []
    seen: set[str] = set()
    out = []
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        tid = task.get("id") if isinstance(task, dict) else None
        if isinstance(tid, str):
            if tid in seen:
                out.append((i, tid))
            seen.add(tid)
    return out


def check_board_shape(board: dict[str, Any]) -> None:
    """`has_task_list`, checked on each load (cheap). The full schema check of a hand-edited board happens on
    load and in the write path."""
    if not has_task_list(board):
        schemas.check("board", board, "board.json")  # names the first problem
        raise SchemaRefused("board.json", "tasks", "every task must be an object with a string id")


def check_board_against(board: dict[str, Any], raw: bytes, verified: bytes | None) -> None:
    """`schemas.check("board", board, "board.json")` of `board`, parsed from `raw` (not what wb last wrote: a
    pull, a hand edit), its tasks checked only where their text is not one of `verified`'s — board.json as wb last
    wrote it here, checked then (its cache). The schema checks each task on its own (items of `tasks`, nothing
    across them: tests/model/test_board_against.py holds it to that), so a task whose text is a verified task's
    is valid; the top level and the other tasks are checked. Refused in the whole check's words. Which text is
    which task is read off the layout encode_board writes, a task a line, and proven: `verified`'s tasks are
    read one by one, each to the comma and newline after it (_whole_texts); a line of `raw` is a task's whole
    text when it is one of theirs, or parses alone — and when every line is, they are the tasks, in order.
    Anything else is checked whole (issue 33: 5,000 tasks, 8 ms of the first write after a pull, which changed
    one task)."""
    tasks = board.get("tasks")
    section = _task_section(raw) if isinstance(tasks, list) and verified else None
    if section is not None:
        lines = section[4:].split(_TASK_SEP)
        known = _whole_texts(verified) if len(lines) == len(tasks) else None  # type: ignore[arg-type]
        changed = [i for i, text in enumerate(lines) if known is not None and text not in known]
        if known is not None and all(map(_parses, (lines[i] for i in changed))) and \
                schemas.is_valid("board", {**board, "tasks": [tasks[i] for i in changed]}):  # type: ignore[index]
            return
    schemas.check("board", board, "board.json")  # whole: names the first problem


_TASK_SEP = ",\n    "  # between two task lines of encode_board's


def _task_section(raw: bytes) -> str | None:
    """The task lines of `raw` laid out as encode_board writes them, as text (four spaces before each, _TASK_SEP
    holding every newline between them), or None when not so laid out. `raw` starts as encode_board's does, "{"
    and a newline: json reads it as UTF-8 then (not UTF-16 or 32, which it tells by NUL bytes there)."""
    start = raw.find(_TASKS_OPEN)
    if start < 0 or not raw.startswith(b"{\n") or not raw.endswith(_TASKS_CLOSE):
        return None
    try:
        section = raw[start + len(_TASKS_OPEN):len(raw) - len(_TASKS_CLOSE)].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not section.startswith("    ") or section.count(_TASK_SEP) != section.count("\n"):
        return None
    return section


def _whole_texts(raw: bytes | None) -> set[str] | None:
    """The text of each task of board.json's bytes `raw`, each read as one JSON value (an object) from where the
    one before it ended, and followed by _TASK_SEP or the end: then they are the values of `tasks`, in order.
    None when `raw` is not so laid out."""
    section = _task_section(raw) if raw else None
    if section is None:
        return None
    decode = json.JSONDecoder().raw_decode  # one value from `at`, and where it ends: no whitespace skipped
    texts: set[str] = set()
    at = 4
    try:
        while True:
            task, end = decode(section, at)
            if not isinstance(task, dict):
                return None
            texts.add(section[at:end])
            if end == len(section):
                return texts
            if not section.startswith(_TASK_SEP, end):
                return None
            at = end + len(_TASK_SEP)
    except (ValueError, RecursionError):
        return None


def _parses(text: str) -> bool:
    """Whether `text` is one JSON object, alone (its whole text)."""
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


# repr() of the last `archive` a board's check found valid: the references a write carries over unchanged are
# not checked again at each write (issue 33: 18 segments, 0.17 ms of an add at 5,000 tasks). repr, not JSON: it
# tells a tuple from a list and 1 from 1.0 and True, so equal text is an equal value of the same types
_valid_archive: str | None = None


def _valid_top_level(board: dict[str, Any], tasks: list[Any]) -> bool:
    """Whether `board` with `tasks` for its tasks is valid; its `archive` checked only when it is not the one
    found valid last (the schema checks each top-level key on its own: no rule ties two of them)."""
    global _valid_archive
    archive = board.get("archive")
    seen = repr(archive) if isinstance(archive, list) else None
    if seen is not None and seen == _valid_archive:
        return schemas.is_valid("board", {**board, "tasks": tasks, "archive": []})
    valid = schemas.is_valid("board", {**board, "tasks": tasks})
    if valid and seen is not None:
        _valid_archive = seen
    return valid


def check_board(docs: TouchedBoard) -> None:
    """Validate the board. Tasks not touched since load were valid when written: only the touched ones and the
    top level are checked (a 5,000-task board costs ~70 ms to check whole), plus the ids' uniqueness."""
    board = docs.board
    tasks = board.get("tasks")
    if not isinstance(tasks, list) or None in docs.touched:
        schemas.check("board", board, "board.json")
        return
    ids = task_ids(tasks)
    distinct = ids is not None and unique(ids)
    if ids is not None and distinct:  # every task a dict, no id twice: the touched ones found by their ids
        if len(docs.touched) <= 8:  # a write's usual few, looked for from the end (new and recent tasks are there)
            at = len(ids) - 1
            found = []
            for tid in docs.touched:
                try:
                    found.append(at - ids[::-1].index(tid))
                except ValueError:  # not on the board (archived, deleted)
                    pass
        else:
            where = dict(zip(ids, range(len(ids)), strict=True))
            found = [where[tid] for tid in docs.touched if tid in where]
        touched = [tasks[i] for i in sorted(found)]
    else:
        touched = [t for t in tasks if not isinstance(t, dict) or t.get("id") in docs.touched]
    if not _valid_top_level(board, touched):
        schemas.check("board", board, "board.json")  # the full check names the right index
    for i, tid in ([] if distinct else duplicate_ids(tasks))[:1]:  # no id twice: seen above already
        raise SchemaRefused("board.json", f"tasks[{i}].id", f"duplicate id {tid}")
