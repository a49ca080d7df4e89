"""config.yaml's bytes read as written: the one parser of the file (merging over the defaults and caching the
result is store/config.py's; a diff and a migration read it as written)."""

from __future__ import annotations

from workbench.errors import Refused

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def parse(raw: bytes) -> Any:
    """The plain data of config.yaml (None: empty or only comments); Refused for bytes that are not UTF-8
    or not plain YAML. The file as `wb init` writes it, and most hand edits of it, are in the subset of YAML
    that state.md's frontmatter reader takes without ruamel (model/frontmatter.py: it reads what ruamel reads,
    or steps aside); anything else is ruamel's."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("config.yaml: not UTF-8 text") from None
    from workbench.model.frontmatter import fast_frontmatter

    try:
        fast = fast_frontmatter(text)
    except Refused:  # a number too long to read: ruamel's reading refuses it, in config.yaml's words
        fast = None
    if fast is not None:
        return fast
    from workbench.model import yamlio  # ruamel costs ~20 ms to import: only when a file must really be parsed

    loaded = yamlio.load_safe(text, "config.yaml")
    return yamlio.to_plain(loaded) if loaded is not None else None


def settings(raw: bytes) -> dict[str, Any] | None:
    """`parse`, which must be a mapping of settings (None: empty)."""
    data = parse(raw)
    if data is not None and not isinstance(data, dict):
        raise Refused("config.yaml: the top level must be a mapping of settings")
    return data
