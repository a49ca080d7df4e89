"""The workbench on disk and the one transaction that writes it.

take the lock → load (snapshot + replay of events after `last_event`, human edits detected) → apply events
→ validate every changed document → append events (fsync) → write snapshots atomically → git commit →
release. Nothing else writes `.workbench/`.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench import faults, ids, reducer, schemas
from workbench.atomic import append_lines, atomic_write
from workbench.errors import Busy, GitError, NotFound, Refused, SchemaRefused, WorkbenchError
from workbench.eventlog import EventLog, Tail, chain, check_unicode
from workbench.gitstore import WB_DIR, CommitOutcome, GitRepo, find_worktree
from workbench.lock import WorkbenchLock
from workbench.reducer import Docs

CONFIG_DEFAULTS: dict[str, Any] = {
    "git": {"commit": "every", "ref": None},
    "lock_timeout": 10.0,
    "human_guard_seconds": 5.0,
    "acceptance_timeout": 600.0,
}


class HumanGuard(Busy):
    """An agent write inside the window after a hand edit of the same file."""

    def __init__(self, file: str, seconds_left: float) -> None:
        self.file = file
        self.seconds_left = seconds_left
        super().__init__(f"{file} was edited by hand moments ago; agent writes to it wait "
                         f"{seconds_left:.1f}s more (human_guard_seconds): retry then, or write with --actor human")


class Paths:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.wb = root / WB_DIR
        self.state = self.wb / "state.md"
        self.board = self.wb / "board.json"
        self.events = self.wb / "events.jsonl"
        self.calls = self.wb / "calls.jsonl"
        self.config = self.wb / "config.yaml"
        self.artifacts = self.wb / "artifacts"
        self.lock = self.wb / ".lock"
        self.cache = self.wb / ".cache"
        self.state_cache = self.cache / "state.json"
        self.board_cache = self.cache / "board.json"


def encode_board(board: dict[str, Any]) -> bytes:
    """One task per line: readable, diff- and merge-friendly, and written by json's C encoder (indent= is not)."""
    head = {k: v for k, v in board.items() if k != "tasks"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    tasks = [json.dumps(t, ensure_ascii=False) for t in board.get("tasks", [])]
    if tasks:
        lines.append('  "tasks": [')
        lines.append(",\n".join("    " + t for t in tasks))
        lines.append("  ]")
    else:
        lines.append('  "tasks": []')
    lines.append("}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _check_version(file: str, found: Any, known: int) -> None:
    if found is None:  # no schema_version at all: a file from wb 0.0.x, which `wb migrate` reads as version 0
        raise Refused(f"{file}: no schema_version (a wb 0.0.x file, version 0; this wb reads {known}); "
                      "run `wb migrate`")
    if not isinstance(found, int) or isinstance(found, bool):
        return  # the schema check names the problem
    if found > known:
        raise Refused(f"{file}: schema_version {found} is newer than this wb understands ({known}); upgrade wb")
    if found < known:
        raise Refused(f"{file}: schema_version {found} is older than this wb's {known}; run `wb migrate`")


@dataclass
class Loaded:
    docs: Docs
    tail: Tail
    state_node: Any  # round-trip node of state.md, None when not parsed
    state_raw: bytes  # state.md as read
    file_state: dict[str, Any]  # its frontmatter as read, before the events after it were folded in
    human_edits: list[dict[str, Any]] = field(default_factory=list)
    replayed: int = 0  # events after the snapshot folded in on load (crash recovery)


class Workbench:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths = Paths(root)
        check_no_links(self.paths)
        self.log = EventLog(self.paths.events)
        self.git = GitRepo(root)
        self._config: dict[str, Any] | None = None
        # the last state.md this process read or wrote: (bytes, round-trip node, data, body)
        self._node_cache: tuple[bytes, Any, dict[str, Any], str] | None = None

    @classmethod
    def discover(cls, start: Path | None = None) -> Workbench:
        root = find_worktree(start or Path.cwd())
        wb = cls(root)
        if not wb.paths.wb.is_dir():
            raise NotFound(f"no workbench in {root}: run `wb init` first")
        return wb

    # -- config -------------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        if self._config is None:
            self._config = load_config(self.paths.config)
        return self._config

    def lock(self) -> WorkbenchLock:
        env = os.environ.get("WB_LOCK_TIMEOUT")
        timeout = float(env) if env else float(self.config["lock_timeout"])
        return WorkbenchLock(self.paths.lock, timeout)

    # -- reading ------------------------------------------------------------------------------
    def load(self, *, detect_human: bool = True, need_node: bool = False, need_body: bool = True) -> Loaded:
        """Snapshots + the events after them. Without the lock this is a consistent-enough read for display;
        a transaction calls it under the lock. `need_body=False` (wb status) skips reading the decision log
        when state.md is as wb wrote it: the history's size then costs nothing."""
        p = self.paths
        try:
            board_raw = p.board.read_bytes()
            state_cached = read_state_cache(p)
            state_raw = b"" if (state_cached and state_cached["fresh"] and not need_body) else p.state.read_bytes()
        except FileNotFoundError as err:
            raise NotFound(f"{WB_DIR}/{Path(err.filename).name} is missing: restore it with git "
                           "(`git checkout -- .workbench`) or run `wb doctor`") from None
        if state_raw and state_cached and not state_cached["fresh"]:
            state_cached["fresh"] = state_cached.get("sha") == _sha(state_raw)
        node = None
        if not need_node and state_cached and state_cached["fresh"]:
            state = state_cached["state"]
            body = _cached_body(p) if need_body else ""
            if body is None:
                node, state, body = self._parse_state(state_raw or p.state.read_bytes())
        else:
            if state_cached is not None and "body" not in state_cached:
                state_cached["body"] = _cached_body(p)
                if state_cached["body"] is None:
                    state_cached = None
            node, state, body = self._parse_state(state_raw)
        board = _parse_board(board_raw)
        _check_version("state.md", state.get("schema_version"), reducer.STATE_VERSION)
        _check_version("board.json", board.get("schema_version"), reducer.BOARD_VERSION)
        if node is not None:  # read from the file, not from wb's own cache: a hand edit or a clone, validated
            schemas.check("state", state, "state.md")
        _check_board_shape(board)
        try:
            board_was = p.board_cache.read_bytes()  # what wb last wrote
        except FileNotFoundError:
            board_was = None
        if board_was != board_raw:  # a hand edit (or a clone): validated whole
            schemas.check("board", board, "board.json")
        file_state = copy.deepcopy(state)
        docs = Docs(state, body, board)
        human: list[dict[str, Any]] = []
        if detect_human:
            human = self._human_edits(docs, state_raw, board_raw, state_cached)
        last = _int(state.get("last_event"))
        board_from = _int(board.get("last_event"))
        tail, after = self.log.scan_after(last)
        if human and after:  # a crash after the log append kept a recorded hand edit from the snapshots
            recorded = [e["payload"] for e in after if e["type"] == "human.edit"]
            human = [edit for edit in human if edit not in recorded]
        if tail.seq < last:
            if (p.wb / ".migrate.json").exists():  # the snapshots are written before the migration's event
                raise Refused("a `wb migrate` was interrupted before it finished: run `wb migrate` to finish it")
            raise Refused(f"state.md: last_event {last} is beyond the event log's last seq {tail.seq}; "
                          "run `wb doctor`")
        for event in after:
            schemas.check("event", event, f"events.jsonl (seq {event['seq']})")  # unvalidated until folded
            try:
                reducer.apply(docs, event, board_from=board_from)
            except (KeyError, TypeError, AttributeError, ValueError, IndexError) as err:
                raise Refused(f"events.jsonl: seq {event['seq']} cannot be applied ({err}); "
                              "run `wb doctor`") from None
        if after:  # folded on load (after a crash, or a line written by hand): what they rebuild must be valid
            try:
                body_ok = isinstance(docs.body, str)
            except TypeError:
                body_ok = False
            if not body_ok:
                raise Refused("events.jsonl: the events after the snapshots rebuild a decision log that is not "
                              "text; run `wb doctor`")
            schemas.check("state", docs.state, "state.md (with the events after it)")
            schemas.check("board", docs.board, "board.json (with the events after it)")
        return Loaded(docs, tail, node, state_raw, file_state, human, replayed=len(after))

    def _parse_state(self, raw: bytes) -> tuple[Any, dict[str, Any], str]:
        from workbench import statefile

        if self._node_cache is None or self._node_cache[0] != raw:
            parsed = statefile.parse(raw)
            self._node_cache = (raw, parsed.node, parsed.data, parsed.body)
        _, node, data, body = self._node_cache
        return node, copy.deepcopy(data), body

    def _human_edits(self, docs: Docs, state_raw: bytes, board_raw: bytes,
                     state_cached: dict[str, Any] | None) -> list[dict[str, Any]]:
        """Compare each snapshot with the bytes wb last wrote (kept in .cache/). A difference at the same
        last_event is a human's edit; a newer last_event is wb's own write that a crash kept from the cache."""
        edits: list[dict[str, Any]] = []
        if state_cached is None:  # a fresh clone: what was committed is what wb last wrote
            committed = self._committed("state.md")
            if committed is not None and committed != state_raw:
                try:
                    _node, data, body = self._parse_state(committed)
                    state_cached = {"state": data, "body": body, "fresh": False}
                except Refused:
                    state_cached = None
        if state_cached and not state_cached["fresh"]:
            before = state_cached["state"]
            if docs.state.get("last_event") == before.get("last_event"):
                skip = reducer.DERIVED_STATE_KEYS
                changes = {k: v for k, v in docs.state.items() if k not in skip and before.get(k, object()) != v}
                removed = [k for k in before if k not in docs.state and k not in skip]
                edit: dict[str, Any] = {"file": "state.md", "changes": changes, "removed": removed}
                if docs.body != state_cached["body"]:
                    edit["body"] = docs.body
                edits.append(edit)
        try:
            board_before: bytes | None = self.paths.board_cache.read_bytes()
        except FileNotFoundError:
            board_before = self._committed("board.json")
        if board_before is not None and board_before != board_raw:
            old = _parse_board(board_before)
            if docs.board.get("last_event") == old.get("last_event"):
                edits.append(board_edit(old, docs.board))
        return edits

    # -- the human-edit guard ----------------------------------------------------------------------
    def note_human_edit(self, file: str) -> None:
        """Remember when a hand edit of `file` happened (its mtime), for human_guard_seconds."""
        path = self.paths.wb / file
        guard = _read_json(self.paths.cache / "guard.json") or {}
        try:
            guard[file] = path.stat().st_mtime
        except FileNotFoundError:
            return
        try:
            self.paths.cache.mkdir(exist_ok=True)
            atomic_write(self.paths.cache / "guard.json", json.dumps(guard).encode(), durable=False)
        except OSError:
            pass

    def check_human_guard(self, file: str) -> None:
        """Refuse an agent write to `file` within human_guard_seconds of a hand edit: the human's edit wins."""
        import time

        window = float(self.config.get("human_guard_seconds", 5))
        guard = _read_json(self.paths.cache / "guard.json") or {}
        edited = guard.get(file)
        if not window or not isinstance(edited, int | float):
            return
        left = edited + window - time.time()
        if left > 0:
            raise HumanGuard(file, left)

    def _committed(self, name: str) -> bytes | None:
        """The file as last committed by wb (HEAD, or config git.ref), for a clone that has no .cache/ yet."""
        from workbench.errors import GitError

        ref = self.config["git"].get("ref") or "HEAD"
        if ref != "HEAD" and not ref.startswith("refs/"):
            ref = "refs/heads/" + ref
        try:
            return self.git.committed_file(f"{WB_DIR}/{name}", ref)
        except (GitError, OSError, ValueError):
            return None

    def transaction(self, actor: str = "agent", session: str | None = None, *, commit: bool = True) -> Transaction:
        """One mutation. `commit=False` writes the files but leaves the git commit to a later `checkpoint`
        (a harness step commits once, at its end or at the yield that interrupts it)."""
        return Transaction(self, actor, session, commit=commit)

    def checkpoint(self, summary: str, session: str | None = None) -> CommitOutcome:
        """Commit whatever the workbench holds now (the end of a harness step)."""
        git_cfg = self.config["git"]
        if git_cfg.get("commit") == "off":
            return CommitOutcome()
        summary = redact(summary, secret_values(self.config))  # a step's description may quote a secret
        with self.lock():
            trailers = [f"Wb-Event: {self.log.tail().seq}"] + ([f"Wb-Session: {session}"] if session else [])
            try:
                return self.git.commit_workbench(f"{summary}\n\n" + "\n".join(trailers) + "\n", git_cfg.get("ref"))
            except (GitError, OSError) as err:  # OSError: a full disk while writing git's objects
                return CommitOutcome(skipped=f"written but not committed: {getattr(err, 'strerror', None) or err}")

    def recorded_call(self, key: str) -> dict[str, Any] | None:
        """The last journal record of a tool call (calls.jsonl), or None."""
        try:
            data = self.paths.calls.read_bytes()
        except FileNotFoundError:
            return None
        found = None
        for line in data.split(b"\n")[:-1]:  # a torn last line (no newline) was never acknowledged
            if key.encode() not in line:
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict) and record.get("key") == key:
                found = record
        return found


REDACTED = "[redacted]"
# Entries of .workbench/ that wb reads or writes: none may be a symbolic link (a clone can carry one).
LINK_CHECKED = ("config.yaml", "state.md", "board.json", "events.jsonl", "calls.jsonl", "artifacts", ".cache",
                ".lock", ".gitignore", ".gitattributes", ".migrate.json")


class SnapshotsBehind(WorkbenchError):
    """The events were appended (the change is recorded) but a snapshot could not be written."""

    def __init__(self, err: OSError) -> None:
        self.err = err
        name = Path(str(err.filename)).name if err.filename else "state.md/board.json"
        if name.startswith(".tmp-"):  # atomic_write's temp file: name its target
            name = name.split("-", 2)[-1]
        super().__init__(f"recorded in events.jsonl, but writing {name} failed: {err.strerror or err}; the next "
                         "wb command brings state.md and board.json up to date (`wb doctor --fix` does it now)")


def check_writable(p: Paths) -> None:
    """Raise PermissionError when the workbench cannot take a write (checked before anything is written)."""
    import errno

    for path in (p.wb, p.events, p.calls):
        if path.exists() and not os.access(path, os.W_OK | (os.X_OK if path == p.wb else 0)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))


def check_no_links(p: Paths) -> None:
    """Refuse a `.workbench` (or a file wb writes in it) that is a symbolic link: wb would write through it to
    anywhere, and commit what it points at."""
    for path in (p.wb, *(p.wb / name for name in LINK_CHECKED)):
        if path.is_symlink():
            raise Refused(f"{path.relative_to(p.root).as_posix()} is a symbolic link: wb reads and writes only "
                          "inside .workbench/ (replace the link with the real file or directory)")


def secret_values(config: dict[str, Any]) -> list[str]:
    """The values of the environment variables that config.yaml `redact` names, longest first."""
    names = config.get("redact") or []
    return sorted({os.environ[n] for n in names if isinstance(n, str) and os.environ.get(n)}, key=len, reverse=True)


def redact(value: Any, secrets: list[str]) -> Any:
    """`value` with every secret in its strings (keys too) replaced by [redacted]; the same object when none."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    return value


def board_edit(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    old_tasks = {t.get("id"): t for t in old.get("tasks", []) if isinstance(t, dict)}
    new_tasks = [t for t in new.get("tasks", []) if isinstance(t, dict)]
    new_ids = [t.get("id") for t in new_tasks]
    upsert = [t for t in new_tasks if old_tasks.get(t.get("id")) != t]
    remove = [tid for tid in old_tasks if tid not in set(new_ids)]
    edit: dict[str, Any] = {"file": "board.json", "upsert": upsert, "remove": remove}
    kept_old_order = [tid for tid in old_tasks if tid in set(new_ids)]
    if [tid for tid in new_ids if tid in old_tasks] != kept_old_order:
        edit["order"] = new_ids
    return edit


def check_board(docs: Docs) -> None:
    """Validate the board. Tasks not touched since load were valid when written: only the touched ones and the
    top level are checked (a 5,000-task board costs ~70 ms to check whole), plus the ids' uniqueness."""
    board = docs.board
    tasks = board.get("tasks")
    if not isinstance(tasks, list) or None in docs.touched:
        schemas.check("board", board, "board.json")
        return
    touched = [t for t in tasks if not isinstance(t, dict) or t.get("id") in docs.touched]
    if not schemas.is_valid("board", {**board, "tasks": touched}):
        schemas.check("board", board, "board.json")  # the full check names the right index
    seen: set[Any] = set()
    for i, task in enumerate(tasks):
        tid = task.get("id") if isinstance(task, dict) else None
        if tid in seen:
            raise SchemaRefused("board.json", f"tasks[{i}].id", f"duplicate id {tid}")
        seen.add(tid)


def write_state_cache(p: Paths, raw: bytes, state: dict[str, Any], body: str) -> None:
    """Remember what wb wrote to state.md: its hash and stat (to see a hand edit without re-reading it), its
    frontmatter (so `wb status` needs no YAML parser) and, in a file of its own, its decision log."""
    p.cache.mkdir(exist_ok=True)
    atomic_write(p.cache / "state.body", body.encode("utf-8"), durable=False)
    try:
        st = p.state.stat()
        stat = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    except FileNotFoundError:
        stat = {}
    blob = {"sha": _sha(raw), **stat, "state": state}
    atomic_write(p.state_cache, json.dumps(blob, ensure_ascii=False).encode("utf-8"), durable=False)


def read_state_cache(p: Paths) -> dict[str, Any] | None:
    """The cache with `fresh`: does state.md hold what wb last wrote? Decided by stat (size and mtime, as git
    does for its index); the caller compares the hash when the stat differs. The body is read separately."""
    cached = _read_json(p.state_cache)
    if not cached or not isinstance(cached.get("state"), dict):
        return None
    st = p.state.stat()  # FileNotFoundError: the caller says state.md is missing
    cached["fresh"] = cached.get("size") == st.st_size and cached.get("mtime_ns") == st.st_mtime_ns
    return cached


def _cached_body(p: Paths) -> str | None:
    try:
        return (p.cache / "state.body").read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def too_deep(value: Any, limit: int) -> bool:
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


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _sha(raw: bytes) -> str:
    import hashlib

    return hashlib.sha256(raw).hexdigest()


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (FileNotFoundError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _check_board_shape(board: dict[str, Any]) -> None:
    """What every reader relies on, checked on each load (cheap): `tasks` is a list of objects with string ids.
    The full schema check of a hand-edited board happens in _human_edits and in the write path."""
    tasks = board.get("tasks")
    if not isinstance(tasks, list) or not all(isinstance(t, dict) and isinstance(t.get("id"), str) for t in tasks):
        schemas.check("board", board, "board.json")  # names the first problem
        raise SchemaRefused("board.json", "tasks", "every task must be an object with a string id")


def _parse_board(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except RecursionError:
        raise Refused("board.json: nested too deeply to read (fix the file, or restore it with git)") from None
    except ValueError as err:
        line = getattr(err, "lineno", "?")
        raise Refused(f"board.json:{line}: broken JSON: {getattr(err, 'msg', err)} "
                      "(fix the file, or restore it with git)") from None
    if not isinstance(data, dict):
        raise Refused("board.json: (top level): must be a JSON object with schema_version and tasks")
    check_unicode(raw, data, "board.json")
    return data


def load_config(path: Path) -> dict[str, Any]:
    """config.yaml, validated and merged over the defaults. Parsing YAML costs ~30 ms, so the result is kept
    in .cache/config.json keyed by the file's hash."""
    try:
        raw_bytes = path.read_bytes()
    except FileNotFoundError:
        raw_bytes = None
    digest = _sha(raw_bytes or b"")
    cache = path.parent / ".cache" / "config.json"
    cached = _read_json(cache)
    if cached and cached.get("sha") == digest and isinstance(cached.get("config"), dict):
        config: dict[str, Any] = cached["config"]
        return config
    raw: Any = {"schema_version": 1}
    if raw_bytes is not None:
        from workbench import yamlio

        try:
            text = raw_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("config.yaml: not UTF-8 text") from None
        loaded = yamlio.load_safe(text, "config.yaml")
        if loaded is not None:
            raw = yamlio.to_plain(loaded)
    if isinstance(raw, dict):
        _check_version("config.yaml", raw.get("schema_version"), 1)
    schemas.check("config", raw, "config.yaml")
    merged = copy.deepcopy(CONFIG_DEFAULTS)
    for key, value in raw.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    if raw_bytes is not None and cache.parent.parent.is_dir():
        try:
            cache.parent.mkdir(exist_ok=True)
            atomic_write(cache, json.dumps({"sha": digest, "config": merged}).encode(), durable=False)
        except OSError:
            pass  # a read-only workbench still reads its config
    return merged


class Transaction:
    """One mutation: under the lock, events in → documents validated → log, snapshots, commit.

    Use as a context manager; `emit()` records events (folded into `docs` at once, so later logic sees them);
    leaving the block without an exception commits, an exception aborts with nothing written.
    """

    def __init__(self, wb: Workbench, actor: str, session: str | None, *, commit: bool = True) -> None:
        self.wb = wb
        self.git_commit = commit
        self.agent_board_changed = False
        self.calls: list[dict[str, Any]] = []
        self.actor = actor
        self.session = session
        self.events: list[dict[str, Any]] = []
        self.board_changed = False
        self.summary: str | None = None
        self.outcome: CommitOutcome | None = None
        self._lock = wb.lock()
        self._loaded: Loaded | None = None
        self._secrets = secret_values(wb.config)

    @property
    def docs(self) -> Docs:
        assert self._loaded is not None, "transaction not entered"
        return self._loaded.docs

    def __enter__(self) -> Transaction:
        self._lock.acquire()
        try:
            self._loaded = self.wb.load()
            self.board_changed = self._loaded.replayed > 0
            for edit in self._loaded.human_edits:
                self.wb.note_human_edit(edit["file"])
                self.emit("human.edit", edit, actor="human")
        except BaseException:
            self._lock.release()
            raise
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self.commit()
        finally:
            self._lock.release()

    def emit(self, type_: str, payload: dict[str, Any], *, actor: str | None = None,
             session: str | None = None, ts: str | None = None) -> dict[str, Any]:
        loaded = self._loaded
        assert loaded is not None
        payload = redact(payload, self._secrets)  # the one door to events, state.md and board.json
        event = {
            "schema_version": 1,
            "seq": loaded.tail.seq + len(self.events) + 1,
            "id": ids.new_id(),
            "ts": ts or ids.utc_now(),
            "type": type_,
            "actor": actor or self.actor,
            "session": session if session is not None else self.session,
            "payload": payload,
        }
        self.events.append(event)
        if reducer.apply(self.docs, event):
            self.board_changed = True
            if event["actor"] != "human":
                self.agent_board_changed = True
        return event

    def journal(self, record: dict[str, Any]) -> None:
        """A calls.jsonl record, made durable before this transaction's events."""
        self.calls.append(redact(record, self._secrets))

    def commit(self) -> None:
        loaded = self._loaded
        assert loaded is not None
        if not self.events:
            if loaded.replayed:
                self._write_snapshots(loaded)  # a crash left the snapshots behind the log: catch them up
            return
        try:
            chain(self.events, loaded.tail)
        except UnicodeEncodeError:
            raise Refused("refused: the change holds text that is not valid Unicode (a lone surrogate, such as "
                          "bytes that are not UTF-8 in a command-line argument)") from None
        for event in self.events:
            schemas.check("event", event, f"events.jsonl (seq {event['seq']})")
        schemas.check("state", self.docs.state, "state.md")
        if too_deep(self.docs.state.get("session"), 56):  # state.md must read back (yamlio.MAX_DEPTH)
            raise SchemaRefused("state.md", "session", "nested more than 56 levels deep (a step's args?)")
        if self.board_changed:
            check_board(self.docs)
        for record in self.calls:
            schemas.check("call", record, "calls.jsonl")
        if self.actor == "agent":  # after validation: a broken hand edit is reported as such, not as busy
            self.wb.check_human_guard("state.md")
            if self.agent_board_changed:  # recording the human's own edit is not an agent write
                self.wb.check_human_guard("board.json")
        faults.point("before_event_append")
        check_writable(self.wb.paths)  # a read-only workbench refuses before the log, not half-way through
        if self.calls:
            append_lines(self.wb.paths.calls, [json.dumps(r, ensure_ascii=False, separators=(",", ":"))
                                               for r in self.calls])
        self.wb.log.append(self.events, loaded.tail)
        faults.point("after_event_append")
        try:
            self._write_snapshots(loaded)
        except OSError as err:  # disk full after the append: the change is in the log, the snapshots catch up
            raise SnapshotsBehind(err) from None
        self.outcome = self._git_commit() if self.git_commit else CommitOutcome()

    def _write_snapshots(self, loaded: Loaded) -> None:
        from workbench import statefile

        p = self.wb.paths
        docs = self.docs
        if self.board_changed or loaded.replayed:
            board_raw = encode_board(docs.board)
            # No directory fsync: the log append above is durable, and a rename lost to a power cut leaves
            # the old snapshot, whose last_event is behind the log; the next load folds the rest in.
            atomic_write(p.board, board_raw, sync_dir=False)
            faults.point("after_board_write")
        else:
            board_raw = None
        state_raw = None
        node = loaded.state_node
        if node is None:
            state_raw = statefile.render_fast(loaded.state_raw, loaded.file_state, docs.state, docs.body)
            if state_raw is None:
                node = self.wb._parse_state(loaded.state_raw)[0]
        if state_raw is None:
            state_raw = statefile.render(node, docs.state, docs.body)
        atomic_write(p.state, state_raw, sync_dir=False)  # as board.json above
        faults.point("after_state_write")
        p.cache.mkdir(exist_ok=True)
        if board_raw is not None or not p.board_cache.exists():
            atomic_write(p.board_cache, p.board.read_bytes() if board_raw is None else board_raw, durable=False)
        write_state_cache(p, state_raw, docs.state, docs.body)
        if node is not None:
            self.wb._node_cache = (state_raw, node, copy.deepcopy(docs.state), docs.body)

    def _git_commit(self) -> CommitOutcome:
        git_cfg = self.wb.config["git"]
        if git_cfg.get("commit") == "off":
            return CommitOutcome(skipped=None)
        last = self.events[-1]
        message = (self.summary or default_summary(self.events)).strip()
        trailers = [f"Wb-Event: {last['seq']}"]
        session = last.get("session")
        if session:
            trailers.append(f"Wb-Session: {session}")
        message = redact(f"{message}\n\n" + "\n".join(trailers) + "\n", self._secrets)
        try:
            outcome = self.wb.git.commit_workbench(message, git_cfg.get("ref"))
        except (GitError, OSError) as err:  # OSError: a full disk while writing git's objects
            # The mutation is durable (log + snapshots); only its commit failed. The next write commits it.
            return CommitOutcome(skipped=f"written but not committed: {getattr(err, 'strerror', None) or err}")
        faults.point("after_git_commit")
        return outcome


def default_summary(events: list[dict[str, Any]]) -> str:
    own = [e for e in events if e["type"] != "human.edit"] or events
    types = sorted({e["type"] for e in own})
    return "wb: " + ", ".join(types)
