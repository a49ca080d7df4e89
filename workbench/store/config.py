"""config.yaml: the defaults, and the file validated and merged over them.

Parsing YAML costs ~30 ms, so the merged result is kept in the git directory's wb cache (never in the work
tree), keyed by the hash of the file's bytes: the config wb runs is always config.yaml as read.
"""

from __future__ import annotations

from pathlib import Path

from workbench.model import configfile, schemas
from workbench.model.jsonl import copied
from workbench.store import caches

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

CONFIG_DEFAULTS: dict[str, Any] = {
    "git": {"commit": "every", "ref": None},
    "lock_timeout": 10.0,
    "human_guard_seconds": 5.0,
    "acceptance_timeout": 600.0,
    "archive": {"keep": 100, "chunk": 250},  # model/archive.py DEFAULT_KEEP, DEFAULT_CHUNK
}

# how long anyone waits is bounded, whatever config.yaml says (issue 30.2: a clone's config must not make every
# command hang, or keep an agent refused for days after a hand edit); a larger value is taken as the bound
WAIT_BOUNDS: dict[str, float] = {
    "lock_timeout": 600.0,
    "human_guard_seconds": 600.0,
    "acceptance_timeout": 86_400.0,
}


def load_config(path: Path) -> dict[str, Any]:
    """config.yaml at `path`, validated and merged over the defaults (the defaults alone when it is absent)."""
    try:
        raw_bytes = path.read_bytes()
    except FileNotFoundError:
        raw_bytes = None
    digest = caches.sha(raw_bytes or b"")
    cached = caches.read_config_cache(path, digest)
    if cached is not None:
        return cached
    merged = parse_config(raw_bytes)
    if raw_bytes is not None:
        caches.write_config_cache(path, digest, merged)
    return merged


def parse_config(raw_bytes: bytes | None) -> dict[str, Any]:
    """config.yaml's bytes (None: no file) validated and merged over the defaults; Refused when invalid."""
    raw: Any = {"schema_version": 1}
    if raw_bytes is not None:
        loaded = configfile.parse(raw_bytes)
        if loaded is not None:
            raw = loaded
    if isinstance(raw, dict):
        schemas.check_version("config.yaml", raw.get("schema_version"), 1)
    schemas.check("config", raw, "config.yaml")
    merged = copied(CONFIG_DEFAULTS)  # JSON data: copied without importing copy and weakref on every write
    for key, value in raw.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    for key, bound in WAIT_BOUNDS.items():
        if isinstance(merged.get(key), (int, float)) and merged[key] > bound:
            merged[key] = bound
    return merged
