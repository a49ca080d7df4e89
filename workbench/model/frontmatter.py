"""state.md's frontmatter read without ruamel, when it is in the subset of YAML that wb writes.

ruamel's pure-Python loader takes ~25 ms for a frontmatter with a hundred blockers, twice per diff. wb writes
a small subset of YAML (`key: scalar`, `key: []`, flow maps of plain scalars, block lists of scalars, one
level of block mapping), read here line by line. Anything outside it — a live session's nested plan, a
float, an unquoted timestamp, an anchor, `yes` — returns None and ruamel reads the whole thing.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any
# patterns, compiled by re on first use: a write that takes state.md from wb's cache parses no frontmatter, and
# compiling these cost every write most of a millisecond (issue 33)
_KEY = r"^(?P<indent> *)(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?: +(?P<value>.*?))?\s*$"
_ITEM = r"^(?P<indent> *)- +(?P<value>.*?)\s*$"
_PLAIN_TEXT = r"^[A-Za-z_/][A-Za-z0-9 _/.,()+-]*$"
_SQUOTED = r"^'((?:[^']|'')*)'(?:\s+#.*)?$"
_DQUOTED = r'^("(?:[^"\\]|\\.)*")(?:\s+#.*)?$'
_FLOW_MAP = r"^\{\s*(?P<body>[^{}\[\]'\"#]*?)\s*\}(?:\s+#.*)?$"
_RESERVED = {"y", "n", "yes", "no", "on", "off", "nan", "inf", "none", "null", "true", "false"}
_NO = object()

# What a YAML scalar cannot hold as it is (YAML 1.2 §5.1: C0 but tab, DEL, C1, surrogates, U+FFFE/U+FFFF), with
# the line breaks a quoted or plain scalar folds (\n, \r, NEL, LS, PS) and the BOM: wb writes a string holding
# any of them only double-quoted, with escapes (statefile.double_quoted, yamlio.fresh).
NOT_RAW = "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"


def not_raw(value: str) -> bool:
    """Whether `value` holds a character of NOT_RAW. Every such character is unprintable (str.isprintable;
    tests/model/test_yaml_escapes checks it over the whole of Unicode), so a printable string — most values —
    is answered without the pattern, which re compiles on first use: its ranges cost half a millisecond of every
    write that rendered state.md (issue 33)."""
    return not value.isprintable() and re.search(NOT_RAW, value) is not None


MAX_DIGITS = 4000  # Python's own cap on reading an integer is 4,300 digits (sys.int_info.default_max_str_digits)


def _scalar(text: str, flow: bool = False) -> Any:
    if not text.startswith(("'", '"')) and " #" in text:
        text = text.split(" #", 1)[0].rstrip()
    if text in ("null", "~"):
        return None
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        if len(text) > MAX_DIGITS:  # Python refuses to read it (int_max_str_digits): say so in wb's words
            from workbench.errors import Refused

            raise Refused(f"state.md: a number of {len(text):,} digits, over the {MAX_DIGITS:,} wb reads; fix the "
                          "file or restore it with git")
        return int(text)
    if text in ("[]", "{}"):
        return [] if text == "[]" else {}
    m = re.match(_SQUOTED, text)
    if m:
        return m.group(1).replace("''", "'")
    m = re.match(_DQUOTED, text)
    if m:
        try:
            return json.loads(m.group(1))
        except (ValueError, RecursionError):
            return _NO
    if text.lower() in _RESERVED or not re.match(_PLAIN_TEXT, text if flow else text[:1]):
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
        key = re.match(_KEY, line)
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
        item = re.match(_ITEM, line)
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
    flow = re.match(_FLOW_MAP, text)
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
