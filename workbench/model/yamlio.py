"""The one module that configures ruamel.yaml.

Two loaders: round-trip (state.md frontmatter: a human's comments, key order and formatting survive a wb
write) and safe (config.yaml, plan files: plain data, never Python objects).
"""

from __future__ import annotations

import io
import re
from datetime import date, datetime
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from workbench.errors import Refused
from workbench.model.frontmatter import not_raw


def _represent_none(representer: Any, _data: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")


def _round_trip() -> YAML:
    yaml = YAML(typ="rt")
    yaml.representer.add_representer(type(None), _represent_none)
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a human's long line
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


_RT = _round_trip()
_SAFE = YAML(typ="safe", pure=True)


def _problem(err: YAMLError, file: str, line_offset: int) -> Refused:
    if isinstance(err, MarkedYAMLError) and err.problem_mark is not None:
        line = err.problem_mark.line + 1 + line_offset
        problem = " ".join(str(err.problem).split())  # a quoted value may hold newlines: one line
        return Refused(f"{file}:{line}: broken YAML: {problem} (fix the file, or restore it with git)")
    return Refused(f"{file}: broken YAML: {str(err).splitlines()[0]} (fix the file, or restore it with git)")


_CONFLICT = re.compile(r"^(?:<{7}|>{7})(?: |$)", re.M)


def _refuse_conflict(text: str, file: str, line_offset: int) -> None:
    """A git merge left its conflict markers in the file: say that, not "broken YAML" (issue 23 §9)."""
    found = _CONFLICT.search(text)
    if found is not None:
        line = text.count("\n", 0, found.start()) + 1 + line_offset
        raise Refused(f"{file}:{line}: an unresolved git merge conflict (`<<<<<<<` … `>>>>>>>`): keep the lines "
                      f"you want, remove the markers, then `git add` the file")


def _load(yaml: YAML, text: str, file: str, line_offset: int) -> Any:
    """ruamel's `load`, with the node graph checked between composing and constructing: duplicate keys and
    more than MAX_VALUES nodes counted through aliases are refused before anything is built (ruamel's own
    duplicate-key error expands every alias: an 885-byte alias chain took minutes and gigabytes)."""
    constructor, parser = yaml.get_constructor_parser(text)
    try:
        node = constructor.composer.get_single_node()
        if node is None:
            return None
        check_nodes(node, file, line_offset)
        return constructor.construct_document(node)
    finally:
        parser.dispose()
        for comp in ("reader", "scanner"):
            try:
                getattr(getattr(yaml, "_" + comp), f"reset_{comp}")()
            except AttributeError:
                pass


def check_nodes(root: Any, file: str, line_offset: int = 0) -> None:
    """Refuse a composed YAML document whose values, counted through its aliases, exceed MAX_VALUES, which
    nests deeper than MAX_DEPTH, or where a mapping repeats a key. Linear in the document's nodes: the
    expanded size of a node shared by aliases is computed once."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    sizes: dict[int, int] = {}
    stack: list[tuple[Any, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, done = stack.pop()
        if id(node) in sizes and not done:
            continue
        if depth > MAX_DEPTH:
            raise Refused(f"{file}: nested more than {MAX_DEPTH} levels deep (or a YAML alias contains itself)")
        if isinstance(node, ScalarNode):
            sizes[id(node)] = 1
            continue
        children = ([c for pair in node.value for c in pair] if isinstance(node, MappingNode)
                    else list(node.value) if isinstance(node, SequenceNode) else [])
        if done:
            total = 1 + sum(sizes.get(id(c), 1) for c in children)
            if total > MAX_VALUES:
                raise Refused(f"{file}: more than {MAX_VALUES} values once YAML aliases are expanded; refused")
            sizes[id(node)] = total
            continue
        if isinstance(node, MappingNode):
            seen: set[Any] = set()
            for key, _value in node.value:
                if isinstance(key, ScalarNode):
                    if key.value in seen and getattr(key.tag, "value", key.tag) != "tag:yaml.org,2002:merge":
                        line = key.start_mark.line + 1 + line_offset
                        raise Refused(f"{file}:{line}: duplicate key {str(key.value)[:80]!r} "
                                      "(fix the file, or restore it with git)")
                    seen.add(key.value)
        sizes[id(node)] = 0  # in progress: an alias that contains itself counts as a leaf here, and the
        stack.append((node, depth, True))  # depth check refuses it on the way down
        for child in children:
            if id(child) not in sizes:
                stack.append((child, depth + 1, False))


def load_round_trip(text: str, file: str, line_offset: int = 0) -> Any:
    _refuse_conflict(text, file, line_offset)
    try:
        return check_plain(_load(_RT, _flow_depth_ok(text, file), file, line_offset), file)
    except YAMLError as err:
        raise _problem(err, file, line_offset) from None
    except (ValueError, TypeError, RecursionError) as err:  # hostile input (deep nesting) breaks ruamel itself
        raise _hostile(err, file) from None


def dump_round_trip(data: Any) -> str:
    out = io.StringIO()
    _RT.dump(data, out)
    return out.getvalue()


def load_safe(text: str, file: str) -> Any:
    _refuse_conflict(text, file, 0)
    try:
        return check_plain(_load(_SAFE, _flow_depth_ok(text, file), file, 0), file)
    except YAMLError as err:
        raise _problem(err, file, 0) from None
    except (ValueError, TypeError, RecursionError) as err:  # ruamel raises these on some hostile input
        raise _hostile(err, file) from None


MAX_DEPTH = 64  # no wb document nests deeper; a self-referencing alias (`&a [*a]`) is caught here too
MAX_VALUES = 200_000  # values once aliases are expanded: a "billion laughs" file is refused, not expanded
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTAINER_TAGS = (None, "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:omap")


_FLOW_TOKENS = re.compile(r"""'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|#[^\n]*|[\[\]{}]""")


def _flow_depth_ok(text: str, file: str) -> str:
    """Refuse flow collections nested deeper than MAX_DEPTH before ruamel sees them: its scanner is quadratic
    in their depth (a 6 kB `[[[[…` line costs seconds). Quoted strings and comments are skipped, and outside a
    flow collection a bracket opens one only where a value starts (so `a[[[b` in a plain scalar is text)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return text
    depth = 0
    for m in _FLOW_TOKENS.finditer(text):
        token = m.group()
        if token in "[{":
            if depth == 0:
                before = text[max(0, m.start() - 80):m.start()].rstrip(" \t")
                if before and before[-1] not in "\n:-,?":
                    continue
            depth += 1
            if depth > MAX_DEPTH:
                raise Refused(f"{file}: nested more than {MAX_DEPTH} levels deep; refused")
        elif token in "]}":
            depth = max(0, depth - 1)
    return text


def check_plain(data: Any, file: str) -> Any:
    """Refuse what is not plain data (tagged or binary values, sets), nesting deeper than MAX_DEPTH and more
    than MAX_VALUES values counted through aliases. Returns `data` unchanged."""
    budget = [MAX_VALUES]

    def walk(value: Any, depth: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise Refused(f"{file}: more than {MAX_VALUES} values once YAML aliases are expanded; refused")
        if depth > MAX_DEPTH:
            raise Refused(f"{file}: nested more than {MAX_DEPTH} levels deep (or a YAML alias contains itself)")
        if isinstance(value, dict | list):
            tag = getattr(getattr(value, "tag", None), "value", None)
            if tag not in _CONTAINER_TAGS:
                raise Refused(f"{file}: YAML tag {tag} is not allowed: wb files hold plain data only")
            for item in [*value.keys(), *value.values()] if isinstance(value, dict) else value:
                walk(item, depth + 1)
        elif isinstance(value, str) and _SURROGATE.search(value):
            raise Refused(f"{file}: a \\u escape that encodes no character (a lone surrogate); fix the file")
        elif not isinstance(value, str | int | float | date | type(None)):
            tag = getattr(getattr(value, "tag", None), "value", None) or type(value).__name__
            raise Refused(f"{file}: YAML value of type {tag} is not allowed: wb files hold plain data only")

    walk(data, 0)
    return data


def to_plain(value: Any) -> Any:
    """ruamel's commented containers and timestamps → plain JSON-able Python values."""
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S") + "Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return str(value)  # drops ruamel's quoted-scalar subclasses
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


def update_in_place(node: Any, new: Any) -> Any:
    """Make the round-trip `node` equal to `new`, touching only what differs so comments survive."""
    if isinstance(node, CommentedMap) and isinstance(new, dict):
        for key in [k for k in node if k not in new]:
            del node[key]
        for key, value in new.items():
            if key in node:
                if to_plain(node[key]) != value:
                    node[key] = update_in_place(node[key], value)
            else:
                node[fresh(key) if isinstance(key, str) else key] = fresh(value)
        return node
    if isinstance(node, CommentedSeq) and isinstance(new, list):
        if to_plain(list(node)) == new:
            return node
        return fresh(new)
    return fresh(new)


def fresh(value: Any) -> Any:
    if isinstance(value, str) and not_raw(value):  # ruamel would fold NEL, LS and PS away unquoted
        return DoubleQuotedScalarString(value)
    if isinstance(value, dict):
        m = CommentedMap()
        for k, v in value.items():
            m[fresh(k) if isinstance(k, str) else k] = fresh(v)  # a key (a step's args) is a string too
        return m
    if isinstance(value, list):
        if not value:
            seq = CommentedSeq()
            seq.fa.set_flow_style()
            return seq
        return CommentedSeq([fresh(v) for v in value])
    return value


def new_map(data: dict[str, Any]) -> CommentedMap:
    result: CommentedMap = fresh(data)
    return result


def _hostile(err: Exception, file: str) -> Refused:
    """The one line for input that breaks the YAML reader itself (a number of 100,000 digits, deep nesting)."""
    from workbench.model.frontmatter import MAX_DIGITS

    if isinstance(err, ValueError) and "integer string conversion" in str(err):
        return Refused(f"{file}: a number of more than {MAX_DIGITS:,} digits, which wb does not read; fix the file "
                       "or restore it with git")
    return Refused(f"{file}: unreadable YAML: {type(err).__name__}: {str(err)[:200]}")
