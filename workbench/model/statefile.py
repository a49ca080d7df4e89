"""state.md: YAML frontmatter (structured state) above a Markdown decision log.

Parsing keeps the round-trip node so that a wb write changes only the values that changed: a human's
comments, key order and untouched values survive byte for byte.
"""

from __future__ import annotations

import json
import re

from workbench.errors import Refused
from workbench.model.frontmatter import NOT_RAW, not_raw

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

_DELIM = re.compile(r"^---[ \t]*\r?$", re.M)
HEADER = "# wb agent state. Edit freely: wb keeps your comments and key order, and records your edit.\n"


class StateFile:
    __slots__ = ("node", "data", "body")

    def __init__(self, node: Any, data: dict[str, Any], body: str) -> None:
        self.node = node
        self.data = data
        self.body = body


def split(text: str, file: str = "state.md") -> tuple[str, str]:
    """(frontmatter YAML, body). Refuses a file without the two `---` delimiters."""
    if text.startswith("\ufeff"):
        text = text[1:]
    first = _DELIM.match(text)
    if not first:
        raise Refused(f"{file}:1: the file must start with a '---' line opening the YAML frontmatter")
    second = _DELIM.search(text, first.end())
    if not second:
        raise Refused(f"{file}: no closing '---' line after the frontmatter (restore it, or `git checkout` the file)")
    yaml_text = text[first.end() + 1:second.start()]
    end = second.end()  # the body begins after the line break that ends the `---` line: one copy of it, not two
    end += 2 if text.startswith("\r\n", end) else 1 if text.startswith("\n", end) else 0
    return yaml_text, text[end:]


MAX_STATE_BYTES = 16 * 1024 * 1024  # state.md's cap: wb keeps its notes short (model/clip.py)


def check_size(raw: bytes, file: str) -> None:
    if len(raw) > MAX_STATE_BYTES:
        raise Refused(f"{file}: {len(raw)} bytes, over the cap of {MAX_STATE_BYTES}: not a state.md wb wrote "
                      "(restore it with git)")


def parse(raw: bytes, file: str = "state.md") -> StateFile:
    check_size(raw, file)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Refused(f"{file}: not UTF-8 text (byte {err.start}); restore it with git") from None
    from workbench.model import yamlio  # ruamel costs ~20 ms to import: only when a file must really be parsed

    yaml_text, body = split(text, file)
    node = yamlio.load_round_trip(yaml_text, file, line_offset=1)
    if not isinstance(node, dict):
        raise Refused(f"{file}:2: the frontmatter must be a YAML mapping of keys to values")
    data = yamlio.to_plain(node)
    return StateFile(node, data, body)


def parse_plain(raw: bytes, file: str = "state.md") -> tuple[dict[str, Any], str]:
    """(frontmatter, body) as `parse(raw, file)` gives them — or the same refusal — without the round-trip node,
    read without ruamel when the frontmatter is in the subset of YAML wb writes (model/frontmatter.py): a check
    that needs no node (the SQLite backend's `wb validate` and `wb doctor`, where only wb writes state.md) imports
    no YAML library (issue 33)."""
    fast = parse_fast(raw, file)
    if fast is None:
        parsed = parse(raw, file)  # ruamel, or refused in parse's words
        return parsed.data, parsed.body
    return fast


def parse_fast(raw: bytes, file: str = "state.md") -> tuple[dict[str, Any], str] | None:
    """`parse_plain`'s (frontmatter, body) when it reads them without ruamel, else None: then `parse` reads the
    file, or refuses it in its own words (a file over the size cap is refused here, in the same words)."""
    from workbench.model.frontmatter import fast_frontmatter

    check_size(raw, file)
    try:
        yaml_text, body = split(raw.decode("utf-8"), file)
    except (UnicodeDecodeError, Refused):
        return None
    try:
        data = fast_frontmatter(yaml_text)
    except Refused:  # a number too long to read: refused by `parse`, in its words (what every reader says)
        return None
    return None if data is None else (data, body)


def read_plain(raw: bytes, file: str = "state.md") -> tuple[dict[str, Any], str]:
    """(frontmatter, body) without the round-trip node: the fast reader of a side of a diff or a view. Refused
    when the file is not UTF-8, lacks its `---` lines or its frontmatter is not a mapping."""
    from workbench.model.frontmatter import fast_frontmatter

    check_size(raw, file)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{file}: not UTF-8 text") from None
    yaml_text, body = split(text, file)
    data = fast_frontmatter(yaml_text)
    if data is None:
        from workbench.model import yamlio  # ruamel: ~20 ms to import, only when the fast path steps aside

        data = yamlio.to_plain(yamlio.load_safe(yaml_text, file))
    if not isinstance(data, dict):
        raise Refused(f"{file}: the frontmatter is not a mapping")
    return data, body


def render(node: Any, data: dict[str, Any], body: str) -> bytes:
    """Write `data` into the round-trip `node` (None: a fresh file) and render the whole file."""
    from workbench.model import yamlio

    if node is None:
        node = yamlio.new_map(data)
        node.yaml_set_start_comment(HEADER.strip("# \n"))
    else:
        yamlio.update_in_place(node, data)
    return ("---\n" + yamlio.dump_round_trip(node) + "---\n" + body).encode("utf-8")


# -- the fast path: rewrite changed scalar lines in place, without ruamel -------------------------------
# A mutation usually changes only `updated_at`, `last_event` and a value or two. Importing, parsing and
# dumping with ruamel costs ~35 ms of a CLI mutation, so when every changed value is a scalar on one line
# whose text is exactly a known rendering of its old value, that text is replaced and nothing else is
# touched. Anything else (lists, nested blocks, multi-line strings) returns None: the caller uses ruamel.

_PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9 _/.,()+-]*$")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~", "nan", "inf"}
_MISSING = object()


def _plain_ok(text: str) -> bool:
    return bool(_PLAIN.match(text)) and not text.endswith(" ") and text.lower() not in _RESERVED


def _forms(value: Any) -> list[str] | None:
    """Every text a one-line YAML scalar may have for `value` (None: not a simple scalar)."""
    if value is None:
        return ["null", "~", "Null", "NULL", ""]
    if isinstance(value, bool):
        return ["true", "True"] if value else ["false", "False"]
    if isinstance(value, int):
        return [str(value)]
    if isinstance(value, str):
        if "\n" in value or "\r" in value:
            return None
        forms = ["'" + value.replace("'", "''") + "'", json.dumps(value), double_quoted(value)]
        if _plain_ok(value):
            forms.insert(0, value)
        return forms
    return None


def _render(value: Any) -> str | None:
    """Plain when safe, else single-quoted; double-quoted with YAML escapes for what YAML cannot carry raw."""
    forms = _forms(value)
    if forms is None:
        return None
    if isinstance(value, str) and not_raw(value):
        return double_quoted(value)
    return forms[0]


# What YAML cannot carry raw (frontmatter.NOT_RAW) is written as escapes in double quotes, as ruamel writes them
# (yamlio), so a state.md wb writes is a state.md any YAML reader reads back.
_ESCAPES = {"\x00": "\\0", "\x07": "\\a", "\x08": "\\b", "\t": "\\t", "\n": "\\n", "\x0b": "\\v",
            "\x0c": "\\f", "\r": "\\r", "\x1b": "\\e", '"': '\\"', "\\": "\\\\", "\x85": "\\N",
            "\u2028": "\\L", "\u2029": "\\P"}
# (a pattern re compiles on first use: most values never need it)
_TO_ESCAPE = f"[\"\\\\\t{NOT_RAW[1:-1]}]"  # and the quote, the backslash and a tab


def _escape(m: re.Match[str]) -> str:
    char = m.group()
    code = ord(char)
    return _ESCAPES.get(char) or (f"\\x{code:02X}" if code < 0x100 else f"\\u{code:04X}")


def double_quoted(value: str) -> str:
    """`value` as a one-line YAML double-quoted scalar that reads back to exactly `value`."""
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return '"' + value + '"'  # printable ASCII bar the quote and the backslash: nothing to escape (nor to compile)
    return '"' + re.sub(_TO_ESCAPE, _escape, value) + '"'



def _replace_line(lines: list[str], start: int, stop: int, indent: str, key: str, old: Any, new: Any) -> bool:
    forms, text = _forms(old), _render(new)
    if forms is None or text is None:
        return False
    pattern = re.compile(rf"^{re.escape(indent)}{re.escape(key)}:(?: (.*?))?(\s+#.*)?$")
    hits = []
    for i in range(start, stop):
        m = pattern.match(lines[i])
        if m and (m.group(1) or "") in forms:
            hits.append((i, m))
    if len(hits) != 1:
        return False
    i, m = hits[0]
    lines[i] = f"{indent}{key}:" + (f" {text}" if text else "") + (m.group(2) or "")
    return True


def render_fast(raw: bytes, old: dict[str, Any], new: dict[str, Any], body: str) -> bytes | None:
    """`raw` (whose frontmatter parses to `old`) with the values of `new` and the body `body`, or None."""
    try:
        yaml_text, _old_body = split(raw.decode("utf-8"))
    except (Refused, UnicodeDecodeError):
        return None
    if "\r" in yaml_text or "\t" in yaml_text:
        return None
    lines = yaml_text.split("\n")
    for key in set(old) | set(new):
        before, after = old.get(key, _MISSING), new.get(key, _MISSING)
        if before == after:
            continue
        if before is _MISSING and after is not _MISSING:
            added = _appended(key, after)  # a new key (next_action_set, issue 22): at the end, as ruamel puts it
            if added is None:
                return None
            lines[-1:-1] = added
            continue
        if before is _MISSING or after is _MISSING:
            return None
        if isinstance(before, dict) and isinstance(after, dict):
            if set(before) != set(after):
                return None
            head = [i for i, line in enumerate(lines) if re.match(rf"^{re.escape(key)}:(\s+#.*)?$", line)]
            if len(head) != 1:
                return None
            stop = head[0] + 1
            while stop < len(lines) and (lines[stop].startswith(" ") or not lines[stop].strip()):
                stop += 1
            block = lines[head[0] + 1:stop]
            indents = {re.match(r"^( +)", line).group(1) for line in block if line.strip()  # type: ignore[union-attr]
                       and not line.lstrip().startswith("#")}
            if len(indents) != 1:
                return None
            indent = indents.pop()
            for sub in after:
                if before[sub] != after[sub] and not _replace_line(
                        lines, head[0] + 1, stop, indent, sub, before[sub], after[sub]):
                    return None
            continue
        if not _replace_line(lines, 0, len(lines), "", key, before, after):
            return None
    return ("---\n" + "\n".join(lines) + "---\n" + body).encode("utf-8")


def _appended(key: str, value: Any) -> list[str] | None:
    """The lines of a new top-level `key`: a scalar, or a mapping of scalars; None for anything else."""
    if not re.fullmatch(r"[a-z_]+", key):
        return None
    if not isinstance(value, dict):
        text = _render(value)
        return None if text is None else [f"{key}: {text}"]
    out = [f"{key}:"]
    for sub, item in value.items():
        text = _render(item)
        if text is None or not isinstance(sub, str) or not re.fullmatch(r"[a-z_]+", sub):
            return None
        out.append(f"  {sub}: {text}")
    return out if len(out) > 1 else None


def too_deep(value: Any, limit: int) -> bool:
    """Whether `value` nests more than `limit` levels: state.md must read back (yamlio.MAX_DEPTH)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False
