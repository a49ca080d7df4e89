"""The one module that configures ruamel.yaml.

Two loaders: round-trip (state.md frontmatter: a human's comments, key order and formatting survive a wb
write) and safe (config.yaml, plan files: plain data, never Python objects).
"""

from __future__ import annotations

import io
from datetime import date, datetime
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from workbench.errors import Refused


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
        return Refused(f"{file}:{line}: broken YAML: {err.problem} (fix the file, or restore it with git)")
    return Refused(f"{file}: broken YAML: {str(err).splitlines()[0]} (fix the file, or restore it with git)")


def load_round_trip(text: str, file: str, line_offset: int = 0) -> Any:
    try:
        return _RT.load(text)
    except YAMLError as err:
        raise _problem(err, file, line_offset) from None


def dump_round_trip(data: Any) -> str:
    out = io.StringIO()
    _RT.dump(data, out)
    return out.getvalue()


def load_safe(text: str, file: str) -> Any:
    try:
        return _SAFE.load(text)
    except YAMLError as err:
        raise _problem(err, file, 0) from None
    except (ValueError, TypeError, RecursionError) as err:  # ruamel raises these on some hostile input
        raise Refused(f"{file}: unreadable YAML: {err}") from None


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
                node[key] = fresh(value)
        return node
    if isinstance(node, CommentedSeq) and isinstance(new, list):
        if to_plain(list(node)) == new:
            return node
        return fresh(new)
    return fresh(new)


def fresh(value: Any) -> Any:
    if isinstance(value, dict):
        m = CommentedMap()
        for k, v in value.items():
            m[k] = fresh(v)
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
