"""The readable view of one workbench file, for git's `diff.<driver>.textconv` (`wb textconv KIND FILE`).

git runs it on every revision of the file it shows (`git diff`, `git log -p`, `git show`), including
revisions where the file is empty, half-written or broken, so it never fails: whatever it cannot read it
says so in one line and prints the raw text below, and it always exits 0.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

KINDS = ("board", "events", "state", "calls")
FILE_NAMES = {"board": "board.json", "events": "events.jsonl", "state": "state.md", "calls": "calls.jsonl"}


def is_workbench_file(kind: str, file: str) -> bool:
    """Is `file`, as git passes it to a textconv, a version of the workbench file KIND renders? git passes the
    work-tree file by its path from the top (`.workbench/board.json`) and any other version as a temporary
    copy named after it (`$TMPDIR/git-blob-XXXXXX/board.json`; older gits: `XXXXXX_board.json`). Anything else
    — a root .gitattributes routing `*.py` to wb's driver — is not wb's to render: it is shown as it is, so a
    view can never hide what a commit adds."""
    import os

    name = FILE_NAMES.get(kind)
    if name is None:
        return False
    parent, base = os.path.split(file)
    folder = os.path.basename(parent)
    if os.path.isabs(file):
        return (base == name and (folder.startswith("git-blob-") or folder == ".workbench")) or (
            len(base) == len(name) + 7 and base.endswith("_" + name))
    return base == name and parent.replace(os.sep, "/") == ".workbench"


def convert(kind: str, raw: bytes) -> list[str]:
    """The lines of the readable view, every control, escape and bidi character in them shown as its escape
    (`git diff`, `git log -p` and `git show` print them to a terminal: model/display.py); never raises."""
    from workbench.model.display import escape

    try:
        lines = {"board": board_lines, "events": events_lines, "state": state_lines, "calls": calls_lines}[kind](raw)
    except Exception as err:  # git calls this on any revision: show the raw file rather than fail the diff
        lines = [f"(wb textconv: unreadable {kind} file: {type(err).__name__}: {err}; raw text follows)",
                 *_text_lines(raw)]
    return [escape(line, layout=True) for line in lines]


def render(kind: str, raw: bytes, cache: Path | None = None) -> str:
    """The whole view as text, each line ending in a newline: the lines of `convert`, escaped in one pass
    (`escape` keeps the newlines that join them: the same text). With `cache` (a file under the git
    directory), a big events or calls file renders only the lines the kept render lacks
    (review/textconv_cache.py); the text is the same."""
    from workbench.model.display import escape

    if cache is not None and kind in ("events", "calls"):
        from workbench.review import textconv_cache

        if len(raw) >= textconv_cache.MIN_BYTES:
            one = event_line if kind == "events" else _call_line
            try:
                def line_view(line: bytes, number: int) -> str:
                    text = _jsonl_line(line, number, one)
                    return "" if text is None else escape(text, layout=True)

                head = textconv_cache.render(raw, cache, line_view)
                torn = _jsonl_torn(raw[raw.rfind(b"\n") + 1:], one)
                return head + "".join(escape(line, layout=True) + "\n" for line in torn)
            except Exception:  # whatever the cache path trips on, the plain render says it as convert does
                pass
    body = None  # state.md's decision log, laid out in one pass rather than line by line
    try:
        if kind == "state":
            lines, body = _state_view(raw)
        else:
            lines = {"board": board_lines, "events": events_lines, "calls": calls_lines}[kind](raw)
    except Exception as err:  # git calls this on any revision: show the raw file rather than fail the diff
        lines = [f"(wb textconv: unreadable {kind} file: {type(err).__name__}: {err}; raw text follows)",
                 *_text_lines(raw)]
    text = "".join(line + "\n" for line in lines) + ("" if body is None else "\n" + _text_block(body))
    return escape(text, layout=True)


def _text_block(text: str) -> str:
    """`_text_lines(text)`, each line ending in a newline, as one string: the same text, without a list of
    every line of a long decision log."""
    block = text.replace("\r\n", "\n")
    if block.endswith("\n"):
        return block
    return (block[:-1] if block.endswith("\r") else block) + "\n"


def _text_lines(raw: bytes | str) -> list[str]:
    """The lines of raw bytes split at newlines only: a \\r, a form feed or a U+2028 stays in its line, where
    it is escaped, rather than breaking it."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]  # CRLF endings are no attack


def _raw_after(note: str, raw: bytes) -> list[str]:
    return [f"(wb textconv: {note}; raw text follows)", *_text_lines(raw)]


def task_line(task: dict[str, Any]) -> str:
    """`T-001 [done] build/builder  Title  (acceptance: …; depends on: …)`."""
    extras = []
    for label, key in (("reviews", "reviews"), ("acceptance", "acceptance"), ("depends on", "depends_on"),
                       ("blocked", "blocked_reason")):
        v = task.get(key)
        if v:
            extras.append(f"{label}: {', '.join(map(str, v)) if isinstance(v, list) else v}")
    if task.get("forced_done"):
        extras.append("forced done")
    line = (f"{task.get('id')} [{task.get('status')}] {task.get('kind')}/{task.get('owner')}  "
            f"{' '.join(str(task.get('title', '')).split())}")
    if task.get("description"):
        line += f"  — {' '.join(str(task['description']).split())}"
    return line + (f"  ({'; '.join(extras)})" if extras else "")


def board_lines(raw: bytes) -> list[str]:
    if not raw.strip():
        return ["(empty board.json)"]
    from workbench.errors import Refused
    from workbench.model.boardfile import BrokenJSON, NotABoard, parse_board

    try:
        data = parse_board(raw)
    except BrokenJSON as err:
        return _raw_after(f"broken JSON at line {err.line}", raw)
    except NotABoard:
        data = None
    except Refused as err:  # nested too deeply, a lone surrogate: say which
        return _raw_after(str(err), raw)
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        return _raw_after("not a board (an object with a list of tasks)", raw)
    extra = [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in data.items() if k not in ("tasks", "last_event")]
    tasks = [task_line(t) if isinstance(t, dict) else f"(not a task: {json.dumps(t)})" for t in data["tasks"]]
    return extra + (tasks or ["(no tasks)"])


def event_line(event: dict[str, Any]) -> str:
    from workbench.review.eventview import summarize, who_shown

    payload = event.get("payload")
    summary = summarize(payload) if isinstance(payload, dict) else ""
    # fixed columns (a render is kept and extended line by line, review/textconv_cache.py): wide enough for
    # `agent (script)` and `harness.transition`; `wb log` sizes its columns to the events it lists
    return (f"{'#' + str(event.get('seq', '?')):<6} {event.get('ts', '')}  {who_shown(event):<14}  "
            f"{event.get('type', '')!s:<18}  {summary}").rstrip()


def _jsonl_line(line: bytes, number: int, one: Any) -> str | None:
    """The view of complete line `number` (None for a blank one)."""
    from workbench.model.jsonl import loads_record

    if not line.strip():
        return None
    record = loads_record(line)
    return (one(record) if record is not None  # a damaged line whole: a cut one could hide its end
            else f"(line {number}: damaged: {line.decode('utf-8', errors='replace')})")


def _jsonl_torn(torn: bytes, one: Any) -> list[str]:
    from workbench.model.jsonl import loads_record

    if not torn.strip():
        return []
    record = loads_record(torn)  # no newline after it: a crash mid-append, ignored by wb
    return [one(record) + "  (torn: no newline)" if record is not None
            else f"(torn last line (ignored by wb): {torn.decode('utf-8', errors='replace')})"]


def _jsonl(raw: bytes, one: Any) -> list[str]:
    from workbench.model.jsonl import split_lines

    complete, torn = split_lines(raw)
    lines = [_jsonl_line(line, number, one) for number, line in enumerate(complete, start=1)]
    return [line for line in lines if line is not None] + _jsonl_torn(torn, one)


def events_lines(raw: bytes) -> list[str]:
    return _jsonl(raw, event_line)


def _call_line(r: dict[str, Any]) -> str:
    from workbench.review.eventview import cut

    outcome = r.get("error") or (json.dumps(r["result"], ensure_ascii=False, sort_keys=True)
                                 if r.get("result") is not None else "")
    outcome = cut(outcome, 100)
    line = f"{r.get('ts', '')}  {r.get('status', '')!s:<7}  {r.get('tool', '')}  {r.get('key', '')}  {outcome}"
    return line.rstrip()


def calls_lines(raw: bytes) -> list[str]:
    return _jsonl(raw, _call_line)


def state_lines(raw: bytes) -> list[str]:
    head, body = _state_view(raw)
    return head if body is None else [*head, "", *_text_lines(body)]


def _state_view(raw: bytes) -> tuple[list[str], str | None]:
    """(the frontmatter's lines, the decision log after them); a file that is not a state: (its lines, None)."""
    if not raw.strip():
        return ["(empty state.md)"], None
    from workbench.errors import WorkbenchError
    from workbench.review.parse import parse_state, session_summary

    try:
        data, body = parse_state(raw)
    except WorkbenchError as err:
        return _raw_after(str(err), raw), None
    assert data is not None
    lines = []
    for key, v in data.items():
        if key == "session":
            s = session_summary(v)
            if s is None:
                lines.append("session: null")
            else:
                pending = s["pending"]["reason"] if s["pending"] else None
                lines.append(f"session: {s['id']} {json.dumps(s['goal'], ensure_ascii=False)} {s['harness_state']} "
                             f"step {(s['step_index'] or 0) + 1}/{s['steps']}"
                             + (f" waiting: {pending}" if pending else ""))
        elif isinstance(v, dict) and v:
            lines += [f"{key}.{k}: {json.dumps(x, ensure_ascii=False)}" for k, x in v.items()]
        else:
            lines.append(f"{key}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}")
    return lines, body.lstrip("\n")
