"""A person's edit of config.yaml: recorded as a `config.edit` event naming what changed.

config.yaml is the one workbench file no event folds into, so an edit of it (tools added, a hook removed, a
mode changed) left no trace but a `Wb-Also-Changed` trailer on the next commit. Now each transaction compares
config.yaml with the one wb last saw (kept under the git directory, `wb/config-seen.json`, where no checkout
takes it) and records a difference as `config.edit`: keys, tools and hooks added, removed and changed. The
event is by `human`, or by `agent` during an agent's turn or open session (store/spool.py).

wb's own writes of config.yaml are not edits: `wb init` (a first look sets what was seen), `wb migrate` (its
`migration.apply` names config.yaml), a config.yaml whose digest an event already recorded (pulled from a
clone that recorded it), and `wb sync`'s move of the state to its own ref (it calls `remember`).
"""

from __future__ import annotations

import json
import os

from workbench.errors import WorkbenchError

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.stagecontext import StageWorkbench

SEEN = "config-seen.json"
SECTIONS = ("tools", "hooks")


def _seen_path(wb: StageWorkbench) -> str:
    return os.path.join(os.fspath(wb.git.git_dir), "wb", SEEN)


def _digest(wb: StageWorkbench) -> str | None:
    from workbench.store import caches

    try:
        return caches.sha(wb.paths.config.read_bytes())
    except OSError:
        return None


def _read(wb: StageWorkbench) -> tuple[str, dict[str, Any]] | None:
    """(digest of config.yaml's bytes, the config as read) now; None when it cannot be read. The YAML is
    parsed only when config.yaml changed (config's own cache, keyed by the same digest)."""
    from workbench.store import caches
    from workbench.store.config import parse_config

    try:
        raw = wb.paths.config.read_bytes()
        digest = caches.sha(raw)
        cached = caches.read_config_cache(wb.paths.config, digest)
        return digest, cached if cached is not None else parse_config(raw)
    except (OSError, WorkbenchError):
        return None


def _seen(wb: StageWorkbench) -> dict[str, Any] | None:
    try:
        with open(_seen_path(wb), "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and isinstance(data.get("sha"), str) and isinstance(data.get("config"), dict)
    return data if ok else None


def remember(wb: StageWorkbench, seq: int | None = None) -> None:
    """Note config.yaml as it is now as seen by wb (after a write of wb's own, or once its edit is recorded)."""
    now = _read(wb)
    if now is None:
        return
    try:
        seq = wb.log.tail().seq if seq is None else seq
        path = _seen_path(wb)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"sha": now[0], "config": now[1], "seq": seq}, f)
        os.replace(tmp, path)
    except (OSError, WorkbenchError, TypeError, ValueError):
        pass  # a record of what was seen: the next write looks again


def find(wb: StageWorkbench) -> tuple[dict[str, Any] | None, bool]:
    """(the config.edit payload for config.yaml as it is now, or None; whether what was seen needs noting)."""
    digest = _digest(wb)
    seen = _seen(wb)
    if digest is None or seen is None:
        # absent (`wb init` writes it at commit), or a first look (a new workbench, a fresh clone): nothing to
        # compare with; noted once this write is durable
        return None, True
    if seen["sha"] == digest:  # the usual case: one read and one hash, no YAML parsed
        return None, False
    now = _read(wb)
    if now is None:  # unreadable as this wb reads it (mid-edit, mid-migration): look again at the next write
        return None, False
    try:
        since = wb.log.read_after(int(seen.get("seq") or 0))
    except (WorkbenchError, ValueError, TypeError):
        since = []
    for event in since:
        payload = event.get("payload") or {}
        if event.get("type") == "config.edit" and payload.get("sha") == now[0]:
            return None, True  # recorded already (here before a crash, or in a clone this one pulled)
        if event.get("type") == "migration.apply" and any(
                isinstance(f, dict) and f.get("file") == "config.yaml" for f in payload.get("files", [])):
            return None, True  # wb migrate rewrote it
    payload = diff(seen["config"], now[1])
    if not payload:
        return None, True  # only comments or layout changed
    payload["sha"] = now[0]
    return payload, True


def describe(payload: dict[str, Any]) -> list[str]:
    """A config.edit's payload in words: `tools +lint +fmt -old ~pytest`, and the same for hooks and keys."""
    if not isinstance(payload.get("sha"), str):
        return []
    parts = []
    for section in ("keys", *SECTIONS):
        part = payload.get(section)
        if not isinstance(part, dict):
            continue
        names = [f"{mark}{name}" for mark, key in (("+", "added"), ("-", "removed"), ("~", "changed"))
                 for name in part.get(key) or []]
        if names:
            parts.append(f"{section} " + " ".join(str(n) for n in names))
    return parts


def diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """What changed between two configs: `keys` (top-level, `tools` and `hooks` aside) and, for `tools` and
    `hooks`, the names added, removed and changed, with the new values of what was added or changed."""
    out: dict[str, Any] = {}
    keys = _named(old, new, exclude=SECTIONS)
    if keys:
        out["keys"] = keys
    for section in SECTIONS:
        part = _named(old.get(section) or {}, new.get(section) or {})
        if part:
            out[section] = part
    return out


def _named(old: Any, new: Any, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return {"changed": {"": new}} if old != new else {}
    added = sorted(k for k in new if k not in old and k not in exclude)
    removed = sorted(k for k in old if k not in new and k not in exclude)
    changed = sorted(k for k in new if k in old and k not in exclude and old[k] != new[k])
    out: dict[str, Any] = {}
    if added:
        out["added"] = added
    if removed:
        out["removed"] = removed
    if changed:
        out["changed"] = changed
    if added or changed:
        out["values"] = {k: new[k] for k in added + changed}
    return out
