"""`wb diff`: what changed in the agent's state between two revisions, by meaning rather than by line.

A side is the working tree or a commit. A commit's workbench files are read with one `git cat-file --batch`
(no checkout, no temporary files); a side without `.workbench/` is an empty workbench. The result is one
plain, JSON-able dict (documented in docs/diff.md, schema in schemas/diff.schema.json) that the CLI renders
as text, Markdown or JSON. Nothing here prints or imports typer/rich.

The event log and the call journal are append-only, so "what was appended" is a byte-prefix test followed by
parsing only the new lines: the cost follows the size of the change, not of the history.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import NotFound, Refused, UsageError
from workbench.gitstore import WB_DIR, run_git

SCHEMA_VERSION = 1
FILES = ("state.md", "board.json", "events.jsonl", "calls.jsonl", "config.yaml")
NOISY_STATE = ("updated_at", "last_event")  # change on every write: shown only with --all
NOISY_TASK = ("updated_at",)
WORKTREE = "working tree"


@dataclass
class Side:
    """One side of a diff: its files' bytes (None: absent) and how to name it."""

    label: str  # what the user typed ("HEAD", "main~3"), or "working tree"
    commit: str | None  # the commit it resolved to; None for the working tree or an empty side
    files: dict[str, bytes | None] = field(default_factory=dict)

    @property
    def has_workbench(self) -> bool:
        return any(v is not None for v in self.files.values())

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "commit": self.commit, "workbench": self.has_workbench}


# -- reading the two sides ------------------------------------------------------------------------------
def cat_batch(root: Path, specs: list[str]) -> list[tuple[str, bytes] | None]:
    """`git cat-file --batch` for several objects in one subprocess: [(sha, body) or None if missing]."""
    if not specs:
        return []
    out = run_git(root, "cat-file", "--batch", stdin=("\n".join(specs) + "\n").encode()).stdout
    result: list[tuple[str, bytes] | None] = []
    pos = 0
    for _spec in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode(errors="replace")
        pos = end + 1
        parts = header.split()
        if len(parts) != 3 or parts[-1] in ("missing", "ambiguous"):
            result.append(None)
            continue
        sha, _kind, size = parts
        result.append((sha, out[pos:pos + int(size)]))
        pos += int(size) + 1
    return result


def read_worktree(root: Path) -> Side:
    base = root / WB_DIR
    files: dict[str, bytes | None] = {}
    for name in FILES:
        try:
            files[name] = (base / name).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            files[name] = None
    return Side(WORKTREE, None, files)


def read_revs(root: Path, revs: list[tuple[str, bool]]) -> list[Side]:
    """Each (rev, optional) as a Side, all in one cat-file call. An optional rev that does not resolve (HEAD
    before the first commit) is an empty side; any other raises NotFound."""
    specs: list[str] = []
    for rev, _optional in revs:
        if not rev or "\n" in rev or rev.strip() != rev:
            raise NotFound(f"unknown revision '{rev}'")
        specs.append(f"{rev}^{{commit}}")
        specs.extend(f"{rev}:{WB_DIR}/{name}" for name in FILES)
    found = cat_batch(root, specs)
    sides = []
    step = 1 + len(FILES)
    for i, (rev, optional) in enumerate(revs):
        commit, *blobs = found[i * step:(i + 1) * step]
        if commit is None:
            if optional:
                sides.append(Side(rev, None, {name: None for name in FILES}))
                continue
            raise NotFound(f"unknown revision '{rev}'")
        files = {name: (blob[1] if blob else None) for name, blob in zip(FILES, blobs, strict=True)}
        sides.append(Side(rev, commit[0], files))
    return sides


def merge_base(root: Path, a: str, b: str) -> Side:
    first, second = read_revs(root, [(a, False), (b, False)])
    proc = run_git(root, "merge-base", str(first.commit), str(second.commit), check=False)
    base = proc.stdout.decode().strip()
    if proc.returncode != 0 or not base:
        raise NotFound(f"'{a}' and '{b}' have no merge base")
    side = read_revs(root, [(base, False)])[0]
    side.label = f"merge-base({a}, {b})"
    return side


def resolve(root: Path, revs: list[str], default_base: str = "HEAD") -> tuple[Side, Side]:
    """The (old, new) sides of `wb diff [REV [REV]]`, read as `git diff` reads its revisions:
    none → default_base vs the working tree; one → it vs the working tree; two → the first vs the second;
    `A..B` → A vs B; `A...B` → merge-base(A, B) vs B (an empty end of a range means HEAD)."""
    if len(revs) > 2:
        raise UsageError("wb diff takes at most two revisions")
    if not revs:
        return read_revs(root, [(default_base, True)])[0], read_worktree(root)
    if len(revs) == 1 and "..." in revs[0]:
        a, _, b = revs[0].partition("...")
        a, b = a or "HEAD", b or "HEAD"
        return merge_base(root, a, b), read_revs(root, [(b, False)])[0]
    if len(revs) == 1 and ".." in revs[0]:
        a, _, b = revs[0].partition("..")
        old, new = read_revs(root, [(a or "HEAD", False), (b or "HEAD", False)])
        return old, new
    if len(revs) == 1:
        return read_revs(root, [(revs[0], False)])[0], read_worktree(root)
    if any(".." in r for r in revs):
        raise UsageError("a range (A..B or A...B) takes no second revision")
    old, new = read_revs(root, [(revs[0], False), (revs[1], False)])
    return old, new


# -- parsing ----------------------------------------------------------------------------------------------
def parse_state(raw: bytes | None) -> tuple[dict[str, Any] | None, str]:
    """(frontmatter, decision-log body) of state.md; (None, "") when absent. Raises Refused when broken."""
    if raw is None:
        return None, ""
    from workbench import statefile

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("state.md: not UTF-8 text") from None
    yaml_text, body = statefile.split(text)
    data = fast_frontmatter(yaml_text)
    if data is None:
        from workbench import yamlio  # ruamel: ~20 ms to import, only when the fast path steps aside

        data = yamlio.to_plain(yamlio.load_safe(yaml_text, "state.md"))
    if not isinstance(data, dict):
        raise Refused("state.md: the frontmatter is not a mapping")
    return data, body


# -- the fast path of the frontmatter: the YAML subset wb writes, without ruamel -----------------------------
# ruamel's pure-Python loader takes ~25 ms for a frontmatter with a hundred blockers, twice per diff. wb writes
# a small subset of YAML (`key: scalar`, `key: []`, flow maps of plain scalars, block lists of scalars, one
# level of block mapping), read here line by line. Anything outside it — a live session's nested plan, a
# float, an unquoted timestamp, an anchor, `yes` — returns None and ruamel reads the whole thing.
_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?: +(?P<value>.*?))?\s*$")
_ITEM = re.compile(r"^(?P<indent> *)- +(?P<value>.*?)\s*$")
_PLAIN_TEXT = re.compile(r"^[A-Za-z_/][A-Za-z0-9 _/.,()+-]*$")
_SQUOTED = re.compile(r"^'((?:[^']|'')*)'(?:\s+#.*)?$")
_DQUOTED = re.compile(r'^("(?:[^"\\]|\\.)*")(?:\s+#.*)?$')
_FLOW_MAP = re.compile(r"^\{\s*(?P<body>[^{}\[\]'\"#]*?)\s*\}(?:\s+#.*)?$")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "nan", "inf", "none", "null", "true", "false"}
_NO = object()


def _scalar(text: str, flow: bool = False) -> Any:
    if not text.startswith(("'", '"')) and " #" in text:
        text = text.split(" #", 1)[0].rstrip()
    if text in ("null", "~"):
        return None
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        return int(text)
    if text in ("[]", "{}"):
        return [] if text == "[]" else {}
    m = _SQUOTED.match(text)
    if m:
        return m.group(1).replace("''", "'")
    m = _DQUOTED.match(text)
    if m:
        try:
            return json.loads(m.group(1))
        except (ValueError, RecursionError):
            return _NO
    if text.lower() in _RESERVED or not _PLAIN_TEXT.match(text if flow else text[:1]):
        return _NO
    if flow or (text.isprintable() and ": " not in text and not text.endswith((":", " "))):
        return text
    return _NO


def fast_frontmatter(yaml_text: str) -> dict[str, Any] | None:
    """The frontmatter as plain data when it is in wb's subset of YAML, else None (then use ruamel)."""
    if not yaml_text.replace("\n", "").isprintable():
        return None  # tabs, control characters, and the line breaks YAML knows beyond \n (NEL, LS, PS)
    out: dict[str, Any] = {}
    owner: str | None = None  # the top-level key whose indented block the next lines fill
    indent: str | None = None
    for line in yaml_text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped[0] in "&*!?|>%@`" or stripped.startswith("---"):
            return None
        key = _KEY.match(line)
        if key and not key["indent"]:
            name, text = key["key"], key["value"] or ""
            if name in out:
                return None
            owner, indent = (name, None) if not text or text.startswith("#") else (None, None)
            value = None if owner else _flow_or_scalar(text)
            if value is _NO:
                return None
            out[name] = value
            continue
        if owner is None:
            return None
        item = _ITEM.match(line)
        entry = item or key
        if entry is None or (indent is not None and entry["indent"] != indent) or (key and not key["value"]):
            return None
        indent = entry["indent"]
        value = _scalar(entry["value"])
        if value is _NO or isinstance(value, dict) and value:
            return None
        container = out[owner]
        if container is None:
            container = out[owner] = [] if item else {}
        if item and isinstance(container, list):
            container.append(value)
        elif key and isinstance(container, dict) and key["key"] not in container:
            container[key["key"]] = value
        else:
            return None
    return out or None


def _flow_or_scalar(text: str) -> Any:
    flow = _FLOW_MAP.match(text)
    if not flow:
        return _scalar(text)
    value: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in flow["body"].split(","))):
        k, sep, v = part.partition(": ")
        item = _scalar(v.strip(), flow=True)
        if not sep or not re.fullmatch(r"[A-Za-z_]\w*", k) or item is _NO or k in value:
            return _NO
        value[k] = item
    return value


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


def _records(lines: list[bytes], file: str, warnings: list[str]) -> list[dict[str, Any]]:
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


def _last_seq(log: bytes) -> int:
    if not log:
        return 0
    start = log.rfind(b"\n", 0, len(log) - 1) + 1
    try:
        seq = json.loads(log[start:]).get("seq", 0)
    except (ValueError, AttributeError, RecursionError):
        return 0
    return seq if isinstance(seq, int) else 0


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


def diff_state(old_raw: bytes | None, new_raw: bytes | None, all_fields: bool,
               warnings: list[str], labels: tuple[str, str]) -> dict[str, Any]:
    parsed = []
    for raw, label in zip((old_raw, new_raw), labels, strict=True):
        try:
            parsed.append(parse_state(raw))
        except Refused as err:
            warnings.append(f"{err} (at {label}; compared as absent)")
            parsed.append((None, ""))
    (old, old_body), (new, new_body) = parsed
    out: dict[str, Any] = {"fields": [], "session": None, "decision_log": {"added": [], "removed": []}}
    if old_raw == new_raw:
        return out
    old_flat = _flatten({k: v for k, v in (old or {}).items() if k != "session"})
    new_flat = _flatten({k: v for k, v in (new or {}).items() if k != "session"})
    out["fields"] = field_changes(old_flat, new_flat, () if all_fields else NOISY_STATE)
    if (old or {}).get("session") != (new or {}).get("session"):
        before, after = session_summary((old or {}).get("session")), session_summary((new or {}).get("session"))
        if before != after or all_fields:
            out["session"] = {"old": before, "new": after}
    if old_body != new_body:
        a, b = log_entries(old_body), log_entries(new_body)
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


def diff_board(old_raw: bytes | None, new_raw: bytes | None, all_fields: bool,
               warnings: list[str], labels: tuple[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"fields": [], "added": [], "removed": [], "changed": []}
    if old_raw == new_raw:
        return out
    boards = []
    for raw, label in zip((old_raw, new_raw), labels, strict=True):
        try:
            boards.append(parse_board(raw) or {})
        except Refused as err:
            warnings.append(f"{err} (at {label}; compared as absent)")
            boards.append({})
    old, new = boards
    skip = () if all_fields else ("last_event",)
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
                out["changed"].append({"id": tid, "title": task.get("title"), "changes": changes})
    out["removed"] = [t for tid, t in old_tasks.items() if tid not in new_tasks]
    return out


def parse_config(raw: bytes | None) -> dict[str, Any] | None:
    """config.yaml as written (not merged over the defaults: the diff shows what someone changed)."""
    if raw is None:
        return None
    from workbench import yamlio

    try:
        loaded = yamlio.load_safe(raw.decode("utf-8"), "config.yaml")
    except UnicodeDecodeError:
        raise Refused("config.yaml: not UTF-8 text") from None
    data = yamlio.to_plain(loaded) if loaded is not None else {}
    if not isinstance(data, dict):
        raise Refused("config.yaml: not a mapping")
    return data


def diff_config(old_raw: bytes | None, new_raw: bytes | None, warnings: list[str],
                labels: tuple[str, str]) -> dict[str, Any]:
    """Changed settings, flattened to dotted names (tools.tag.mode). Tools, their modes and hooks decide what
    an agent may run unasked, so a reviewer must see a change to them."""
    out: dict[str, Any] = {"fields": []}
    if old_raw == new_raw:
        return out
    parsed = []
    for raw, label in zip((old_raw, new_raw), labels, strict=True):
        try:
            parsed.append(parse_config(raw) or {})
        except Refused as err:
            warnings.append(f"{err} (at {label}; compared as absent)")
            parsed.append({})
    flat = [{k: v for k, v in _flatten(c).items() if v != {}} for c in parsed]  # `tools: {}` is no tools
    out["fields"] = field_changes(flat[0], flat[1])
    return out


def diff_events(old_raw: bytes | None, new_raw: bytes | None, warnings: list[str]) -> dict[str, Any]:
    old, new = complete_lines(old_raw), complete_lines(new_raw)
    lines, removed, rewritten = appended_lines(old, new)
    events = _records(lines, "events.jsonl", warnings)
    seqs = [e["seq"] for e in events if isinstance(e.get("seq"), int)]
    out: dict[str, Any] = {
        "old_last_seq": _last_seq(old),
        "new_last_seq": _last_seq(new),
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
    records = _records(lines, "calls.jsonl", warnings)
    return {
        "added": len(records),
        "removed": removed,
        "rewritten": rewritten,
        "by_status": dict(Counter(str(r.get("status")) for r in records).most_common()),
        "by_tool": dict(Counter(str(r.get("tool")) for r in records).most_common()),
        "records": [{k: r.get(k) for k in ("key", "session", "step", "tool", "status", "error")} for r in records],
    }


# -- the harness story told by the appended events -----------------------------------------------------
def harness_summary(events: list[dict[str, Any]], log: bytes) -> dict[str, Any]:
    """Sessions (goal, outcome), steps (started, ended with status), tool calls and approvals recorded by
    `events`; goals and step descriptions of sessions that began earlier are looked up in `log`."""
    sessions: dict[str, dict[str, Any]] = {}
    steps: dict[tuple[str, int], dict[str, Any]] = {}
    calls: list[dict[str, Any]] = []
    approvals: list[dict[str, Any]] = []
    plans: dict[str, dict[int, dict[str, Any]]] = {}
    for e in events:
        sid, kind, p = e.get("session"), e.get("type"), e.get("payload")
        if not isinstance(sid, str) or not isinstance(p, dict) or not isinstance(kind, str):
            continue
        if kind == "plan.commit":
            _note_plan(plans, sid, p)
        if not (kind.startswith(("session.", "step.", "tool.", "approval.", "plan.", "budget.", "harness."))):
            continue
        s = sessions.setdefault(sid, {"id": sid, "goal": None, "started": False, "outcome": "running",
                                      "reason": None})
        index = p.get("index")
        if kind == "session.start":
            s.update(goal=p.get("goal"), started=True)
        elif kind in ("session.complete", "session.abort"):
            s.update(outcome="completed" if kind == "session.complete" else "aborted", reason=p.get("reason"))
        elif kind == "session.pause":
            s.update(outcome="paused", reason=p.get("reason"))
        elif kind == "session.resume":
            s.update(outcome="running", reason=None)
        elif isinstance(p.get("yield"), dict):
            s.update(outcome="waiting", reason=p["yield"].get("reason"))
        if kind in ("step.start", "step.end") and isinstance(index, int):
            st = steps.setdefault((sid, index), {"session": sid, "index": index, "id": p.get("step"),
                                                 "description": None, "started": False, "status": None})
            if kind == "step.start":
                st["started"] = True
            else:
                st["status"] = p.get("status")
        elif kind == "tool.call":
            calls.append({"session": sid, "index": index, "step": p.get("step"), "tool": p.get("tool"),
                          "key": p.get("key"), "dispatch": p.get("dispatch"), "status": "pending",
                          "result": None, "error": None})
        elif kind in ("tool.result", "tool.error"):
            call = next((c for c in reversed(calls) if c["session"] == sid and (
                c["key"] == p.get("key") if p.get("key") else c["index"] == index)), None)
            if call is None:
                call = {"session": sid, "index": index, "step": None, "tool": None, "key": p.get("key"),
                        "dispatch": None, "status": "pending", "result": None, "error": None}
                calls.append(call)
            if kind == "tool.result":
                call.update(status="done", result=p.get("summary") or _short_json(p.get("result")))
            else:
                call.update(status="error", error=p.get("error"))
        elif kind in ("approval.requested", "approval.granted", "approval.denied"):
            decision = kind.split(".", 1)[1]
            approvals.append({"session": sid, "index": index, "step": p.get("step"), "tool": p.get("tool"),
                              "decision": decision, "mode": p.get("mode"), "reason": p.get("reason")})
    missing_goal = {sid for sid, s in sessions.items() if s["goal"] is None}
    missing_plan = {sid for sid, _ in steps} | {c["session"] for c in calls if c["tool"] is None}
    missing_plan -= set(plans)
    if missing_goal or missing_plan:
        _look_back(log, missing_goal, missing_plan, sessions, plans)
    for (sid, index), st in steps.items():
        item = plans.get(sid, {}).get(index, {})
        st["description"] = item.get("description")
        st["id"] = st["id"] or item.get("id")
    for record in (*calls, *approvals):
        item = plans.get(record["session"], {}).get(record["index"], {}) if isinstance(record["index"], int) else {}
        record["step"] = record["step"] or item.get("id")
        record["tool"] = record["tool"] or item.get("tool")
    return {"sessions": list(sessions.values()), "steps": list(steps.values()), "tool_calls": calls,
            "approvals": approvals}


def _note_plan(plans: dict[str, dict[int, dict[str, Any]]], sid: str, payload: dict[str, Any]) -> None:
    items = payload.get("steps")
    if not isinstance(items, list):
        return
    plan = plans.setdefault(sid, {})
    for i, item in enumerate(items):
        if isinstance(item, dict):
            ordinal = item.get("ordinal")
            plan[ordinal - 1 if isinstance(ordinal, int) else i] = item


def _look_back(log: bytes, goals: set[str], plans_for: set[str], sessions: dict[str, dict[str, Any]],
               plans: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Find the session.start and plan.commit lines of earlier sessions by substring search (fast in C),
    parsing only those lines."""
    for marker, wanted in ((b'"type":"session.start"', goals), (b'"type":"plan.commit"', plans_for)):
        if not wanted:
            continue
        pos = log.find(marker)
        while pos != -1:
            start = log.rfind(b"\n", 0, pos) + 1
            end = log.find(b"\n", pos)
            end = len(log) if end == -1 else end
            try:
                e = json.loads(log[start:end])
            except (ValueError, RecursionError):
                e = None
            if (isinstance(e, dict) and isinstance(e.get("session"), str) and e["session"] in wanted
                    and isinstance(e.get("payload"), dict)):
                sid = e["session"]
                if marker.endswith(b'start"') and sid in sessions:
                    sessions[sid]["goal"] = e["payload"].get("goal")
                elif not marker.endswith(b'start"'):
                    _note_plan(plans, sid, e["payload"])
            pos = log.find(marker, end)


def _short_json(value: Any, width: int = 80) -> str | None:
    if value is None:
        return None
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= width else text[: width - 1] + "…"


# -- the whole diff ----------------------------------------------------------------------------------------
def compare(old: Side, new: Side, *, all_fields: bool = False) -> dict[str, Any]:
    """The diff of two sides, as the documented JSON shape (docs/diff.md, schemas/diff.schema.json)."""
    warnings: list[str] = []
    labels = (old.label, new.label)
    state = diff_state(old.files.get("state.md"), new.files.get("state.md"), all_fields, warnings, labels)
    board = diff_board(old.files.get("board.json"), new.files.get("board.json"), all_fields, warnings, labels)
    events = diff_events(old.files.get("events.jsonl"), new.files.get("events.jsonl"), warnings)
    calls = diff_calls(old.files.get("calls.jsonl"), new.files.get("calls.jsonl"), warnings)
    config = diff_config(old.files.get("config.yaml"), new.files.get("config.yaml"), warnings, labels)
    changed = bool(
        state["fields"] or state["session"] or state["decision_log"]["added"] or state["decision_log"]["removed"]
        or board["fields"] or board["added"] or board["removed"] or board["changed"]
        or events["appended"] or events["removed"] or calls["added"] or calls["removed"] or config["fields"]
    )
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
        "warnings": warnings,
    }


def diff(root: Path, revs: list[str], *, all_fields: bool = False, default_base: str = "HEAD") -> dict[str, Any]:
    """`wb diff [REV [REV]]` as data."""
    old, new = resolve(root, revs, default_base)
    return compare(old, new, all_fields=all_fields)
