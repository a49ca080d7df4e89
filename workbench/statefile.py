"""state.md: YAML frontmatter (structured state) above a Markdown decision log.

Parsing keeps the round-trip node so that a wb write changes only the values that changed: a human's
comments, key order and untouched values survive byte for byte.
"""

from __future__ import annotations

import re
from typing import Any

from workbench import yamlio
from workbench.errors import Refused

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
    body = text[second.end():]
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    return yaml_text, body


def parse(raw: bytes, file: str = "state.md") -> StateFile:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Refused(f"{file}: not UTF-8 text (byte {err.start}); restore it with git") from None
    yaml_text, body = split(text, file)
    node = yamlio.load_round_trip(yaml_text, file, line_offset=1)
    if not isinstance(node, dict):
        raise Refused(f"{file}:2: the frontmatter must be a YAML mapping of keys to values")
    data = yamlio.to_plain(node)
    return StateFile(node, data, body)


def render(node: Any, data: dict[str, Any], body: str) -> bytes:
    """Write `data` into the round-trip `node` (None: a fresh file) and render the whole file."""
    if node is None:
        node = yamlio.new_map(data)
        node.yaml_set_start_comment(HEADER.strip("# \n"))
    else:
        yamlio.update_in_place(node, data)
    return ("---\n" + yamlio.dump_round_trip(node) + "---\n" + body).encode("utf-8")
