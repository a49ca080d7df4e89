"""The tools `wb mcp` serves, as data (`SPECS`): each one's name, a terse description, an input schema that
refuses unknown arguments (`additionalProperties: false`), an output schema, and the four annotations, each set
on purpose; `check_arguments` checks a call's arguments against its input schema before wb is called (a bad one
is one line naming the argument), and `listed_tools` is the table as `tools/list` puts it on the wire. Every byte
of `tools/list` is spent from the agent's context in each session, so descriptions are short and schemas carry
no titles. The bodies are integrations/mcpcalls.py's; serving, integrations/mcpserve.py's. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from workbench.errors import UsageError

INSTRUCTIONS = (
    "wb keeps this repository's agent state (task board, decision log, event log) and records every change: "
    "in .workbench/, committed to git, or in its SQLite database. Call status first each session: it names the "
    "active task or the tasks ready to start; record work with task_add, task_update, note and set_state."
)

# -- the tools, as data -----------------------------------------------------------------------------------
STATUSES = ["todo", "in_progress", "blocked", "done", "cancelled"]
TASK_FIELDS = ["id", "kind", "title", "status", "owner", "acceptance", "depends_on", "description", "reviews",
               "blocked_reason", "forced_done", "created_at", "updated_at", "scope", "proof", "claim", "priority",
               "labels", "parent", "assignee", "comments"]
TASK_DEFAULT_FIELDS = ["id", "status", "title"]
TASK_FILTERS = ("ready", "blocked", "label", "priority", "parent", "assignee", "search")  # api.TASK_FILTERS
EVENT_FIELDS = ["seq", "ts", "type", "actor", "session", "summary", "payload"]
EVENT_DEFAULT_FIELDS = ["seq", "type", "actor", "summary"]
LIST_LIMIT, LOG_LIMIT = 20, 10  # default page sizes, and a default page stops at PAGE_BYTES of JSON too,
PAGE_BYTES = 1600                # so a page with its text copy stays under 4 KB however long the titles

STR = {"type": "string"}
TEXT = {"type": "string", "minLength": 1}
INT = {"type": "integer"}
STRS = {"type": "array", "items": STR}
BOOL = {"type": "boolean"}


def _in(props: dict[str, Any], *required: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def _out(*required: str) -> dict[str, Any]:
    """An output schema: the keys that make the answer what it is (every answer has more: summary, commit and
    warnings for a write, total for a page, reason for an outcome; docs/integrations.md and docs/json.md). A
    client validates structuredContent against it and no model reads it, so it spends few of tools/list's
    6,144 bytes, which the 2026-07-28 protocol's envelope shares."""
    return {"type": "object", "required": list(required)}


def _page(limit: int, most: int, fields: list[str] | None) -> dict[str, Any]:
    """A page's arguments; `fields` None: any task key (checked by the tool, as TASK_FIELDS: the names would
    cost tools/list more bytes than the filters they make room for)."""
    return {"limit": {"type": "integer", "minimum": 1, "maximum": most, "default": limit},
            "offset": {"type": "integer", "minimum": 0},
            "fields": {"type": "array", "items": {"enum": fields} if fields else STR}}


OBJ = {"type": "object"}
WRITTEN = _out("commit")
OUTCOME = _out("done", "state")


class Spec(NamedTuple):
    description: str
    input: dict[str, Any]
    output: dict[str, Any]
    # readOnlyHint, destructiveHint, idempotentHint, openWorldHint: all four, on every tool
    hints: tuple[bool, bool, bool, bool]


READ = (True, False, True, False)


def hints_of(spec: Spec) -> dict[str, bool]:
    """The four hints, as the SDK's ToolAnnotations takes them. A read-only tool says readOnlyHint and
    openWorldHint alone: the specification makes destructiveHint and idempotentHint meaningful only when
    readOnlyHint is false (and every byte of tools/list is spent from each agent session's context)."""
    read_only, destructive, idempotent, open_world = spec.hints
    if read_only:
        return {"read_only_hint": True, "open_world_hint": open_world}
    return {"read_only_hint": False, "destructive_hint": destructive, "idempotent_hint": idempotent,
            "open_world_hint": open_world}
SPECS: dict[str, Spec] = {
    "status": Spec("Start here: active/ready tasks, next action, blockers, session.",
                   _in({}), _out("status", "next_action"), READ),
    "task_list": Spec("Tasks in board order, a page at a time.",
                      _in({"status": {"enum": STATUSES}, "where": {**OBJ, "description": ",".join(TASK_FILTERS)},
                           **_page(LIST_LIMIT, 500, None)}),
                      _out("tasks", "next_offset"), READ),
    "task_add": Spec("Add a task; returns it with its id.",
                     _in({"title": TEXT, "acceptance": {**STRS, "description": "must exit 0 for done"},
                          "kind": {"enum": ["build", "review"]}, "reviews": STR,
                          "owner": {"enum": ["builder", "reviewer", "human"]}, "depends_on": STRS,
                          "description": STR, "scope": OBJ, "priority": INT, "labels": STRS, "parent": STR,
                          "assignee": STR}, "title"),
                     _out("task"), (False, False, False, False)),
    "task_update": Spec("start, done (runs acceptance; force: recorded), block (reason) or set (changes).",
                        _in({"id": TEXT, "action": {"enum": ["start", "done", "block", "set"]}, "reason": STR,
                             "changes": OBJ, "force": BOOL}, "id", "action"),
                        _out("task"), (False, True, False, True)),
    "note": Spec("Append a decision or finding to the log.", _in({"text": TEXT}, "text"), WRITTEN,
                 (False, False, False, False)),
    "set_state": Spec("Set next_action, status, active_task_id, blockers, assumptions or touched_files.",
                      _in({"changes": OBJ}, "changes"),
                      _out("state"), (False, True, True, False)),
    "log": Spec("Events, a page at a time: the newest (offset counts back), oldest first.",
                _in({"type": {"type": "string", "description": "e.g. task.done"},
                     **_page(LOG_LIMIT, 200, EVENT_FIELDS)}),
                _out("events", "next_offset"), READ),
    "run": Spec("Run a harness session (plan file or steps) to its end or a yield.",
                _in({"goal": TEXT, "plan": STR, "steps": {"type": "array", "items": OBJ,
                                                           "description": "[{description, tool?, args?, mode?}]"},
                     "max_turns": INT, "max_tool_calls": INT, "max_seconds": {"type": "number"}}, "goal"),
                OUTCOME, (False, True, False, True)),
    "resume": Spec("Resume the live session after a yield/pause.",
                   _in({"decision": {"enum": ["approve", "deny"]}, "result": {"not": {"type": "null"}}, "error": STR,
                        "extend": {"type": "object", "description": "{turns|tool_calls|seconds: N}"},
                        "retry": BOOL, "skip": BOOL, "yield_id": STR, "plan": STR}),
                   OUTCOME, (False, True, False, True)),
    "abort": Spec("End the live session (its events stay).", _in({"reason": TEXT}, "reason"),
                  OUTCOME, (False, True, True, False)),
    "claim": Spec("Claim a task across clones (no id: first ready); lease e.g. 30m.",
                  _in({"id": STR, "agent": STR, "lease": STR}), OBJ, (False, False, False, True)),
    "sync": Spec("Fetch, merge and push the shared state (git.ref).", _in({"remote": STR}),
                 _out("up_to_date", "pushed"), (False, False, True, True)),
}
TOOLS = tuple(SPECS)


# -- arguments --------------------------------------------------------------------------------------------
def check_arguments(tool: str, schema: dict[str, Any], args: Any) -> dict[str, Any]:
    """`args` checked against the tool's input schema (the subset of JSON Schema the schemas above use), less
    the nulls (a default is the body's own); a UsageError of one line naming the argument otherwise."""
    if not isinstance(args, dict):
        raise UsageError(f"{tool}: arguments are a JSON object")
    props = schema["properties"]
    unknown = [k for k in args if k not in props]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], list(props), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        allowed = ", ".join(props) or "none"
        raise UsageError(f"{tool}: unknown argument {', '.join(map(repr, unknown))}{hint}; allowed: {allowed}")
    for name in schema.get("required", []):
        if args.get(name) is None:
            raise UsageError(f"{tool}: {name} is required")
    out = {}
    for name, rule in props.items():
        if name in args and args[name] is not None:
            _check(f"{tool}: {name}", rule, args[name])
            out[name] = args[name]
    return out


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "array": lambda v: isinstance(v, list), "object": lambda v: isinstance(v, dict), "null": lambda v: v is None,
}


def _check(where: str, rule: dict[str, Any], value: Any) -> None:
    kinds = rule.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_TYPES[k](value) for k in names):
            raise UsageError(f"{where}: expected {' or '.join(names)}, got {json.dumps(value, ensure_ascii=False)}")
    if "enum" in rule and value not in rule["enum"]:
        raise UsageError(f"{where}: {json.dumps(value, ensure_ascii=False)} is not one of "
                         f"{', '.join(map(str, rule['enum']))}")
    if isinstance(value, str) and len(value.strip()) < rule.get("minLength", 0):
        raise UsageError(f"{where}: must not be empty")
    if "minimum" in rule and value < rule["minimum"] or "maximum" in rule and value > rule["maximum"]:
        raise UsageError(f"{where}: {value} is out of range {rule.get('minimum', '')}..{rule.get('maximum', '')}")
    if isinstance(value, list) and "items" in rule:
        for i, item in enumerate(value):
            _check(f"{where}[{i}]", rule["items"], item)


def listed_tools() -> list[dict[str, Any]]:
    """The tools/list entries as they go on the wire (the fast path answers with these; the SDK is given the
    same, and a test compares what each lists)."""
    def camel(hint: str) -> str:
        head, *rest = hint.split("_")
        return head + "".join(word.title() for word in rest)

    return [{"name": name, "description": spec.description, "inputSchema": spec.input, "outputSchema": spec.output,
             "annotations": {camel(k): v for k, v in hints_of(spec).items()}} for name, spec in SPECS.items()]
