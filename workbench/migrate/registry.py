"""The registry of migrations and the migrations themselves: pure functions, documents in, documents out.

A kind's chain is checked at import (contiguous, ending at the version this wb writes, equal to the kind's
schema const). `workbench.migrate.apply` plans and writes; this module never touches the disk.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from workbench.model import reducer, schemas
from workbench.model.ids import TASK_ID
from workbench.model.jsonl import encode, line_hash

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


# -- the registry ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Kind:
    name: str
    file: str  # under .workbench/
    schema: str  # its JSON Schema (schemas/<schema>.schema.json)
    current: int  # the version this wb writes
    oldest: int  # the oldest version it can migrate


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("config", "config.yaml", "config", 1, 0),
    Kind("state", "state.md", "state", reducer.STATE_VERSION, 0),
    Kind("board", "board.json", "board", reducer.BOARD_VERSION, 0),
    Kind("events", "events.jsonl", "event", 1, 0),
    Kind("calls", "calls.jsonl", "call", 1, 1),  # born in version 1: nothing older to migrate
)}


@dataclass(frozen=True)
class Context:
    now: str  # when the migration runs (RFC 3339 UTC): the only value a migration may invent from outside


Fn = Callable[[Any, Context], Any]


@dataclass(frozen=True)
class Migration:
    kind: str
    source: int  # turns a version-`source` document into a version-`source + 1` one
    fn: Fn
    summary: str


REGISTRY: dict[str, list[Migration]] = {name: [] for name in KINDS}


def migration(kind: str, source: int, summary: str) -> Callable[[Fn], Fn]:
    """Register `fn(doc, ctx) -> doc` as the `kind` migration from version `source` to `source + 1`."""
    def register(fn: Fn) -> Fn:
        REGISTRY[kind].append(Migration(kind, source, fn, summary))
        return fn
    return register


class RegistryError(Exception):
    """The migration chains are broken: a wb bug, raised at import so it can never ship."""


def check_registry(registry: dict[str, list[Migration]], kinds: dict[str, Kind]) -> None:
    for name in registry:
        if name not in kinds:
            raise RegistryError(f"migrations registered for unknown kind {name!r}")
    for name, kind in kinds.items():
        sources = [m.source for m in registry.get(name, [])]
        expected = list(range(kind.oldest, kind.current))
        if sources != expected:
            raise RegistryError(f"{name} migrations go {sources}; expected one per version step {expected}, in "
                                f"order, ending at the current version {kind.current}")
        const = schemas.load_schema(kind.schema)["properties"]["schema_version"].get("const")
        if const != kind.current:
            raise RegistryError(f"schemas/{kind.schema}.schema.json: schema_version const {const} but this wb "
                                f"writes {name} version {kind.current}; bump both together")


def upgrade(kind: str, doc: Any, version: int, ctx: Context) -> Any:
    """`doc` (at `version`) through every later migration of `kind`: a document at the current version."""
    doc = copy.deepcopy(doc)
    for step in REGISTRY[kind][version - KINDS[kind].oldest:]:
        doc = step.fn(doc, ctx)
    return doc


# -- the migrations ----------------------------------------------------------------------------------------
def _strings(value: Any) -> Any:
    """wb 0.0.x wrote absent lists as null and single items as a bare string."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else copy.deepcopy(value)


def _timestamp(value: Any, ctx: Context) -> str:
    return value if isinstance(value, str) and TIMESTAMP.match(value) else ctx.now


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


@migration("config", 0, "add schema_version; git.commit true/false becomes every/off")
def config_0_to_1(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    out: dict[str, Any] = {"schema_version": 1}
    out.update((k, copy.deepcopy(v)) for k, v in doc.items() if k != "schema_version")
    git = out.get("git")
    if isinstance(git, dict) and isinstance(git.get("commit"), bool):
        git["commit"] = "every" if git["commit"] else "off"
    return out


V0_STATE_STATUS = {"pending": "idle", "done": "completed", "error": "failed", "stopped": "paused"}


@migration("state", 0, "counters gathered under `counters`, risks → blockers, current_task → active_task_id, "
                       "last_event and session added; values v1 has no field for are kept in the decision log")
def state_0_to_1(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    fm = copy.deepcopy(doc["frontmatter"])
    body: str = doc["body"]
    for derived in ("schema_version", "updated_at", "last_event"):
        fm.pop(derived, None)
    old_counters = fm.pop("counters", None)
    counters = {name: 0 for name in reducer.COUNTERS}
    for name in reducer.COUNTERS:
        legacy = fm.pop(name, None)
        if legacy is not None:
            counters[name] = legacy
    if isinstance(old_counters, dict):
        counters.update(old_counters)
    active = fm.pop("active_task_id", None)
    current = fm.pop("current_task", None)
    if active is None and isinstance(current, str) and TASK_ID.match(current):
        active, current = current, None
    status = fm.pop("status", "idle")
    state = {
        "schema_version": 1,
        "status": V0_STATE_STATUS.get(status, status) if isinstance(status, str) else status,
        "updated_at": ctx.now,
        "active_task_id": active,
        "next_action": fm.pop("next_action", None) or "",
        "touched_files": _strings(fm.pop("touched_files", None)),
        "assumptions": _strings(fm.pop("assumptions", None)),
        "blockers": _strings(fm.pop("blockers", None)) + _strings(fm.pop("risks", None)),
        "counters": counters,
        "last_event": 0,
        "session": fm.pop("session", None),
    }
    kept = ({"current_task": current} if current is not None else {}) | fm
    if kept:
        lines = "\n".join(f"- {key}: {compact_json(value)}" for key, value in kept.items())
        text = ("Migrated state.md from version 0 (wb 0.0.x). Version 1 has no field for these values, so "
                f"they are kept here:\n\n{lines}")
        body = (body.rstrip("\n") or reducer.EMPTY_BODY.rstrip("\n")) + "\n" + reducer.note_entry(ctx.now, "wb", text)
    elif not body.strip():
        body = reducer.EMPTY_BODY
    return {"frontmatter": state, "body": body}


@migration("state", 1, "state.md may carry `memory` (notes and assumptions about paths, stale once a commit "
                       "changes them) and `next_action_set` (issue 22); both are optional, so no value changes")
def state_1_to_2(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"frontmatter": {**copy.deepcopy(doc["frontmatter"]), "schema_version": 2}, "body": doc["body"]}


V0_TASK_STATUS = {"pending": "todo", "open": "todo", "active": "in_progress", "in-progress": "in_progress",
                  "completed": "done", "failed": "blocked", "canceled": "cancelled"}
FAILED_REASON = "failed under wb 0.0.x: retry it (wb task start) or cancel it"


@migration("board", 0, "tasks gain kind, owner, acceptance, depends_on and timestamps; status pending/completed/"
                       "failed → todo/done/blocked; ids that are not T-NNN are renumbered")
def board_0_to_1(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    rest = {k: copy.deepcopy(v) for k, v in doc.items() if k not in ("schema_version", "last_event", "tasks")}
    old = doc.get("tasks", [])
    if not isinstance(old, list):  # left for the schema check to name
        return {"schema_version": 1, "last_event": 0, "tasks": copy.deepcopy(old), **rest}
    valid: list[str] = [t["id"] for t in old if isinstance(t, dict) and isinstance(t.get("id"), str)
                        and TASK_ID.match(t["id"])]
    highest = max((int(tid[2:]) for tid in valid), default=0)
    new_ids: list[str] = []
    renamed: dict[str, str] = {}
    for task in old:
        tid = task.get("id") if isinstance(task, dict) else None
        if isinstance(tid, str) and TASK_ID.match(tid) and tid not in new_ids:
            new_ids.append(tid)
            continue
        highest += 1
        new_ids.append(f"T-{highest:03d}")
        if isinstance(tid, str) and tid not in renamed and tid not in valid:
            renamed[tid] = new_ids[-1]
    tasks = [_task_0_to_1(t, tid, renamed, ctx) if isinstance(t, dict) else copy.deepcopy(t)
             for t, tid in zip(old, new_ids, strict=True)]
    return {"schema_version": 1, "last_event": 0, "tasks": tasks, **rest}  # then board_1_to_2


def _task_0_to_1(old: dict[str, Any], tid: str, renamed: dict[str, str], ctx: Context) -> dict[str, Any]:
    t = copy.deepcopy(old)
    old_id = t.pop("id", None)
    kind = t.pop("kind", None) or ("review" if "reviews" in t else "build")
    status = t.pop("status", "todo")
    task: dict[str, Any] = {"id": tid, "kind": kind}
    title = t.pop("title", None) or t.pop("name", None)
    if title is not None:
        task["title"] = title
    task["status"] = V0_TASK_STATUS.get(status, status) if isinstance(status, str) else status
    task["owner"] = t.pop("owner", None) or ("reviewer" if kind == "review" else "builder")
    task["acceptance"] = _strings(t.pop("acceptance", None))
    deps = t.pop("depends_on", None)
    deps = t.pop("deps", None) if deps is None else deps
    task["depends_on"] = [renamed.get(d, d) if isinstance(d, str) else d for d in _strings(deps)]
    task["created_at"] = _timestamp(t.pop("created_at", None), ctx)
    task["updated_at"] = _timestamp(t.pop("updated_at", None), ctx)
    description = t.pop("description", None)
    reason = t.pop("blocked_reason", None) or (FAILED_REASON if status == "failed" else None)
    for key in ("forced_done", "reviews"):
        if key in t:
            value = t.pop(key)
            task[key] = renamed.get(value, value) if isinstance(value, str) else value
    notes = [f"id: {compact_json(old_id)}"] if old_id != tid else []
    notes += [f"{k}: {compact_json(v)}" for k, v in t.items()]
    if notes:  # keys v1 has no field for: kept in the description rather than dropped
        kept = "Kept from wb 0.0.x: " + "; ".join(notes)
        description = f"{description}\n\n{kept}" if description else kept
    if description is not None:
        task["description"] = description
    if reason is not None:
        task["blocked_reason"] = reason
    return task


@migration("board", 1, "tasks may carry priority, labels, parent, assignee and comments (issue 22); a task without "
                       "a priority is priority 2, so no task changes")
def board_1_to_2(doc: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {**copy.deepcopy(doc), "schema_version": 2}


def _legacy_id(ts: str, seq: int, record: Any) -> str:
    """A deterministic ULID for a pre-release event: its time, then its seq, then a hash of its content."""
    try:
        ms = int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        ms = 0
    digest = hashlib.sha256(f"{seq}\n{compact_json(record)}".encode()).digest()
    value = (max(ms, 0) % (1 << 48)) << 80 | (seq % (1 << 32)) << 48 | int.from_bytes(digest[:6], "big")
    return "".join(_CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))


@migration("events", 0, "pre-release event lines become `legacy.event` events (the line kept whole in the "
                        "payload) with seq, id, actor and the hash chain")
def events_0_to_1(records: list[Any], ctx: Context) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    prev: str | None = None
    ts = ctx.now
    for seq, record in enumerate(records, start=1):
        rec = copy.deepcopy(record)
        if isinstance(rec, dict) and isinstance(rec.get("ts"), str) and TIMESTAMP.match(rec["ts"]):
            ts = rec["ts"]
        actor = rec.get("actor") if isinstance(rec, dict) else None
        event = {"schema_version": 1, "seq": seq, "id": _legacy_id(ts, seq, rec), "ts": ts, "type": "legacy.event",
                 "actor": actor if actor in ("agent", "human", "wb") else "agent", "session": None,
                 "payload": {"record": rec}, "prev": prev}
        prev = line_hash(encode(event))
        out.append(event)
    return out


check_registry(REGISTRY, KINDS)
