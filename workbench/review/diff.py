"""`wb diff`: what changed in the agent's state between two revisions, by meaning rather than by line.

The two sides (workbench.review.sides) are compared file by file — state.md field by field and entry by entry,
board.json task by task, the logs by what was appended (workbench.review.parse), with the harness story those
events tell (workbench.review.story). The result is one plain, JSON-able dict (documented in docs/diff.md,
schema in schemas/diff.schema.json) that the CLI renders as text, Markdown or JSON. Nothing here prints or
imports typer/rich.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.errors import Refused, WorkbenchError
from workbench.model import jsonl
from workbench.model.proof import unproven
from workbench.model.redaction import redact, secret_values
from workbench.review.logpoints import LogSides, resolve_sides
from workbench.review.parse import (
    appended_lines,
    complete_lines,
    last_seq,
    log_entries,
    parse_board,
    parse_config,
    parse_records,
    parse_state,
    session_summary,
)
from workbench.review.sides import Side, aligned_logs
from workbench.review.story import harness_summary

SCHEMA_VERSION = 1
NOISY_STATE = ("updated_at", "last_event")  # change on every write: shown only with --all
# issue 31: what wb notes about a change (when next_action was set, and what was going on then) — the change
# itself (next_action's text) is what a reviewer reads; its bookkeeping is shown only with --all
BOOKKEEPING_STATE = ("next_action_set",)
NOISY_TASK = ("updated_at", "start_head", "proof")  # issue 16: the proof is shown under `done`


# -- comparing --------------------------------------------------------------------------------------------
_ABSENT = object()


def _change(name: str, old: Any, new: Any) -> dict[str, Any]:
    """{field, old, new}; a key is left out when the field does not exist on that side."""
    out: dict[str, Any] = {"field": name}
    if old is not _ABSENT:
        out["old"] = old
    if new is not _ABSENT:
        out["new"] = new
    return out


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value and not (not prefix and key == "session"):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def field_changes(old: dict[str, Any], new: dict[str, Any], skip: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    changes = []
    for key in list(old) + [k for k in new if k not in old]:
        if key in skip:
            continue
        a, b = old.get(key, _ABSENT), new.get(key, _ABSENT)
        if a != b:
            changes.append(_change(key, a, b))
    return changes


def _both_sides(parse: Callable[[bytes | None], Any], raws: tuple[bytes | None, bytes | None], absent: Any,
                warnings: list[str], labels: tuple[str, str]) -> list[Any]:
    """Each side parsed; a side that cannot be read is compared as `absent`, with a warning naming it."""
    parsed = []
    for raw, label in zip(raws, labels, strict=True):
        try:
            parsed.append(parse(raw))
        except Refused as err:
            warnings.append(f"{err} (at {label}; compared as absent)")
            parsed.append(absent)
    return parsed


def diff_state(old_raw: bytes | None, new_raw: bytes | None, all_fields: bool,
               warnings: list[str], labels: tuple[str, str]) -> dict[str, Any]:
    (old, old_body), (new, new_body) = _both_sides(parse_state, (old_raw, new_raw), (None, ""), warnings, labels)
    out: dict[str, Any] = {"fields": [], "session": None, "decision_log": {"added": [], "removed": []}}
    if old_raw == new_raw:
        return out
    hidden = ("session",) if all_fields else ("session", *BOOKKEEPING_STATE)
    old_flat = _flatten({k: v for k, v in (old or {}).items() if k not in hidden})
    new_flat = _flatten({k: v for k, v in (new or {}).items() if k not in hidden})
    out["fields"] = field_changes(old_flat, new_flat, () if all_fields else NOISY_STATE)
    if (old or {}).get("session") != (new or {}).get("session"):
        before, after = session_summary((old or {}).get("session")), session_summary((new or {}).get("session"))
        if before != after or all_fields:
            out["session"] = {"old": before, "new": after}
    if old_body != new_body:
        cut = shared_entries(old_body, new_body)  # entries both sides hold in the same place cancel out
        a, b = log_entries(old_body[cut:]), log_entries(new_body[cut:])
        remaining = Counter(json.dumps(e, sort_keys=True) for e in a)
        for entry in b:
            key = json.dumps(entry, sort_keys=True)
            if remaining[key]:
                remaining[key] -= 1
            else:
                out["decision_log"]["added"].append(entry)
        kept = Counter(json.dumps(e, sort_keys=True) for e in b)
        for entry in a:
            key = json.dumps(entry, sort_keys=True)
            if kept[key]:
                kept[key] -= 1
            else:
                out["decision_log"]["removed"].append(entry)
    return out


def shared_entries(a: str, b: str, block: int = 1 << 16) -> int:
    """Where the decision-log entries two bodies share from their start end: the start of the last `### `
    heading line inside their common prefix (0: none). Every entry before it is the same on both sides and in
    the same place, so it is matched on either side whatever the rest holds: only what follows is compared
    (issue 33: a log grows at its end; 50,000 entries each side were parsed and encoded four times)."""
    n = min(len(a), len(b))
    same = 0
    while same < n and a[same:same + block] == b[same:same + block]:  # compared in C, a block at a time
        same += block
    same = min(same, n)
    if same < n:
        end = min(same + block, n)
        while same < end and a[same] == b[same]:
            same += 1
    line = a.rfind("\n### ", 0, same)  # a line of its own for splitlines too: a newline ends one there
    return line + 1 if line >= 0 else 0


def _holding(board: dict[str, Any], task_id: str) -> dict[str, Any] | None:
    from workbench.model.archive import holding

    return holding(board, task_id)


def diff_board(old_raw: bytes | None, new_raw: bytes | None, all_fields: bool,
               warnings: list[str], labels: tuple[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"fields": [], "added": [], "removed": [], "changed": []}
    if old_raw == new_raw:
        return out
    old, new = _both_sides(lambda raw: parse_board(raw) or {}, (old_raw, new_raw), {}, warnings, labels)
    skip = ("archive",) if all_fields else ("last_event", "archive")  # the archive: as `archived` tasks
    out["fields"] = field_changes({k: v for k, v in old.items() if k != "tasks"},
                                  {k: v for k, v in new.items() if k != "tasks"}, skip)
    old_tasks = {t.get("id"): t for t in old.get("tasks", []) if isinstance(t, dict)}
    new_tasks = {t.get("id"): t for t in new.get("tasks", []) if isinstance(t, dict)}
    task_skip = () if all_fields else NOISY_TASK
    for tid, task in new_tasks.items():
        before = old_tasks.get(tid)
        if before is None:
            out["added"].append(task)
        elif before != task:
            changes = field_changes(before, task, task_skip)
            if changes:
                entry = {"id": tid, "title": task.get("title"), "changes": changes}
                if before.get("acceptance") != task.get("acceptance"):  # what `wb task done` runs is not the same
                    entry["acceptance_changed"] = True
                why = unproven(task)
                if why and before.get("status") != "done":  # issue 30: done, but its acceptance never passed
                    entry["unproven"] = why
                out["changed"].append(entry)
    gone = [t for tid, t in old_tasks.items() if tid not in new_tasks]
    # the board's archive (issue 20): a task that left the board for a sealed segment is archived, not removed
    archived = [{**t, "archived": ref["file"]} for t in gone
                for ref in [_holding(new, str(t.get("id")))] if ref is not None and not _holding(old, t["id"])]
    if archived:  # present only then: a diff without the archive reads as it always did
        out["archived"] = archived
    moved = {t["id"] for t in archived}
    out["removed"] = [t for t in gone if t.get("id") not in moved]
    return out


def diff_config(old_raw: bytes | None, new_raw: bytes | None, warnings: list[str],
                labels: tuple[str, str]) -> dict[str, Any]:
    """Changed settings, flattened to dotted names (tools.tag.mode). Tools, their modes and hooks decide what
    an agent may run unasked, so a reviewer must see a change to them."""
    out: dict[str, Any] = {"fields": []}
    if old_raw == new_raw:
        return out
    parsed = _both_sides(lambda raw: parse_config(raw) or {}, (old_raw, new_raw), {}, warnings, labels)
    flat = [{k: v for k, v in _flatten(c).items() if v != {}} for c in parsed]  # `tools: {}` is no tools
    out["fields"] = field_changes(flat[0], flat[1])
    return out


def diff_events(old_raw: bytes | None, new_raw: bytes | None, warnings: list[str]) -> dict[str, Any]:
    old, new = complete_lines(old_raw), complete_lines(new_raw)
    lines, removed, rewritten = appended_lines(old, new)
    events = parse_records(lines, "events.jsonl", warnings)
    if rewritten:  # a merge interleaves both sides' events (merge.interleave), numbers them again: compare by id
        old_events = parse_records(jsonl.split_lines(old)[0], "events.jsonl", [])
        new_events = parse_records(jsonl.split_lines(new)[0], "events.jsonl", [])
        old_ids = {e.get("id") for e in old_events}
        new_ids = {e.get("id") for e in new_events}
        gone = len(old_ids - new_ids)
        if not all(isinstance(e.get("id"), str) for e in old_events + new_events):
            pass  # events without ids cannot be matched: the lines decide
        elif not gone:
            events, removed, rewritten = [e for e in new_events if e.get("id") not in old_ids], 0, False
        elif new_ids <= old_ids:  # the other way: the older side lacks what the merge brought
            events, removed, rewritten = [], gone, False
    seqs = [e["seq"] for e in events if isinstance(e.get("seq"), int)]
    out: dict[str, Any] = {
        "old_last_seq": last_seq(old),
        "new_last_seq": last_seq(new),
        "appended": len(events),
        "first_seq": min(seqs) if seqs else None,
        "last_seq": max(seqs) if seqs else None,
        "removed": removed,
        "rewritten": rewritten,
        "by_type": dict(Counter(str(e.get("type")) for e in events).most_common()),
    }
    out.update(harness_summary(events, new))
    return out


def diff_calls(old_raw: bytes | None, new_raw: bytes | None, warnings: list[str]) -> dict[str, Any]:
    lines, removed, rewritten = appended_lines(complete_lines(old_raw), complete_lines(new_raw))
    records = parse_records(lines, "calls.jsonl", warnings)
    return {
        "added": len(records),
        "removed": removed,
        "rewritten": rewritten,
        "by_status": dict(Counter(str(r.get("status")) for r in records).most_common()),
        "by_tool": dict(Counter(str(r.get("tool")) for r in records).most_common()),
        "records": [{k: r.get(k) for k in ("key", "session", "step", "tool", "status", "error")} for r in records],
    }


# -- proof of done (issue 16): each task.done appended, with its checks, scope verdict and whether forced --
def done_proofs(old_raw: bytes | None, new_raw: bytes | None) -> list[dict[str, Any]]:
    lines, _removed, _rewritten = appended_lines(complete_lines(old_raw), complete_lines(new_raw))
    out = []
    for e in parse_records(lines, "events.jsonl", []):
        if e.get("type") != "task.done" or not isinstance(e.get("payload"), dict):
            continue
        p = e["payload"]
        verdict = p.get("scope") if isinstance(p.get("scope"), dict) else {}
        out.append({
            "task": p.get("id"), "seq": e.get("seq"), "actor": e.get("actor"), "forced": bool(p.get("forced")),
            "head": p.get("head"),
            "checks": [{k: r.get(k) for k in ("cmd", "exit", "seconds", "sha256")}
                       for r in p.get("acceptance") or [] if isinstance(r, dict)],
            "scope_findings": [*verdict.get("forbidden", []), *verdict.get("findings", [])],
            **({"override": p["override"]} if p.get("override") else {}),
        })
    return out


# -- the whole diff ----------------------------------------------------------------------------------------
def compare(old: Side, new: Side, *, all_fields: bool = False) -> dict[str, Any]:
    """The diff of two sides, as the documented JSON shape (docs/diff.md, schemas/diff.schema.json)."""
    warnings: list[str] = []
    labels = (old.label, new.label)
    state = diff_state(old.files.get("state.md"), new.files.get("state.md"), all_fields, warnings, labels)
    board = diff_board(old.files.get("board.json"), new.files.get("board.json"), all_fields, warnings, labels)
    old_log, new_log = aligned_logs(old, new)  # a seal between the two sides moved events into log/
    events = diff_events(old_log, new_log, warnings)
    calls = diff_calls(old.files.get("calls.jsonl"), new.files.get("calls.jsonl"), warnings)
    config = diff_config(old.files.get("config.yaml"), new.files.get("config.yaml"), warnings, labels)
    changed = bool(
        state["fields"] or state["session"] or state["decision_log"]["added"] or state["decision_log"]["removed"]
        or board["fields"] or board["added"] or board["removed"] or board["changed"] or board.get("archived")
        or events["appended"] or events["removed"] or calls["added"] or calls["removed"] or config["fields"]
    )
    done = done_proofs(old_log, new_log)  # issue 16
    return {
        "schema_version": SCHEMA_VERSION,
        "old": old.describe(),
        "new": new.describe(),
        "changed": changed,
        "state": state,
        "board": board,
        "events": events,
        "calls": calls,
        "config": config,
        "done": done,
        "warnings": warnings,
    }


def diff(root: Path, revs: list[str], *, all_fields: bool = False, default_base: str = "HEAD",
         points: LogSides | None = None) -> dict[str, Any]:
    """`wb diff [REV [REV]]` as data; `points`: the workbench's event log, for the sides that name a point in
    it (`@SEQ`, review/logpoints.py) and for a workbench kept in SQLite."""
    old, new = resolve_sides(root, revs, default_base, points)
    return redact(compare(old, new, all_fields=all_fields), _secrets(root, old, new))


def _secrets(root: Path, *sides: Side) -> list[str]:
    """The secret values named by `redact` in config.yaml of either side or of the working tree: a hand edit,
    an older commit or another branch may hold one."""
    from workbench.model.layout import WB_DIR

    raws = [side.files.get("config.yaml") for side in sides]
    try:
        raws.append((root / WB_DIR / "config.yaml").read_bytes())
    except OSError:
        pass
    names: list[str] = []
    for raw in raws:
        try:
            config = parse_config(raw) or {}
        except WorkbenchError:
            continue
        listed = config.get("redact")
        names += [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    return secret_values({"redact": names})
