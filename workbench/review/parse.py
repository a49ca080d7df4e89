"""A side's files read for review: tolerant parsers of state.md, board.json and config.yaml, the decision
log's entries and the live session, and the append-only logs read by what was appended.

The event log and the call journal are append-only, so "what was appended" is a byte-prefix test followed by
parsing only the new lines: the cost follows the size of the change, not of the history.
"""

from __future__ import annotations

import json
import re
from typing import Any

from workbench.errors import Refused
from workbench.model.frontmatter import fast_frontmatter


# -- the documents --------------------------------------------------------------------------------------
def parse_state(raw: bytes | None) -> tuple[dict[str, Any] | None, str]:
    """(frontmatter, decision-log body) of state.md; (None, "") when absent. Raises Refused when broken."""
    if raw is None:
        return None, ""
    from workbench.model import statefile

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("state.md: not UTF-8 text") from None
    yaml_text, body = statefile.split(text)
    data = fast_frontmatter(yaml_text)
    if data is None:
        from workbench.model import yamlio  # ruamel: ~20 ms to import, only when the fast path steps aside

        data = yamlio.to_plain(yamlio.load_safe(yaml_text, "state.md"))
    if not isinstance(data, dict):
        raise Refused("state.md: the frontmatter is not a mapping")
    return data, body


def parse_board(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise Refused(f"board.json:{getattr(err, 'lineno', '?')}: broken JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("tasks", []), list) or not all(
            isinstance(t, dict) and isinstance(t.get("id"), str) for t in data.get("tasks", [])):
        raise Refused("board.json: not an object with a list of tasks with string ids")
    return data


def parse_config(raw: bytes | None) -> dict[str, Any] | None:
    """config.yaml as written (not merged over the defaults: the diff shows what someone changed)."""
    if raw is None:
        return None
    from workbench.model import yamlio

    try:
        loaded = yamlio.load_safe(raw.decode("utf-8"), "config.yaml")
    except UnicodeDecodeError:
        raise Refused("config.yaml: not UTF-8 text") from None
    data = yamlio.to_plain(loaded) if loaded is not None else {}
    if not isinstance(data, dict):
        raise Refused("config.yaml: not a mapping")
    return data


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
        try:
            last = json.loads(data[start:])
        except (ValueError, RecursionError):
            break
        if not (isinstance(last, dict) and last.get("more")):
            break
        data = data[:start]
    return data


def appended_lines(old: bytes, new: bytes) -> tuple[list[bytes], int, bool]:
    """(lines of `new` after what it shares with `old`, lines of `old` not in `new`, rewritten?)."""
    if new.startswith(old):
        return new[len(old):].split(b"\n")[:-1], 0, False
    old_lines, new_lines = old.split(b"\n")[:-1], new.split(b"\n")[:-1]
    if old.startswith(new):
        return [], len(old_lines) - len(new_lines), False  # a diff backwards in time
    shared = 0
    for a, b in zip(old_lines, new_lines, strict=False):
        if a != b:
            break
        shared += 1
    return new_lines[shared:], len(old_lines) - shared, True


def parse_records(lines: list[bytes], file: str, warnings: list[str]) -> list[dict[str, Any]]:
    if not lines:
        return []
    try:  # one parse of them all is several times faster than one per line
        batch = json.loads(b"[" + b",".join(lines) + b"]")
    except (ValueError, RecursionError):
        batch = None
    if isinstance(batch, list) and len(batch) == len(lines) and all(isinstance(r, dict) for r in batch):
        return batch
    out = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict):
            out.append(record)
        else:
            warnings.append(f"{file}: skipped a damaged line: {line[:60].decode(errors='replace')}")
    return out


def last_seq(log: bytes) -> int:
    if not log:
        return 0
    start = log.rfind(b"\n", 0, len(log) - 1) + 1
    try:
        seq = json.loads(log[start:]).get("seq", 0)
    except (ValueError, AttributeError, RecursionError):
        return 0
    return seq if isinstance(seq, int) else 0
