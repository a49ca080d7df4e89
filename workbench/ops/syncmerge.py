"""A sync's merge (ops/sync.py's steps 2–4): the remote's state commit, the local state ref and the work tree's
own events merged into one state commit — published events first, kept as they are; an unpublished task whose
id the remote took renumbered —, the snapshots replayed from the merged log, the commit made on the state ref
(a local compare-and-swap) and written into the work tree (`materialize`)."""

from __future__ import annotations

import os

from workbench import faults
from workbench.errors import Busy
from workbench.ops.syncrefs import ATTEMPTS, SNAPSHOTS, SyncReport, interrupted
from workbench.store.landing import agent_name  # moved to the store with the landing rule (issue 29)

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from workbench.store.workbench import Workbench


def integrate(wb: Workbench, ref: str, remote_commit: str | None, report: SyncReport | None = None,
              *, attempts: int = ATTEMPTS, write: bool = True) -> str | None:
    """Under the workbench lock: merge `remote_commit` (or None), the local state ref and the work tree into
    one state commit on `ref`, write it to the work tree and record it as this worktree's base. Returns the
    local ref's commit (None when there is no state at all). `write=False` leaves the work tree for after the
    push (the next `integrate` takes it up): the time between a fetch and its push stays short, so a sync
    that lost a race to a busy remote wins the next one."""
    report = report or SyncReport(None, ref)
    for _ in range(attempts):
        local = wb.git.ref_sha(ref)
        base = wb.git.state_base(ref)
        if local is not None and base in (local, None) and not wb.pending and not interrupted(wb) and (
                remote_commit is None or wb.git.is_ancestor(remote_commit, local)):
            if base is None:
                wb.git.set_state_base(ref, local)
            return local  # the work tree is the ref's tip, and the remote has nothing we lack
        moved = _merge_once(wb, ref, local, base, remote_commit, report, write)
        if moved:
            return wb.git.ref_sha(ref)
    raise Busy(f"{ref} kept moving while wb sync merged (other worktrees writing); run `wb sync` again")


def _merge_once(wb: Workbench, ref: str, local: str | None, base: str | None, remote: str | None,
                report: SyncReport, write: bool = True) -> bool:
    """One merge attempt; False when the local ref moved meanwhile (the caller reads it again)."""
    git = wb.git
    if remote is not None and local is not None and git.is_ancestor(remote, local):
        remote = None  # the remote has nothing the local ref lacks
    target_commit: str | None
    parents: list[str]
    if remote is None:
        target_commit, parents = local, [local] if local else []
    elif local is None or git.is_ancestor(local, remote):
        target_commit, parents = remote, [remote]
    else:
        target_commit, parents = None, [remote, local]  # diverged: the remote first, then our line
    # the two lines' common ancestor: what each side changed since is theirs to keep (config.yaml edited on
    # one clone survives a merge with the other; the worktree's `base` is for the work tree's own edits)
    fork = git.merge_base(remote, local) if target_commit is None and remote and local else None
    files_at = {sha: _files_at(wb, sha) for sha in {local, remote, base, fork} if sha}
    wt_files = _worktree_files(wb)
    wt_events = _worktree_events(wb)
    renames: dict[str, str] = {}
    if target_commit is not None:
        target_files = files_at[target_commit]
        target_events = _events(target_files)
    elif remote is None or local is None:  # no state committed anywhere yet: the work tree's is the first
        target_files, target_events = {}, []
    else:
        target_events, renames = _combine(_events(files_at[remote]), _events(files_at[local]))
        target_files = _other_files(files_at[remote], files_at[local], files_at.get(fork or base or ""))
        target_files = _sealed({**target_files, **_snapshot_files(wb, target_events, files_at[remote],
                                                                   files_at[local])}, target_events)
    known = {e["id"] for e in target_events}
    extra = [e for e in wt_events if e["id"] not in known]
    if extra:
        final, more = _combine(target_events, wt_events)
        renames.update(more)
        if renames:
            final = _with_renumbers(final, renames, git.worktree_id())
    elif renames:
        final = _with_renumbers(target_events, renames, git.worktree_id())
    else:
        final = target_events
    others = _other_files(target_files, wt_files, files_at.get(base or ""))
    if target_commit is not None and final is target_events and \
            others == {k: v for k, v in target_files.items() if k not in SNAPSHOTS}:
        new, files = target_commit, target_files  # a fast-forward (or nothing): the commit as it is
    else:
        files = _sealed({**others, **_snapshot_files(wb, final, target_files, wt_files)}, final)
        parents = [p for p in parents if p]
        summary = "wb: sync: merge " + (f"{report.remote} " if report.remote else "") + "state"
        if target_commit is not None and remote is None:
            summary = "wb: sync: commit this worktree's state"
        new = git.state_commit(files, parents, f"{summary}\n\nWb-Event: {final[-1]['seq'] if final else 0}\n")
        report.merged = True
    before = {e["id"] for e in wt_events}
    report.taken = sum(1 for e in final if e["id"] not in before)  # against the work tree, as it still is
    report.renumbered.update(renames)
    if new != local:
        faults.point("sync_before_ref")
        if not git.update_ref(ref, new, local):
            return False
        faults.point("sync_after_ref")
    if not write:
        return True
    git.begin_state_write(new)
    materialize(wb, files)
    git.set_state_base(ref, new)
    ids = {e["id"] for e in final}
    if wb.pending and all(e["id"] in ids for e in wb.pending.read()[0]):
        wb.pending.clear()
    return True


_FILES: dict[str, dict[str, tuple[str, bytes]]] = {}  # a commit's files never change: kept between attempts


def _files_at(wb: Workbench, sha: str) -> dict[str, tuple[str, bytes]]:
    """A state commit's .workbench/ files, read once per process (a retried sync reads only what is new)."""
    key = f"{wb.git.common_dir}:{sha}"
    if key not in _FILES:
        if len(_FILES) > 16:
            _FILES.pop(next(iter(_FILES)))
        _FILES[key] = wb.git.workbench_files_at(sha)
    return _FILES[key]


def _combine(first: list[dict[str, Any]], second: list[dict[str, Any]]
             ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """`first` kept exactly, the events of `second` it lacks appended (a task id `first` took renumbered): the
    one landing rule (store/landing.py), which the pending journal's events land by too."""
    from workbench.store.landing import land

    return land(first, second)


def _with_renumbers(events: list[dict[str, Any]], renames: dict[str, str], worktree: str
                    ) -> list[dict[str, Any]]:
    from workbench.store.landing import with_renumbers

    return with_renumbers(events, renames, agent_name(), worktree)


def _events(files: dict[str, tuple[str, bytes]]) -> list[dict[str, Any]]:
    """A state commit's whole log: its sealed segments (log/), then its events.jsonl."""
    from workbench.model.segments import LOG_DIR, WholeLog, is_segment_name

    segments = sorted((rel[len(LOG_DIR) + 1:], raw) for rel, (_mode, raw) in files.items()
                      if rel.startswith(LOG_DIR + "/") and is_segment_name(rel[len(LOG_DIR) + 1:]))
    return WholeLog(segments, files.get("events.jsonl", ("", b""))[1]).events


def _sealed(files: dict[str, tuple[str, bytes]], events: list[dict[str, Any]]) -> dict[str, tuple[str, bytes]]:
    """`files` with events.jsonl holding only the merged events after the sealed segments that hold the
    merged log's first events byte for byte; a segment that does not (sealed differently on the other side) is
    left out: its events are in events.jsonl, and the next write seals them again."""
    from workbench.errors import Refused
    from workbench.model.jsonl import encode, line_hash
    from workbench.model.segments import LOG_DIR, header_of, is_segment_name

    out = dict(files)
    through, prev = 0, None
    for rel in sorted(k for k in files if k.startswith(LOG_DIR + "/")):
        name = rel[len(LOG_DIR) + 1:]
        keep = False
        if is_segment_name(name):
            try:
                h = header_of(files[rel][1], name)
            except Refused:
                h = None
            keep = h is not None and h.first == through + 1 and h.prev_hash == prev and h.last <= len(events) \
                and line_hash(encode(events[h.last - 1])) == h.last_hash
            if keep and h is not None:
                through, prev = h.last, h.last_hash
        if not keep:
            del out[rel]
    mode = files.get("events.jsonl", ("100644", b""))[0]
    out["events.jsonl"] = (mode, b"".join(encode(e) + b"\n" for e in events[through:]))
    return out


def _worktree_files(wb: Workbench) -> dict[str, tuple[str, bytes]]:
    from workbench.git.repo import IGNORED_NAMES

    out: dict[str, tuple[str, bytes]] = {}
    top = wb.paths.wb
    if not top.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in IGNORED_NAMES and not d.startswith(".tmp-")]
        for name in filenames:
            full = os.path.join(dirpath, name)
            if name in IGNORED_NAMES or name.startswith(".tmp-") or os.path.islink(full):
                continue
            rel = os.path.relpath(full, top).replace(os.sep, "/")
            with open(full, "rb") as fh:
                out[rel] = ("100755" if os.access(full, os.X_OK) else "100644", fh.read())
    return out


def _worktree_events(wb: Workbench) -> list[dict[str, Any]]:
    """The work tree's log, and the pending journal's events it lacks (acknowledged, not yet written)."""
    events = [e for _line, e in wb.log.iter_all()] if wb.paths.events.exists() else []
    if wb.pending:
        have = {e["id"] for e in events}
        events += [e for e in wb.pending.read()[0] if e["id"] not in have]
    return events


def _other_files(target: dict[str, tuple[str, bytes]], mine: dict[str, tuple[str, bytes]],
                 base: dict[str, tuple[str, bytes]] | None) -> dict[str, tuple[str, bytes]]:
    """The files besides the snapshots and logs (config.yaml, .gitignore, artifacts/…): the target's, and
    ours where we changed them since our base."""
    base = base or {}
    out = {k: v for k, v in target.items() if k not in SNAPSHOTS}
    for rel, value in mine.items():
        if rel in SNAPSHOTS:
            continue
        if rel not in out or (base.get(rel) != value and value != out[rel] and rel in base):
            out[rel] = value
    return out


def _snapshot_files(wb: Workbench, events: list[dict[str, Any]], target: dict[str, tuple[str, bytes]],
                    mine: dict[str, tuple[str, bytes]]) -> dict[str, tuple[str, bytes]]:
    """events.jsonl, and board.json and state.md replayed from it; calls.jsonl as the union of both sides'."""
    from workbench.model import schemas, statefile
    from workbench.model.boardfile import encode_board
    from workbench.model.jsonl import encode, split_lines
    from workbench.review.merge import replay

    docs = replay(events)  # Refused (exit 5) when the remote's log cannot be replayed: nothing is committed
    for event in events[-64:]:
        schemas.check("event", event, f"events.jsonl (merged, seq {event['seq']})")
    schemas.check("board", docs.board, "board.json (merged)")
    schemas.check("state", docs.state, "state.md (merged)")
    node = None
    raw_state = mine.get("state.md", target.get("state.md", ("", b"")))[1]
    if raw_state.strip():
        try:
            node = statefile.parse(raw_state).node
        except Exception:  # noqa: BLE001 - a broken hand edit: render plainly, the log is the truth
            node = None
    calls = split_lines(target.get("calls.jsonl", ("", b""))[1])[0]
    seen = set(calls)
    calls += [line for line in split_lines(mine.get("calls.jsonl", ("", b""))[1])[0] if line not in seen]
    mode = "100644"
    return {"events.jsonl": (mode, b"".join(encode(e) + b"\n" for e in events)),
            "board.json": (mode, encode_board(docs.board)),
            "state.md": (mode, statefile.render(node, docs.state, docs.body)),
            "calls.jsonl": (mode, b"".join(line + b"\n" for line in calls))}


def materialize(wb: Workbench, files: dict[str, tuple[str, bytes]]) -> None:
    """Write a state commit's files into the work tree (each atomically; the log first, so a crash half-way
    leaves a log the next sync merges from), then wb's caches, so the next load sees wb's own files."""
    from workbench.model import statefile
    from workbench.store import caches
    from workbench.store.atomic import write_workbench_file

    p = wb.paths
    p.wb.mkdir(exist_ok=True)
    order = ["events.jsonl", "calls.jsonl"] + sorted(k for k in files if k not in SNAPSHOTS) + ["board.json",
                                                                                                "state.md"]
    for rel in order:
        if rel not in files:
            continue
        target = p.wb / rel
        data = files[rel][1]
        try:
            if target.read_bytes() == data:
                continue
        except OSError:
            pass
        write_workbench_file(p.wb, rel, data)
        faults.point("sync_mid_write")
    if "board.json" in files:
        caches.write_board_cache(p, files["board.json"][1])
    if "state.md" in files:
        parsed = statefile.parse(files["state.md"][1])
        caches.write_state_cache(p, files["state.md"][1], parsed.data, parsed.body)
    wb.reload_config()
