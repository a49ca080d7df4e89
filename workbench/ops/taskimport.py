"""`wb task import FILE`: many tasks from a JSON list or a Markdown checklist, read and checked whole before the
one transaction that adds them (`Bench.import_tasks`).

Two formats, told apart by the file's suffix (`.json`; `.md`, `.markdown`, `.txt`) or, for stdin and other
names, by the first character (`[` or `{`: JSON):

JSON: a list of tasks in the board's task shape (`[{"title": …, "acceptance": [...], …}]`), or an object with
such a list under `"tasks"` (a board.json). Only `title` is required; `kind` (build), `owner` (by kind),
`status` (todo), `acceptance`, `depends_on` ([]), `description`, `reviews`, `scope`, `priority`, `labels`,
`parent` and `assignee` as on the board.

Markdown: a checklist, one task per item, its fields on indented lines below it:

    - [ ] Write the parser          a task to do (`*`, `+` and `1.` items too)
      id: T-101                     the name this file gives it, for `depends:` further down
      accept: pytest -q tests/p.py  an acceptance command (repeatable)
      depends: T-004, T-101         prerequisites (repeatable; commas or spaces between ids)
    - [x] Read the spec             done already (a done task has no acceptance commands)
    - [-] Drop the old parser       cancelled

Keys under an item: `id`, `accept` (or `acceptance`), `depends` (or `depends_on`), `description` (repeatable:
lines joined), `owner`, `kind`, `reviews`, `allow` and `forbid` (scope globs, repeatable), and the fields of
`wb task add`'s options: `priority` (0 highest … 4 lowest), `labels` (or `label`; commas or spaces between
them, repeatable), `parent` and `assignee`. Blank lines,
headings and prose at the left margin are skipped; a list item without a checkbox, a nested item, an
unknown key or a line under an item that is not `key: value` refuses the import, naming its line.

Ids are allocated as `wb task add` allocates them: the next free number, in file order. An `id` the file
gives is only a name inside the file: `depends_on`/`reviews`/`parent` naming it (in an entry below it) point at the
task it was allocated; any other id must be on the board already. A task may depend only on tasks above it
or on the board, so an import cannot make a cycle. Fields wb keeps itself (`proof`, `claim`, `start_head`,
`forced_done`, `blocked_reason`) are refused; `created_at`/`updated_at` are set to the time of the import.
A task is imported as `todo`, `done` (only without acceptance commands: `wb task done` runs those) or
`cancelled`; start or block it afterwards with `wb task start|block`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench import progress as progressing
from workbench.errors import Refused, SchemaRefused, UsageError
from workbench.model import reducer, schemas
from workbench.model.ids import TASK_ID
from workbench.ops.acceptance import task_problem

FORMATS = ("json", "markdown")
IMPORTED_STATUSES = ("todo", "done", "cancelled")
KEPT_BY_WB = ("proof", "claim", "start_head", "forced_done", "blocked_reason", "comments")  # comments: issue 22
STAMPED = ("created_at", "updated_at")
BOXES = {" ": "todo", "x": "done", "X": "done", "-": "cancelled"}
# Markdown keys -> the task field each sets, and whether it repeats (a list) or is said once
MD_KEYS: dict[str, tuple[str, str]] = {
    "id": ("id", "one"), "accept": ("acceptance", "list"), "acceptance": ("acceptance", "list"),
    "depends": ("depends_on", "ids"), "depends_on": ("depends_on", "ids"), "description": ("description", "text"),
    "owner": ("owner", "one"), "kind": ("kind", "one"), "reviews": ("reviews", "one"),
    "allow": ("allowed", "scope"), "forbid": ("forbidden", "scope"),
    "priority": ("priority", "number"), "labels": ("labels", "ids"), "label": ("labels", "ids"),
    "parent": ("parent", "one"), "assignee": ("assignee", "one"),
}
_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+\[(?P<box>[^\]]?)\](?:[ \t]+(?P<title>.*))?$")
_LOOKS_LIKE_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]*\[")
_BULLET = re.compile(r"^(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_KEY_LINE = re.compile(r"^[ \t]+(?:[-*+][ \t]+)?(?P<key>[A-Za-z_]+)[ \t]*:[ \t]*(?P<value>.*?)[ \t]*$")
_ID_SPLIT = re.compile(r"[,\s]+")


@dataclass
class Entry:
    """One task of the file, as it gives it: its fields, and where each was said (for the refusal)."""

    file: str
    at: str  # "[3]" (JSON) or "line 7" (Markdown)
    fields: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)  # Markdown: the line each field was given on

    def where(self, key: str | None = None, path: str | None = None) -> str:
        """The pointer to field `key` (or `path` inside it) of this entry: `[3].status`, `line 9: depends_on`."""
        path = path or key
        if self.at.startswith("[") or self.at.startswith("tasks["):
            return f"{self.at}.{path}" if path else self.at
        line = self.lines.get(key or "", None)
        at = f"line {line}" if line is not None else self.at
        return f"{at}: {path}" if path else at

    def refuse(self, key: str | None, rule: str, path: str | None = None) -> Refused:
        return Refused(f"{self.file}: {self.where(key, path)}: {rule}; nothing was imported")


def read(data: str | bytes, name: str = "-", fmt: str | None = None) -> list[Entry]:
    """The entries of a file's bytes (`name` names it in messages; "-" is stdin). `fmt`: json, markdown or None
    (by the suffix of `name`, else by the first character)."""
    label = "stdin" if name == "-" else name
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise Refused(f"{label}: not UTF-8 text (byte {err.start}); nothing was imported") from None
    else:
        text = data
    text = text.removeprefix("\ufeff")
    fmt = fmt or guess_format(name, text)
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r}: json or markdown")
    return parse_json(text, label) if fmt == "json" else parse_markdown(text, label)


def guess_format(name: str, text: str) -> str:
    lower = name.lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith((".md", ".markdown", ".txt")):
        return "markdown"
    return "json" if text.lstrip()[:1] in ("[", "{") else "markdown"


# -- JSON -------------------------------------------------------------------------------------------------
def parse_json(text: str, file: str) -> list[Entry]:
    try:
        data = json.loads(text)
    except RecursionError:
        raise Refused(f"{file}: JSON nested too deep; nothing was imported") from None
    except ValueError as err:
        lineno, colno = getattr(err, "lineno", None), getattr(err, "colno", None)
        where = f"line {lineno} column {colno}: " if lineno is not None else ""
        raise Refused(f"{file}: {where}not JSON ({getattr(err, 'msg', err)}); nothing was imported") from None
    return entries_of(data, file)


def entries_of(data: Any, file: str = "tasks") -> list[Entry]:
    """The entries of JSON data: a list of task objects, or an object holding one under "tasks"."""
    prefix = ""
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        data, prefix = data["tasks"], "tasks"
    if not isinstance(data, list):
        raise Refused(f"{file}: expected a JSON list of tasks (or an object with one under \"tasks\"); "
                      "nothing was imported")
    out = []
    for i, item in enumerate(data):
        entry = Entry(file, f"{prefix}[{i}]", item if isinstance(item, dict) else {})
        if not isinstance(item, dict):
            raise entry.refuse(None, f"a task is a JSON object, not {type(item).__name__}")
        out.append(entry)
    return out


# -- Markdown ---------------------------------------------------------------------------------------------
def parse_markdown(text: str, file: str) -> list[Entry]:
    out: list[Entry] = []
    current: Entry | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        item = _ITEM.match(line)
        if item is not None:
            if item["indent"]:
                raise Refused(f"{file}: line {n}: a nested checklist item: write each task at the left margin "
                              "(`depends:` says what comes first); nothing was imported")
            box = item["box"]
            if box not in BOXES:
                raise Refused(f"{file}: line {n}: [{box}]: a checkbox is [ ] (to do), [x] (done) or [-] "
                              "(cancelled); nothing was imported")
            title = (item["title"] or "").strip()
            current = Entry(file, f"line {n}", {"title": title, "status": BOXES[box]},
                            {"title": n, "status": n})
            out.append(current)
            continue
        if _LOOKS_LIKE_ITEM.match(line):
            raise Refused(f"{file}: line {n}: not a checklist item: write `- [ ] TITLE` (a space inside the "
                          "brackets, and one after them); nothing was imported")
        if line[0] not in " \t":
            if _BULLET.match(line):
                raise Refused(f"{file}: line {n}: a list item without a checkbox: write `- [ ] TITLE` for a task "
                              "(or take it out of the list); nothing was imported")
            current = None  # a heading or prose at the margin ends the item above
            continue
        if current is None:
            continue  # indented prose outside any item
        _key_line(current, line, n)
    return out


def _key_line(entry: Entry, line: str, n: int) -> None:
    keys = ", ".join(sorted({k for k in MD_KEYS if "_" not in k and k not in ("acceptance", "label")}))
    found = _KEY_LINE.match(line)
    if found is None:
        raise Refused(f"{entry.file}: line {n}: under a task, each line is `key: value` ({keys}); "
                      "nothing was imported")
    key, value = found["key"].lower(), found["value"]
    if key not in MD_KEYS:
        raise Refused(f"{entry.file}: line {n}: unknown key {found['key']!r} (under a task: {keys}); "
                      "nothing was imported")
    name, how = MD_KEYS[key]
    fields = entry.fields
    entry.lines.setdefault(name, n)
    if how == "one":
        if name in fields:
            raise Refused(f"{entry.file}: line {n}: {key}: said twice for one task; nothing was imported")
        fields[name] = value
    elif how == "list":
        fields.setdefault(name, []).append(value)
    elif how == "ids":
        fields.setdefault(name, []).extend(part for part in _ID_SPLIT.split(value) if part)
    elif how == "number":
        if name in fields:
            raise Refused(f"{entry.file}: line {n}: {key}: said twice for one task; nothing was imported")
        if not re.fullmatch(r"[0-9]{1,9}", value):
            raise Refused(f"{entry.file}: line {n}: {key}: {json.dumps(value)} is not a priority (0 highest … 4 "
                          "lowest); nothing was imported")
        fields[name] = int(value)  # the schema names one out of range
    elif how == "text":
        fields[name] = f"{fields[name]}\n{value}" if name in fields else value
    else:  # scope globs
        fields.setdefault("scope", {}).setdefault(name, []).append(value)
        entry.lines.setdefault("scope", n)


# -- the plan: ids, references, complete tasks ------------------------------------------------------------
def plan(board: dict[str, Any], entries: list[Entry], now: str,
         progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """The tasks the entries add to `board`, each complete and valid, ids allocated in file order; Refused
    naming the first bad entry (and the field), before anything is written."""
    on_board = {t.get("id") for t in board["tasks"]}
    number = 1 + max((int(t[2:]) for t in on_board if isinstance(t, str) and TASK_ID.match(t)), default=0)
    names: dict[str, str] = {}  # an id the file gives -> the id allocated
    later = {e.fields["id"]: e for e in entries if isinstance(e.fields.get("id"), str)}
    tasks = []
    total = len(entries)
    for i, entry in enumerate(entries):
        progressing.tick(progress, i, 2 * total)  # the second half: the events (Bench.import_tasks)
        new_id = f"T-{number:03d}"
        number += 1
        task = _task(entry, new_id, now, names, later, on_board)
        given = entry.fields.get("id")
        if given is not None:
            if not isinstance(given, str) or not TASK_ID.match(given):
                raise entry.refuse("id", f"{json.dumps(given)} is not a task id (T-001)")
            if given in names:
                raise entry.refuse("id", f"{given} names an earlier task of this file too")
            names[given] = new_id
        tasks.append(task)
    return tasks


def _task(entry: Entry, new_id: str, now: str, names: dict[str, str], later: dict[str, Entry],
          on_board: set[Any]) -> dict[str, Any]:
    given = entry.fields
    for key in KEPT_BY_WB:
        if key in given:
            raise entry.refuse(key, "kept by wb, not imported (a proof comes from `wb task done`, a claim from "
                                    "`wb task claim`, a block from `wb task block`): take it out")
    kind = given.get("kind", "build")
    task: dict[str, Any] = {
        "id": new_id,
        "kind": kind,
        "title": given.get("title"),
        "status": given.get("status", "todo"),
        "owner": given.get("owner", "reviewer" if kind == "review" else "builder"),
        "acceptance": given.get("acceptance", []),
        "depends_on": given.get("depends_on", []),
        "created_at": now,
        "updated_at": now,
    }
    for key, value in given.items():
        if key not in task and key not in STAMPED and key != "id":
            task[key] = value  # description, reviews, scope, and anything unknown (the schema names it)
    if isinstance(task["title"], str):
        task["title"] = task["title"].strip()
    if kind == "review" and "reviews" not in task:
        raise entry.refuse("reviews", "a review task names the task it reviews")
    if isinstance(task["depends_on"], list):
        task["depends_on"] = [_ref(entry, "depends_on", ref, names, later, on_board) for ref in task["depends_on"]]
    for key in ("reviews", "parent"):
        if isinstance(task.get(key), str):
            task[key] = _ref(entry, key, task[key], names, later, on_board)
    if task["status"] not in IMPORTED_STATUSES and isinstance(task["status"], str) and \
            task["status"] in ("in_progress", "blocked"):
        raise entry.refuse("status", f"{task['status']}: a task is imported as todo, done or cancelled; "
                                     f"`wb task start|block` it afterwards")
    if task["status"] == "done" and task["acceptance"]:
        raise entry.refuse("status", "done, with acceptance commands: `wb task done` runs them (import it as "
                                     "todo), or leave the commands out")
    try:
        task_problem(task)
    except Refused as err:
        raise entry.refuse(None, err.message.removeprefix("board.json: ")) from None
    try:
        schemas.check("board", {"schema_version": reducer.BOARD_VERSION, "last_event": 0, "tasks": [task]},
                      entry.file)
    except SchemaRefused as err:
        path = err.path.removeprefix("tasks[0]").lstrip(".")
        raise entry.refuse(re.split(r"[.\[]", path)[0] or None, err.rule, path or None) from None
    return task


def _ref(entry: Entry, key: str, ref: Any, names: dict[str, str], later: dict[str, Entry],
         on_board: set[Any]) -> Any:
    """The id a reference in the file means: a task named above in the file, else one on the board."""
    if not isinstance(ref, str) or not TASK_ID.match(ref):
        if isinstance(ref, str):
            raise entry.refuse(key, f"{json.dumps(ref)} is not a task id (T-001)")
        return ref  # the schema names it
    if ref in names:
        return names[ref]
    if later.get(ref) is entry:
        raise entry.refuse(key, f"{ref} is this task itself: a task cannot depend on itself")
    if ref in later:
        raise entry.refuse(key, f"{ref} comes later in the file: put it above the tasks that depend on it")
    if ref not in on_board:
        raise entry.refuse(key, f"no task {ref} on the board or above in the file (see `wb task list`)")
    return ref
