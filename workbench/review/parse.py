"""A side's files read for review: tolerant parsers of state.md, board.json and config.yaml, the decision
log's entries and the live session, and the append-only logs read by what was appended.

The event log and the call journal are append-only, so "what was appended" is a byte-prefix test followed by
parsing only the new lines: the cost follows the size of the change, not of the history.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.errors import Refused
from workbench.model import boardfile, configfile, jsonl


# -- the documents --------------------------------------------------------------------------------------
def parse_state(raw: bytes | None) -> tuple[dict[str, Any] | None, str]:
    """(frontmatter, decision-log body) of state.md; (None, "") when absent. Raises Refused when broken."""
    if raw is None:
        return None, ""
    from workbench.model import statefile

    return statefile.read_plain(raw)


def parse_board(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    data = boardfile.parse_board(raw)
    if not boardfile.has_task_list(data, required=False):
        raise Refused("board.json: not an object with a list of tasks with string ids")
    return data


def parse_config(raw: bytes | None) -> dict[str, Any] | None:
    """config.yaml as written (not merged over the defaults: the diff shows what someone changed)."""
    if raw is None:
        return None
    return configfile.settings(raw) or {}


# -- the decision log and the live session --------------------------------------------------------------
_ENTRY = re.compile(r"^### (?P<ts>\S+) · (?P<actor>.+?)\s*$")


def log_entries(body: str) -> list[dict[str, Any]]:
    """The decision-log entries of a state.md body: each `### TS · ACTOR` heading and the text below it."""
    entries: list[dict[str, Any]] = []
    current: list[str] | None = None
    heading = ""
    for line in body.splitlines():
        if line.startswith("### "):
            if current is not None:
                entries.append(_entry(heading, current))
            heading, current = line, []
        elif current is not None:
            current.append(line)
    if current is not None:
        entries.append(_entry(heading, current))
    return entries


def _entry(heading: str, lines: list[str]) -> dict[str, Any]:
    m = _ENTRY.match(heading)
    text = "\n".join(lines).strip("\n")
    if m:
        return {"ts": m["ts"], "actor": m["actor"], "text": text}
    return {"ts": None, "actor": None, "heading": heading[4:].strip(), "text": text}


def session_summary(session: Any) -> dict[str, Any] | None:
    """What a reviewer needs of state.md's live `session`: which, for what, where it is, what it waits on."""
    if not isinstance(session, dict):
        return None
    plan = session.get("plan")
    plan = plan if isinstance(plan, list) else []
    pending = session.get("pending")
    return {
        "id": session.get("id"),
        "goal": session.get("goal"),
        "harness_state": session.get("harness_state"),
        "step_index": session.get("step_index"),
        "steps": len(plan),
        "pending": ({"kind": pending.get("kind"), "reason": pending.get("reason")}
                    if isinstance(pending, dict) else None),
    }


# -- the append-only logs: what was appended ---------------------------------------------------------
def complete_lines(raw: bytes | None) -> bytes:
    """The bytes of a JSONL log up to its last complete batch: a torn last line (no newline) and the lines of a
    batch cut short (every line but a batch's last carries `more`) were never acknowledged."""
    if not raw:
        return b""
    data = raw[: raw.rfind(b"\n") + 1]
    while data:
        start = data.rfind(b"\n", 0, len(data) - 1) + 1
        last = jsonl.loads_record(data[start:])
        if not (last and last.get("more")):
            break
        data = data[:start]
    return data


def appended_lines(old: bytes, new: bytes) -> tuple[list[bytes], int, bool]:
    """(lines of `new` after what it shares with `old`, lines of `old` not in `new`, rewritten?)."""
    if new.startswith(old):
        return jsonl.split_lines(new[len(old):])[0], 0, False
    old_lines, new_lines = jsonl.split_lines(old)[0], jsonl.split_lines(new)[0]
    if old.startswith(new):
        return [], len(old_lines) - len(new_lines), False  # a diff backwards in time
    shared = 0
    for a, b in zip(old_lines, new_lines, strict=False):
        if a != b:
            break
        shared += 1
    return new_lines[shared:], len(old_lines) - shared, True


def parse_records(lines: list[bytes], file: str, warnings: list[str]) -> list[dict[str, Any]]:
    found, damaged = jsonl.records(lines)
    warnings.extend(f"{file}: skipped a damaged line: {line[:60].decode(errors='replace')}" for _n, line in damaged)
    return found


def last_seq(log: bytes) -> int:
    if not log:
        return 0
    start = log.rfind(b"\n", 0, len(log) - 1) + 1
    record = jsonl.loads_record(log[start:])
    seq = record.get("seq", 0) if record else 0
    return seq if isinstance(seq, int) else 0
