"""Reading what `.workbench/` holds, for `wb migrate`: each file's schema_version (a log's from its first and
last complete lines only, never its whole history), and the documents of the files that need migrating.
Nothing here writes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import NotFound, Refused
from workbench.migrate.registry import KINDS, compact_json
from workbench.model import configfile
from workbench.model.boardfile import parse_board
from workbench.model.jsonl import read_line, split_lines
from workbench.model.layout import WB_DIR
from workbench.progress import Progress, tick


# -- reading what is there ---------------------------------------------------------------------------------
@dataclass
class Found:
    version: int | None  # None: absent (or a log without a line yet)
    doc: Any = None
    raw: bytes | None = None
    node: Any = None  # state.md: the round-trip node (comments survive the rewrite of a v1+ file)


def _version(file: str, data: dict[str, Any], where: str = "") -> int:
    found = data.get("schema_version", 0)
    if not isinstance(found, int) or isinstance(found, bool) or found < 0:
        raise Refused(f"{file}: {where}schema_version {compact_json(found)} is not a version number; fix it by hand")
    return found


def read_state(path: Path) -> Found:
    return state_found(_read_required(path))


def state_found(raw: bytes, *, node: bool = True) -> Found:
    """state.md's bytes (a file's, or the SQLite backend's snapshot row) as found; without `node`, without the
    round-trip node, read without ruamel where it can (statefile.parse_plain)."""
    from workbench.model import statefile

    if not node:
        data, body = statefile.parse_plain(raw)
        return Found(_version("state.md", data), {"frontmatter": data, "body": body}, raw)
    parsed = statefile.parse(raw)
    return Found(_version("state.md", parsed.data), {"frontmatter": parsed.data, "body": parsed.body}, raw,
                 parsed.node)


def read_board(path: Path) -> Found:
    return board_found(_read_required(path))


def board_found(raw: bytes) -> Found:
    board = parse_board(raw)
    return Found(_version("board.json", board), board, raw)


def _read_required(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise NotFound(f"{WB_DIR}/{path.name} is missing: restore it with git (`git checkout -- {WB_DIR}`)") from None


def read_config(path: Path) -> Found:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Found(None)  # optional: wb runs on its defaults
    data = configfile.settings(raw)
    if data is None:  # empty or only comments: the defaults, at any version
        return Found(KINDS["config"].current, None, raw)
    return Found(_version("config.yaml", data), data, raw)


def log_found(edges: tuple[bytes, bytes] | None, file: str) -> Found:
    """The version of a log from its first and last lines (None: no line yet: valid at any version)."""
    kind = KINDS["events" if file == "events.jsonl" else "calls"]
    if edges is None:
        return Found(kind.current)
    first, last = (read_line(line, file, where) for line, where in zip(edges, ("line 1", "its last line"), strict=True))
    v_first, v_last = _version(file, first, "line 1: "), _version(file, last, "last line: ")
    if v_first != v_last and v_last <= kind.current:
        raise Refused(f"{file}: line 1 has schema_version {v_first} but the last line {v_last}; fix it by hand")
    return Found(v_last)


def read_log(path: Path, file: str, whole: bool, progress: Progress | None = None) -> Found:
    """The version of a JSON-lines file from its first and last complete lines (never the whole history);
    with `whole`, an old-version file is parsed line by line for its migration (`progress(line, lines)`)."""
    edges = edge_lines(path)
    if edges is None:  # absent, or no line yet: an empty log is valid at any version
        return Found(KINDS["events" if file == "events.jsonl" else "calls"].current if path.exists() else None)
    first, last = (read_line(line, file, where) for line, where in zip(edges, ("line 1", "its last line"), strict=True))
    v_first = _version(file, first, "line 1: ")
    v_last = _version(file, last, "last line: ")
    if v_last > KINDS["events" if file == "events.jsonl" else "calls"].current:
        return Found(v_last)  # a newer line: refused by the caller, which names it
    if v_first != v_last:
        raise Refused(f"{file}: line 1 has schema_version {v_first} but the last line {v_last}; fix it by hand")
    if not whole or v_first == KINDS["events"].current:
        return Found(v_first)
    raw = path.read_bytes()
    lines, _torn = split_lines(raw)
    records: list[dict[str, Any]] = []
    for n, line in enumerate(lines):
        tick(progress, n, len(lines))
        if line.strip():
            records.append(read_line(line, file, f"line {n + 1}"))
    return Found(v_first, records, raw)


def edge_lines(path: Path) -> tuple[bytes, bytes] | None:
    """(first, last) complete lines of a file, or None when it is absent or has no complete line."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:
        return None
    with fh:
        first = fh.readline()
        if not first.endswith(b"\n"):
            return None  # empty, or a single torn line
        pos = fh.seek(0, os.SEEK_END)
        buf = b""
        while True:
            step = min(1 << 16, pos)
            pos -= step
            fh.seek(pos)
            buf = fh.read(step) + buf
            end = buf.rfind(b"\n")  # the end of the last complete line (a torn tail follows it)
            if end == -1:
                continue  # a torn tail longer than a block (the first line's newline lies further back)
            start = buf.rfind(b"\n", 0, end)
            if start != -1 or pos == 0:
                return first[:-1], buf[start + 1:end]


def refuse_unknown(found: dict[str, Found]) -> None:
    for name, f in found.items():
        kind = KINDS[name]
        if f.version is None:
            continue
        if f.version > kind.current:
            raise Refused(f"{kind.file}: schema_version {f.version} is newer than this wb understands "
                          f"({kind.current}); upgrade wb. Nothing was changed")
        if f.version < kind.oldest:
            raise Refused(f"{kind.file}: schema_version {f.version} is older than this wb can migrate (oldest: "
                          f"{kind.oldest}); migrate it with an older wb first. Nothing was changed")
