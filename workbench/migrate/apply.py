"""`wb migrate`: bring the files of `.workbench/` written by an older wb to the formats this wb reads.

Every file kind (config, state, board, events, calls) has an ordered chain of migrations; migration N of a
kind turns a version-N document into a version-N+1 one. A migration is a pure function — documents in,
documents out, no clock and no disk (a time it must stamp comes in through `Context`). The chains are checked
at import: contiguous, and ending at the version this wb writes, which must also be the `schema_version`
const of the kind's JSON Schema. Version 0 is the pre-release layout of wb 0.0.x (docs/migrations.md).

Writing is one durable path under the workbench lock: plan (read, migrate, fold, validate, render) → the
intent file `.workbench/.migrate.json`, holding every target file and event → each file written atomically →
the events appended (`migration.apply` last) → one git commit → the intent removed. A kill at any point leaves
the intent behind, and the next `wb migrate` finishes from it. The `migration.apply` event carries the
migrated documents, so `wb replay` reproduces the new snapshots.

This is the one write of `.workbench/` that is not a Transaction: a transaction loads the workbench first,
and this wb refuses to load the older files a migration exists to read; and a migration rewrites files a
transaction never does (config.yaml, a whole pre-release log), with its own intent file for crash safety.
So it writes through the store's functions instead — `write_workbench_file` (atomic, inside `.workbench/`,
never through a link), the event log's append, the one cache writer (`caches`) and the one commit policy
(`workbench.store.commit`, whose gate validates what is committed), all under the workbench lock.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench import faults
from workbench.errors import GitError, Refused
from workbench.git.repo import CommitOutcome
from workbench.migrate.read import (  # noqa: F401 - edge_lines, read_config: read by the tests as migrate.X
    Found,
    edge_lines,
    read_board,
    read_config,
    read_log,
    read_state,
    refuse_unknown,
)
from workbench.migrate.registry import (  # noqa: F401 - the registry and migrations, re-exported
    FAILED_REASON,
    KINDS,
    REGISTRY,
    Context,
    Kind,
    Migration,
    RegistryError,
    board_0_to_1,
    board_1_to_2,
    check_registry,
    compact_json,
    config_0_to_1,
    events_0_to_1,
    migration,
    state_0_to_1,
    state_1_to_2,
    upgrade,
)
from workbench.model import configfile, ids, reducer, schemas
from workbench.model.boardfile import encode_board
from workbench.model.jsonl import encode, line_hash
from workbench.model.layout import GITIGNORE, WB_DIR
from workbench.model.redaction import redact, secret_values
from workbench.progress import Progress, share, tick
from workbench.store import caches
from workbench.store import commit as commit_policy
from workbench.store.atomic import remove_workbench_file, write_workbench_file
from workbench.store.caches import sha as _sha
from workbench.store.config import CONFIG_DEFAULTS
from workbench.store.drivers import ATTRIBUTES, register_drivers
from workbench.store.eventlog import Tail, chain
from workbench.store.workbench import Workbench

INTENT = ".migrate.json"
INTENT_VERSION = 1
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
# A plan passes over an old log four times; their weights are their measured costs (upcasting a line costs
# about six readings of it), so the bar of a migration moves at an even pace rather than in jumps.
READ, UPCAST, CHECK, ENCODE = 1, 6, 1, 2
PASSES = READ + UPCAST + CHECK + ENCODE


# -- the plan ----------------------------------------------------------------------------------------------
@dataclass
class Plan:
    versions: dict[str, int | None]  # file → version found (None: absent)
    files: list[dict[str, Any]] = field(default_factory=list)  # file, from, to, changes
    intent: dict[str, Any] | None = None  # None: nothing to do


def make_plan(wb: Workbench, now: str | None = None, progress: Progress | None = None) -> Plan:
    """Read every file, refuse unknown versions, and compute — without writing anything — the files and events
    a migration writes, validated against the schemas. An old event log takes three passes (read, upcast,
    validate): `progress(done, total)` counts them, every 5,000 lines; a current log needs none."""
    from workbench.model import statefile

    p = wb.paths
    found = {"config": read_config(p.config), "state": read_state(p.state), "board": read_board(p.board),
             "events": read_log(p.events, "events.jsonl", whole=True, progress=share(progress, 0, READ, PASSES)),
             "calls": read_log(p.calls, "calls.jsonl", whole=False)}
    refuse_unknown(found)
    versions = {KINDS[n].file: f.version for n, f in found.items()}
    stale = [n for n, f in found.items() if f.version is not None and f.version < KINDS[n].current]
    if not stale:
        return Plan(versions)
    ctx = Context(now or ids.utc_now())
    st, bd, ev = found["state"], found["board"], found["events"]
    assert st.version is not None and bd.version is not None
    fm = st.doc["frontmatter"]

    # the documents: migrated, then the events newer than the snapshot folded in
    upcast = upgrade("events", ev.doc, ev.version or 0, ctx) if "events" in stale else None
    upcasts = len(upcast) if upcast else 0
    checking = share(progress, READ + UPCAST, CHECK, PASSES) if upcasts else None
    if checking:
        checking(0, upcasts)  # the upcast is one call: its pass is done when it returns
    base = Tail(upcast[-1]["seq"], line_hash(encode(upcast[-1])), 0, 0) if upcast else (
        Tail(0, None, 0, 0) if upcast is not None else wb.log.tail())
    human: list[dict[str, Any]] = []
    node = st.node if "schema_version" in fm else None  # wb 0.0.x wrote no comments: a fresh rendering
    if "state" not in stale and "board" not in stale and upcast is None:
        loaded = wb.load(detect_human=True, need_node=True)
        docs, human, node = loaded.docs, loaded.human_edits, loaded.state_node
    else:
        if "last_event" not in fm and upcast is None and base.seq:
            raise Refused(f"state.md is a wb 0.0.x file but events.jsonl already holds {base.seq} events of a "
                          "later wb; restore the state.md that goes with that log (git) and run `wb migrate` again")
        state_doc = upgrade("state", st.doc, st.version, ctx)
        docs = reducer.Docs(state_doc["frontmatter"], state_doc["body"], upgrade("board", bd.doc, bd.version, ctx))
        last, board_from = fm.get("last_event"), bd.doc.get("last_event")
        if isinstance(last, int) and not isinstance(last, bool):
            after = [e for e in upcast if e["seq"] > last] if upcast is not None else wb.log.read_after(last)
            board_from = board_from if isinstance(board_from, int) and not isinstance(board_from, bool) else 0
            for event in after:
                reducer.apply(docs, event, board_from=board_from)

    # the events: the log's first if it has none, hand edits found on the way, then migration.apply
    payload = migration_payload(found, stale, docs)
    events: list[dict[str, Any]] = []
    secrets = secret_values(found["config"].doc if isinstance(found["config"].doc, dict) else {})

    config = upgrade("config", found["config"].doc, found["config"].version or 0, ctx) if "config" in stale else None
    config_doc = config or found["config"].doc or {}
    secrets = secret_values(config_doc if isinstance(config_doc, dict) else {})

    def add(type_: str, data: dict[str, Any], actor: str) -> None:  # redacted, as the transaction's emit does
        events.append({"schema_version": 1, "id": ids.new_id(), "ts": ctx.now, "type": type_, "actor": actor,
                       "session": None, "payload": redact(data, secrets)})

    if base.seq == 0:
        add("workbench.init", {"next_action": docs.state.get("next_action", "")}, "wb")
    from workbench.store.humanedit import PRIVATE

    for edit in human:
        add("human.edit", {k: v for k, v in edit.items() if k not in PRIVATE}, "human")
    add("migration.apply", payload, "wb")
    chain(events, base)
    order = list(docs.state)
    for event in events:  # exactly what a replay does, so the snapshots are the replay's result
        reducer.apply(docs, event)
    docs.state = {**{k: docs.state[k] for k in order if k in docs.state}, **docs.state}  # keys where they were

    # validate everything, then render each file and check it reads back as the document
    if config is not None:
        schemas.check("config", config, "config.yaml")
    schemas.check("state", docs.state, "state.md")
    schemas.check("board", docs.board, "board.json")
    for n, event in enumerate([*(upcast or []), *events]):
        tick(checking, n, upcasts)
        schemas.check("event", event, f"events.jsonl (seq {event['seq']})")
    writes: list[tuple[str, bytes]] = []
    files: list[dict[str, Any]] = []
    if config is not None:
        writes.append(("config.yaml", render_config(found["config"].raw or b"", config)))
        files.append(file_entry("config.yaml", found["config"].version, field_changes(found["config"].doc, config)))
    created = ((".gitignore", GITIGNORE), (".gitattributes", ATTRIBUTES), ("artifacts/.gitkeep", ""),
               ("calls.jsonl", ""))  # what `wb init` makes and wb 0.0.x did not
    for rel, content in created:
        if not (p.wb / rel).exists():
            writes.append((rel, content.encode()))
            files.append(file_entry(rel, None, []))
    state_raw = statefile.render(node, docs.state, docs.body)
    again = statefile.parse(state_raw)
    if again.data != docs.state or again.body != docs.body:
        raise Refused("state.md: the migrated file does not read back as the migrated document (a wb bug); "
                      "nothing was changed")
    writes.append(("state.md", state_raw))
    files.append(file_entry("state.md", st.version,
                       pair_moves(field_changes(fm, docs.state)) + body_change(st.doc["body"], docs.body)))
    board_raw = encode_board(docs.board)
    if board_raw != bd.raw:
        writes.append(("board.json", board_raw))
        files.append(file_entry("board.json", bd.version, field_changes(bd.doc, docs.board)))
    log_changes: list[dict[str, Any]] = []
    if upcast:
        encoding = share(progress, READ + UPCAST + CHECK, ENCODE, PASSES)
        lines: list[bytes] = []
        for n, event in enumerate(upcast):
            tick(encoding, n, upcasts)
            lines.append(encode(event) + b"\n")
        writes.append(("events.jsonl", b"".join(lines)))
        log_changes.append({"op": "change", "path": "lines", "old": f"{len(upcast)} pre-release lines",
                            "new": f"{len(upcast)} legacy.event events (seq 1-{len(upcast)}, hash-chained)"})
    log_changes.append({"op": "append", "path": "events", "new": [e["type"] for e in events]})
    files.append(file_entry("events.jsonl", ev.version, log_changes))

    git_cfg = {**CONFIG_DEFAULTS["git"], **((config or found["config"].doc or {}).get("git") or {})}
    steps = ", ".join(f"{f['file']} {'new' if f['from'] is None else f['from']}→{f['to']}" for f in files
                      if f["from"] != f["to"] and f["to"] is not None)
    intent = {
        "schema_version": INTENT_VERSION,
        "started_at": ctx.now,
        "files": files,
        "writes": [{"path": rel, "sha256": _sha(data), "text": data.decode("utf-8")} for rel, data in writes],
        "log_base": {"seq": base.seq, "hash": base.hash},
        "events": events,
        "state_cache": {"state": docs.state, "body": docs.body},
        "git": {"commit": git_cfg.get("commit"), "ref": git_cfg.get("ref")},
        "message": f"wb: migrate {steps}\n\nWb-Event: {events[-1]['seq']}\n",
    }
    return Plan(versions, files, intent)


def migration_payload(found: dict[str, Found], stale: list[str], docs: reducer.Docs) -> dict[str, Any]:
    """The `migration.apply` event's payload: the versions from and to, and the migrated documents (so that a
    replay reproduces the new snapshots)."""
    born = [n for n in ("events", "calls") if found[n].version is None]  # absent: created by this migration
    payload: dict[str, Any] = {"from": {KINDS[n].file: found[n].version for n in stale + born},
                               "to": {KINDS[n].file: KINDS[n].current for n in stale + born}}
    if "state" in stale:
        payload["state"] = {k: v for k, v in docs.state.items() if k not in ("updated_at", "last_event")}
        payload["body"] = docs.body
    if "board" in stale:
        payload["board"] = {k: v for k, v in docs.board.items() if k != "last_event"}
    return copy.deepcopy(payload)


def file_entry(file: str, source: int | None, changes: list[dict[str, Any]]) -> dict[str, Any]:
    kind = next((k for k in KINDS.values() if k.file == file), None)  # None: .gitignore, artifacts/.gitkeep
    return {"file": file, "from": source, "to": kind.current if kind else None, "changes": changes}


def render_config(raw: bytes, config: dict[str, Any]) -> bytes:
    """config.yaml is the human's file: update it in place so every comment survives, schema_version first."""
    from workbench.model import yamlio

    node = yamlio.load_round_trip(raw.decode("utf-8"), "config.yaml")
    added = "schema_version" not in node
    yamlio.update_in_place(node, config)
    if added:
        node.insert(0, "schema_version", node.pop("schema_version"))
    text = yamlio.dump_round_trip(node)
    if configfile.parse(text.encode("utf-8")) != config:
        raise Refused("config.yaml: the migrated file does not read back as the migrated settings (a wb bug); "
                      "nothing was changed")
    return text.encode("utf-8")


# -- field-level changes, for --dry-run and the report -----------------------------------------------------
def field_changes(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """Each added, removed and changed field, by dotted path; lists of tasks are matched by id."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = [{"op": "remove", "path": _join(path, k), "old": v} for k, v in before.items() if k not in after]
        for key, value in after.items():
            if key not in before:
                out.append({"op": "add", "path": _join(path, key), "new": value})
            else:
                out += field_changes(before[key], value, _join(path, key))
        return out
    if _by_id(before) and _by_id(after) and (before or after):
        old = {t["id"]: t for t in before}
        new = {t["id"]: t for t in after}
        out = [{"op": "remove", "path": f"{path}[{tid}]", "old": t} for tid, t in old.items() if tid not in new]
        for tid, task in new.items():
            if tid not in old:
                out.append({"op": "add", "path": f"{path}[{tid}]", "new": task})
            else:
                out += field_changes(old[tid], task, f"{path}[{tid}]")
        return out
    if before != after:
        return [{"op": "change", "path": path or "(top level)", "old": before, "new": after}]
    return []


def pair_moves(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A removed field and an added one with the same value are one field renamed (risks → blockers)."""
    out = list(changes)
    for removed in [c for c in changes if c["op"] == "remove" and c["old"] and isinstance(c["old"], str | list | dict)]:
        added = next((c for c in out if c["op"] == "add" and c["new"] == removed["old"]), None)
        if added is not None:
            out[out.index(added)] = {"op": "move", "path": added["path"], "from": removed["path"], "new": added["new"]}
            out.remove(removed)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _by_id(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(t, dict) and isinstance(t.get("id"), str) for t in value)


def body_change(before: str, after: str) -> list[dict[str, Any]]:
    if before == after:
        return []
    if after.startswith(before.rstrip("\n")):
        return [{"op": "append", "path": "decision log", "new": after[len(before.rstrip("\n")):]}]
    return [{"op": "change", "path": "decision log", "old": before, "new": after}]


# -- carrying it out ---------------------------------------------------------------------------------------
@dataclass
class Report:
    workbench: str
    versions: dict[str, int | None]  # as found
    files: list[dict[str, Any]]
    events: list[dict[str, Any]] = field(default_factory=list)  # seq and type of each event appended
    dry_run: bool = False
    resumed: bool = False  # an interrupted migration was finished
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.files)

    def to_json(self) -> dict[str, Any]:
        return {"workbench": self.workbench, "changed": self.changed, "dry_run": self.dry_run,
                "resumed": self.resumed, "versions": self.versions,
                "current": {k.file: k.current for k in KINDS.values()}, "files": self.files,
                "events": self.events, "commit": self.commit, "warnings": self.warnings}


def migrate(start: Path | None = None, *, dry_run: bool = False, now: str | None = None,
            progress: Progress | None = None) -> Report:
    """Migrate the workbench containing `start` (default: the current directory). Idempotent; finishes an
    interrupted migration; `dry_run` computes the same plan and writes nothing. `progress(done, total)`
    follows the passes over an old event log; a migration that writes plans twice (before taking the lock and
    under it), each plan half of the total. Then an events.jsonl past its threshold (a workbench from before
    sealed segments) is sealed into `.workbench/log/` and committed: no schema_version changes for that."""
    wb = Workbench.discover(start)
    report = _migrate(wb, dry_run=dry_run, now=now, progress=progress)
    _seal_backlog(wb, report)
    return report


def _seal_backlog(wb: Workbench, report: Report) -> None:
    """Seal a long events.jsonl into segments (workbench/store/sealing.py), as the next write would: crash-safe
    and resumable by itself (a re-run finishes a seal cut short), idempotent (nothing is due afterwards)."""
    from workbench.store import sealing

    try:
        config = wb.reload_config()
    except Refused:
        return  # config.yaml does not load: the migration above said why
    if not sealing.due(wb.log, config):
        return
    tail = wb.log.tail()
    before = len(wb.log.headers())
    change: dict[str, Any] = {"file": "events.jsonl", "from": KINDS["events"].current, "to": KINDS["events"].current,
              "changes": [{"op": "change", "path": "segments", "old": f"{tail.good_size:,} bytes in events.jsonl",
                           "new": "sealed segments in .workbench/log/ (events.jsonl keeps the newest)"}]}
    if report.dry_run:
        report.files.append(change)
        return
    with _lock(wb):
        sealing.seal(wb.log, config)
    made = len(wb.log.headers()) - before
    change["changes"][0]["new"] = f"{made} sealed segment(s) in .workbench/log/ (events.jsonl keeps the newest)"
    report.files.append(change)
    outcome = commit_policy.commit(wb, f"wb: migrate: seal the event log into {made} segment(s)")
    report.commit = outcome.sha or report.commit
    if outcome.skipped:
        report.warnings.append(outcome.skipped)


def _migrate(wb: Workbench, *, dry_run: bool, now: str | None, progress: Progress | None) -> Report:
    path = wb.paths.wb / INTENT
    pending = _read_intent(path)
    if pending is None:
        # refusals (a newer file) happen before the lock: nothing is touched
        plan = make_plan(wb, now, share(progress, 0, 1, 1 if dry_run else 2))
        if dry_run or plan.intent is None:
            return _report(wb, plan.intent, plan.versions, plan.files, dry_run=dry_run)
    elif dry_run:
        return _report(wb, pending, {}, pending["files"], dry_run=True, resumed=True)
    with _lock(wb):
        intent = _read_intent(path)
        resumed = intent is not None
        versions: dict[str, int | None] = {}
        if intent is None:
            # again, under the lock: another wb may have written meanwhile
            plan = make_plan(wb, now, share(progress, 1, 1, 2) if pending is None else None)
            if plan.intent is None:
                return _report(wb, None, plan.versions, [])
            intent, versions = plan.intent, plan.versions
            write_workbench_file(wb.paths.wb, INTENT, json.dumps(intent, ensure_ascii=False).encode("utf-8"))
            faults.point("migrate:after_intent")
        outcome = _execute(wb, intent)
    report = _report(wb, intent, versions, intent["files"], resumed=resumed)
    report.commit = outcome.sha
    report.warnings = ([outcome.skipped] if outcome.skipped else []) + outcome.warnings
    return report


def _report(wb: Workbench, intent: dict[str, Any] | None, versions: dict[str, int | None],
            files: list[dict[str, Any]], *, dry_run: bool = False, resumed: bool = False) -> Report:
    events = [{"seq": e["seq"], "type": e["type"]} for e in intent["events"]] if intent else []
    if not versions and intent:
        versions = {f["file"]: f["from"] for f in intent["files"]}
    return Report(str(wb.root), versions, files, events, dry_run=dry_run, resumed=resumed)


def _read_intent(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except ValueError:
        raise Refused(f"{WB_DIR}/{INTENT}: damaged (not JSON). Restore {WB_DIR}/ with git "
                      f"(`git checkout -- {WB_DIR}`), delete the file, and run `wb migrate` again") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != INTENT_VERSION:
        raise Refused(f"{WB_DIR}/{INTENT}: schema_version {compact_json(version)} is not the {INTENT_VERSION} this "
                      "wb writes; "
                      "finish the migration with the wb that started it")
    return data


@contextmanager
def _lock(wb: Workbench) -> Iterator[None]:
    try:
        lock = wb.lock()
    except Refused:  # config.yaml is older than this wb reads: the same lock file, on the default timeout
        from workbench.store.lock import WorkbenchLock

        env = os.environ.get("WB_LOCK_TIMEOUT")
        lock = WorkbenchLock(wb.paths.lock, float(env) if env else float(CONFIG_DEFAULTS["lock_timeout"]))
    with lock:
        yield


def _execute(wb: Workbench, intent: dict[str, Any]) -> CommitOutcome:
    """Carry out an intent; every step first checks whether an interrupted run already did it."""
    p = wb.paths
    events = intent["events"]
    if not _logged(wb, events[-1]):  # the files are written before the events: once logged, they are all there
        for write in intent["writes"]:
            if _file_sha(p.wb / write["path"]) != write["sha256"]:
                write_workbench_file(p.wb, write["path"], write["text"].encode("utf-8"))
            if write["path"] in ("state.md", "board.json"):
                faults.point("migrate:after_" + write["path"].split(".")[0])
        tail = wb.log.tail()
        base = intent["log_base"]
        if (tail.seq, tail.hash) != (base["seq"], base["hash"]):
            raise Refused(f"events.jsonl changed since this migration was planned (seq {tail.seq}, expected "
                          f"{base['seq']}); restore {WB_DIR}/ with git, delete {WB_DIR}/{INTENT}, and run "
                          "`wb migrate` again")
        wb.log.append(events, tail)
        faults.point("migrate:after_event")
        _write_caches(wb, intent["state_cache"])
    warnings = []
    try:  # as `wb init` does; idempotent, so a re-run simply does it again
        register_drivers(wb.root, wb.git.common_dir)
    except GitError as err:
        warnings.append(f"wb's git diff and merge drivers are not registered ({err}); `wb init` registers them")
    outcome = _commit(wb, intent)
    outcome.warnings[:0] = warnings
    remove_workbench_file(p.wb, INTENT)
    return outcome


def _logged(wb: Workbench, event: dict[str, Any]) -> bool:
    try:
        if wb.log.tail().seq < event["seq"]:
            return False
        found = wb.log.read_after(event["seq"] - 1)
    except Refused:  # a log still in its pre-release form
        return False
    return bool(found) and found[0].get("id") == event["id"]


def _file_sha(path: Path) -> str | None:
    try:
        return _sha(path.read_bytes())
    except FileNotFoundError:
        return None


def _write_caches(wb: Workbench, state_cache: dict[str, Any]) -> None:
    """What the next load compares with to tell a human's edit from wb's own write: the one cache writer."""
    p = wb.paths
    caches.write_board_cache(p, p.board.read_bytes())
    caches.write_state_cache(p, p.state.read_bytes(), state_cache["state"], state_cache["body"])


def _commit(wb: Workbench, intent: dict[str, Any]) -> CommitOutcome:
    """The one commit policy, with the git settings the plan read (config.yaml may have been too old to load
    then) and the message it wrote."""
    try:
        secrets = secret_values(wb.reload_config())
    except Refused:  # the gate says why config.yaml is not committed
        secrets = []
    summary = intent["message"].split("\n\n", 1)[0]
    return commit_policy.commit(wb, summary, seq=intent["events"][-1]["seq"], git=intent["git"], secrets=secrets)
