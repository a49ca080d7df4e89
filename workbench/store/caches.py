"""The caches of what wb itself last wrote, kept in the work tree's own git directory (`<git dir>/wb/cache/`).

They let a reader tell a person's edit from wb's own write by a stat (as git does for its index) and skip
the YAML parser when nothing changed: `state.json` (state.md's hash, stat and frontmatter), `state.body`
(its decision log), `board.json` (board.json as wb wrote it), `calls.json` (calls.jsonl's size when the
commit gate last found it valid), `config.json` (config.yaml merged over the
defaults, keyed by its hash) and `guard.json` (when a file was last edited by hand). A cache is never the
truth: a missing or broken one is read as absent.

They live in the git directory, not in `.workbench/`: nothing a clone, a merge or an agent's edit of the work
tree writes reaches them, so the config wb runs is always config.yaml as read (a committed or agent-written
`.workbench/.cache/` is never read: `wb doctor` reports it). Linked worktrees each have their own git
directory, so each has its own caches.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from workbench.model.layout import Paths

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def sha(raw: bytes) -> str:
    from workbench.model.digest import sha256

    return sha256(raw).hexdigest()


def _write(path: Path, data: bytes) -> None:
    """One cache file, written atomically and not synced (a cache a crash loses is read as absent). The writer
    is imported when a cache is written: a reader (`wb task list`) writes none (issue 33)."""
    from workbench.store.atomic import atomic_write

    atomic_write(path, data, durable=False)


def _ready(p: Paths) -> bool:
    """Make the cache directory; False when there is no git directory to keep it in (never creates `.git`)."""
    if not p.git_dir.is_dir():
        return False
    p.cache.mkdir(parents=True, exist_ok=True)
    return True


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (FileNotFoundError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


# -- state.md ------------------------------------------------------------------------------------------
# One format, whoever writes it (a transaction, `wb init`, `wb migrate`, the merge driver): state.json holds
# {"sha": of state.md's bytes, "size"/"mtime_ns"/"ino": its stat when known, "body_sha": of the decision log,
# "state": the frontmatter}; state.body holds the decision log. Anything else is read as absent.
def write_state_cache(p: Paths, raw: bytes, state: dict[str, Any], body: str, *, stat: bool = True,
                      written: os.stat_result | None = None) -> None:
    """Remember what wb wrote to state.md: its hash and stat (to see a hand edit without re-reading it), its
    frontmatter (so `wb status` needs no YAML parser) and, in a file of its own, its decision log.
    `stat=False` when state.md is not on disk yet (the merge driver: git writes the file after it returns);
    freshness is then decided by the hash. `written`: the stat of the bytes as wb wrote them (atomic_write's),
    not of whatever state.md holds by now — a save just after wb's rename is a person's, not wb's."""
    if not _ready(p):
        return
    body_raw = body.encode("utf-8")
    _write(p.cache / "state.body", body_raw)
    info: dict[str, Any] = {}
    if written is not None:
        info = {"size": written.st_size, "mtime_ns": written.st_mtime_ns, "ino": written.st_ino}
    elif stat:
        try:
            st = p.state.stat()
            info = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
        except FileNotFoundError:
            pass
    blob = {"sha": sha(raw), **info, "body_sha": sha(body_raw), "state": state}
    _write(p.state_cache, json.dumps(blob, ensure_ascii=False).encode("utf-8"))


def read_state_cache(p: Paths, st: os.stat_result | None = None) -> dict[str, Any] | None:
    """The cache with `fresh`: does state.md hold what wb last wrote? Decided by stat (size and mtime, as git
    does for its index); the caller compares the hash when the stat differs. The body is read separately.
    `st`: the stat of the open file whose bytes the caller read (so stat and bytes are of one file)."""
    cached = read_json(p.state_cache)
    if not cached or not isinstance(cached.get("state"), dict) or not isinstance(cached.get("body_sha"), str):
        return None
    if st is None:
        st = p.state.stat()  # FileNotFoundError: the caller says state.md is missing
    # the inode too: an editor's save (a new file renamed over it) within the same clock tick and of the same
    # size would otherwise pass for wb's own write (git's "racy" case); wb's rename keeps its temp file's inode
    cached["fresh"] = (cached.get("size") == st.st_size and cached.get("mtime_ns") == st.st_mtime_ns
                       and cached.get("ino") == st.st_ino)
    return cached


def cached_body(p: Paths, cached: dict[str, Any]) -> str | None:
    """The decision log kept with `cached` (read_state_cache), or None when state.body is not the one it names
    (a crash between the two writes)."""
    try:
        raw = (p.cache / "state.body").read_bytes()
    except FileNotFoundError:
        return None
    if sha(raw) != cached.get("body_sha"):
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def drop_snapshot_caches(p: Paths) -> None:
    """Forget what wb last wrote to state.md and board.json (a file merged outside `git merge`): the next load
    reads them as a person's, and validates them."""
    for path in (p.state_cache, p.board_cache, p.cache / BOARD_ALIAS):
        path.unlink(missing_ok=True)


# -- board.json as git takes it whole in a merge -------------------------------------------------------------
# When only one side of a merge, rebase or stash pop changed board.json, git writes that side's file without
# asking wb's board driver, numbered as that side's log was; the state driver, which merged the log, knows the
# bytes git will write and the last_event the merged log gives them (review/merge_driver.py). Kept beside the
# caches until wb next writes the board, and applied only while state.md is the one that merge wrote.
BOARD_ALIAS = "board.alias.json"


def write_board_alias(p: Paths, taken: bytes, last_event: int, state_raw: bytes) -> None:
    if not _ready(p):
        return
    blob = {"sha": sha(taken), "last_event": last_event, "state_sha": sha(state_raw)}
    _write(p.cache / BOARD_ALIAS, json.dumps(blob).encode())


def board_alias(p: Paths, board_raw: bytes, state_sha: str | None) -> int | None:
    """The merged log's last_event for `board_raw` when it is the board git took whole in the merge that wrote
    state.md as it is now (`state_sha`), else None."""
    alias = read_json(p.cache / BOARD_ALIAS)
    if not isinstance(alias, dict) or state_sha is None or alias.get("state_sha") != state_sha:
        return None
    last = alias.get("last_event")
    if alias.get("sha") != sha(board_raw) or not isinstance(last, int) or isinstance(last, bool):
        return None
    return last


def drop_board_alias(p: Paths) -> None:
    try:
        (p.cache / BOARD_ALIAS).unlink(missing_ok=True)
    except OSError:
        pass


# -- board.json ----------------------------------------------------------------------------------------
def read_board_cache(p: Paths) -> bytes | None:
    """board.json as wb last wrote it, or None."""
    try:
        return p.board_cache.read_bytes()
    except FileNotFoundError:
        return None


def write_board_cache(p: Paths, raw: bytes) -> None:
    """Remember board.json as wb wrote it (a transaction, `wb init`, `wb migrate`, the merge driver)."""
    if not _ready(p):
        return
    _write(p.board_cache, raw)


# -- calls.jsonl ---------------------------------------------------------------------------------------
def read_calls_checked(p: Paths) -> dict[str, Any]:
    """{"size", "mtime_ns"} of calls.jsonl when the commit gate last found it valid ({} when never)."""
    return read_json(p.cache / "calls.json") or {}


def write_calls_checked(p: Paths, size: int, mtime_ns: int) -> None:
    try:
        if not _ready(p):
            return
        _write(p.cache / "calls.json", json.dumps({"size": size, "mtime_ns": mtime_ns}).encode())
    except OSError:
        pass


# -- config.yaml ---------------------------------------------------------------------------------------
# Keyed by the hash of config.yaml's bytes and kept in the git directory: only wb writes it, so the config wb
# runs is config.yaml as read, never a merged copy someone else wrote.
def _config_paths(config_path: Path) -> Paths:
    return Paths(config_path.parent.parent)


def _config_cache(config_path: Path) -> Path:
    return _config_paths(config_path).cache / "config.json"


CONFIG_CACHE_V = 2  # 2: the waits bounded in the merge (store/config.WAIT_BOUNDS): a cache of 1 is merged again


def read_config_cache(config_path: Path, digest: str) -> dict[str, Any] | None:
    """The merged config cached for config.yaml with this hash, or None."""
    cached = read_json(_config_cache(config_path))
    if cached and cached.get("sha") == digest and cached.get("v") == CONFIG_CACHE_V \
            and isinstance(cached.get("config"), dict):
        config: dict[str, Any] = cached["config"]
        return config
    return None


def write_config_cache(config_path: Path, digest: str, config: dict[str, Any]) -> None:
    cache = _config_cache(config_path)
    try:
        if not config_path.parent.is_dir() or not _ready(_config_paths(config_path)):
            return
        _write(cache, json.dumps({"v": CONFIG_CACHE_V, "sha": digest, "config": config}).encode())
    except OSError:
        pass  # a read-only workbench still reads its config


# -- the human guard -----------------------------------------------------------------------------------
def read_guard(p: Paths) -> dict[str, Any]:
    """{file: mtime of its last hand edit}."""
    return read_json(p.cache / "guard.json") or {}


def write_guard(p: Paths, guard: dict[str, Any]) -> None:
    try:
        if not _ready(p):
            return
        _write(p.cache / "guard.json", json.dumps(guard).encode())
    except OSError:
        pass


# -- each sealed log segment's events by type (wb log's count of earlier events): kept by the segment's digest --
def read_type_counts(p: Paths) -> dict[str, int]:
    data = read_json(p.cache / "typecounts.json")
    return {k: v for k, v in data.items() if isinstance(v, int)} if data else {}


def write_type_counts(p: Paths, counts: dict[str, int]) -> None:
    if not _ready(p):
        return
    try:
        _write(p.cache / "typecounts.json", json.dumps(counts, separators=(",", ":")).encode())
    except OSError:
        pass  # a cache: counted again next time


# -- each sealed log segment's task ids (wb board's history of a task): kept by the segment's digest ---------
def read_task_index(p: Paths) -> dict[str, list[str]]:
    """{segment sha256: the ids of the tasks its events name}; a broken entry is read as absent."""
    data = read_json(p.cache / "taskindex.json")
    return {k: [str(x) for x in v] for k, v in data.items() if isinstance(v, list)} if data else {}


def write_task_index(p: Paths, index: dict[str, list[str]]) -> None:
    if not _ready(p):
        return
    try:
        _write(p.cache / "taskindex.json", json.dumps(index, separators=(",", ":")).encode())
    except OSError:
        pass  # a cache: indexed again next time
