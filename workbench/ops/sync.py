"""`wb sync`: share the workbench through a git remote, with state on its own ref (config `git.ref`).

The state ref (`refs/heads/wb-state`) holds commits whose trees hold only `.workbench/`; each worktree's
`.workbench/` is a checkout of it, made from the commit git/repo.py records as the worktree's *state base*.
A sync, under the workbench lock:

1. fetches the remote's state branch into `refs/remotes/REMOTE/BRANCH` (network outside the lock);
2. takes up what is newer: the remote's commit, the local ref's (another worktree's writes) and the work
   tree's own events, **published first**: the remote's log is kept exactly as it is, the local ref's events
   it lacks are appended after it, then the work tree's (review/merge.py `merge_events(pick=True)`, the rule
   a rebase uses). A published event is never rewritten, so every clone holds the same bytes for it, and the
   log's order is the order of publication: the fold (model/claims.py) decides claims by it;
3. an unpublished task whose id the remote took is renumbered (the rebase rule) and a `task.renumber` event
   records it, so the old id stays findable (`wb task show`);
4. board.json and state.md are replayed from the merged log, the merge committed on the state ref (local
   compare-and-swap), written to the work tree, and pushed fast-forward only: the remote's ref update is the
   compare-and-swap. A push rejected because someone pushed first starts again at 1.

Crash-safety: nothing is written to the work tree before the local ref moved; a worktree whose base is not the
ref's tip commits nothing (git/repo.py) until a sync merges, and a sync always merges the work tree's own log
into the tip, so a kill -9 anywhere leaves a state the next sync converges from. Offline, or refused by the
remote: one line, local state untouched.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench import faults
from workbench.errors import Busy, GitError, NotFound, UsageError
from workbench.store.landing import agent_name  # moved to the store with the landing rule (issue 29)

if TYPE_CHECKING:
    from workbench.store.workbench import Workbench

SNAPSHOTS = ("events.jsonl", "board.json", "state.md", "calls.jsonl")
ATTEMPTS = 20  # pushes lost in a row before wb sync gives up (exit 6: run it again)


@dataclass
class SyncReport:
    remote: str | None
    ref: str
    local: str | None = None  # the state ref's commit after the sync
    remote_commit: str | None = None  # the remote's, after the sync (== local once pushed)
    taken: int = 0  # events taken up from the remote or another worktree
    pushed: bool = False
    merged: bool = False  # a merge commit was made
    attempts: int = 0
    renumbered: dict[str, str] = field(default_factory=dict)
    joined: bool = False  # a fresh worktree took up the existing state branch
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "ref": self.ref, "local": self.local, "remote_commit": self.remote_commit,
                "taken": self.taken, "pushed": self.pushed, "merged": self.merged, "attempts": self.attempts,
                "renumbered": self.renumbered, "joined": self.joined, "warnings": self.warnings,
                "up_to_date": not (self.taken or self.pushed or self.merged or self.joined)}


def state_ref(wb: Workbench) -> tuple[str, str] | None:
    """(full ref, branch name) of config git.ref, or None when state is recorded on the user's branch."""
    name = wb.config["git"].get("ref")
    if not name:
        return None
    ref = name if name.startswith("refs/") else "refs/heads/" + name
    return ref, ref.removeprefix("refs/heads/")


def default_remote(wb: Workbench, branch: str) -> str | None:
    """The upstream of the state branch (branch.B.remote), else `origin`; None when there is no remote."""
    remotes = wb.git.remotes()
    configured = wb.git.config_value(f"branch.{branch}.remote")
    if configured and configured in remotes:
        return configured
    return "origin" if "origin" in remotes else (remotes[0] if len(remotes) == 1 else None)


def tracking_ref(remote: str, branch: str) -> str:
    return f"refs/remotes/{remote}/{branch}"


# -- the sync -------------------------------------------------------------------------------------------
def sync(wb: Workbench, remote: str | None = None, *, push_branch: bool = False) -> SyncReport:
    """Fetch, merge by wb's rules, commit, push; retried while the remote moves first. Idempotent. Runs none
    of the commands it brings: a line among the warnings says how many wait for `wb trust` (issue 19)."""
    from workbench.ops import trust

    before = trust.digests(wb)
    report = _sync(wb, remote, push_branch=push_branch)
    _observe_leases(wb)
    notice = trust.sync_notice(wb, before)
    if notice:
        report.warnings.append(notice)
    return report


def _observe_leases(wb: Workbench) -> None:
    """The leases this sync brought are seen now (store/leases.py): each is judged from this moment, on this
    clone's clock, whatever its claimer's clock stamped."""
    from workbench.errors import WorkbenchError
    from workbench.model import ids
    from workbench.store.leases import first_seen

    try:
        first_seen(wb.git.git_dir, wb.load(detect_human=False, need_body=False).docs.board, ids.utc_now())
    except (WorkbenchError, OSError):
        pass  # the next look at the claims sees them instead


def _sync(wb: Workbench, remote: str | None = None, *, push_branch: bool = False) -> SyncReport:
    found = state_ref(wb)
    if found is None:
        return _branch_sync(wb, remote, push_branch)
    ref, branch = found
    named = remote
    remote = remote or default_remote(wb, branch)
    if named is not None and named not in wb.git.remotes():
        raise NotFound(f"no git remote {named!r} (see `git remote -v`)")
    report = SyncReport(remote, ref)
    commit_worktree(wb)
    if remote is None:  # no remote: the worktrees of this clone, through the shared ref
        report.warnings.append("no git remote: merged this clone's worktrees only (`git remote add origin URL` "
                               "to share with other clones)")
        with wb.lock():
            report.local = integrate(wb, ref, None, report)
        return report
    for attempt in range(1, ATTEMPTS + 1):
        report.attempts = attempt
        fetched = wb.git.fetch_branch(remote, branch, tracking_ref(remote, branch))
        with wb.lock():
            local = integrate(wb, ref, fetched, report, write=False)
        report.local = local
        report.remote_commit = fetched
        if local is None or local == fetched or (fetched is not None and wb.git.is_ancestor(local, fetched)):
            return _settle(wb, ref, report)  # nothing of ours the remote lacks
        if wb.git.push_branch(remote, local, branch) is None:
            wb.git.update_ref(tracking_ref(remote, branch), local, fetched)
            report.pushed, report.remote_commit = True, local
            return _settle(wb, ref, report)
        # someone pushed first: fetch and merge again, after a pause that grows (the busier the remote, the
        # more the racers spread out)
        time.sleep(random.uniform(0, 0.05 * 2 ** min(attempt, 5)))
    raise Busy(f"{remote} kept moving while wb sync merged ({ATTEMPTS} attempts); run `wb sync` again")


def _settle(wb: Workbench, ref: str, report: SyncReport) -> SyncReport:
    """Write the state ref's commit into the work tree, once the push is done (or was not needed)."""
    taken = report.taken
    with wb.lock():
        report.local = integrate(wb, ref, None, report)
    report.taken = max(taken, report.taken)
    return report


def commit_worktree(wb: Workbench) -> None:
    """Events the pending journal holds, and files not yet committed, committed as any write commits them (a
    commit refused because the ref moved is merged by `integrate`)."""
    found = state_ref(wb)
    if found is not None:
        with wb.lock():
            if interrupted(wb):
                return
    with wb.transaction(actor="wb"):
        pass  # adopts the pending journal's events the work tree lacks
    wb.checkpoint("wb: commit pending workbench changes")


def interrupted(wb: Workbench) -> bool:
    """Whether a sync was killed while it wrote a state commit into the work tree (the snapshots may then
    disagree with the log, so nothing loads them: `integrate` merges the work tree's log and the pending journal
    into the ref's tip as they are, renumbering any task written since)."""
    return wb.git.state_writing_marker.exists()


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
    _materialize(wb, files)
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


def _materialize(wb: Workbench, files: dict[str, tuple[str, bytes]]) -> None:
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


# -- wb status ------------------------------------------------------------------------------------------------
def sync_status(wb: Workbench, board: dict[str, Any]) -> dict[str, Any] | None:
    """For `wb status` with state on its own ref: how far the local state ref is ahead of / behind the last
    fetched remote state (no network: the tracking ref as the last sync or fetch left it), and the claims
    held now. None with state on the user's branch."""
    from workbench.model import ids
    from workbench.model.claims import holder

    found = state_ref(wb)
    if found is None:
        return None
    ref, branch = found
    from workbench.store.leases import first_seen

    now = ids.utc_now()
    seen = first_seen(wb.git.git_dir, board, now)  # leases judged from when this clone first saw them
    claims = [{"id": t["id"], **held} for t in board["tasks"] for held in [holder(t, now, seen.get(t["id"]))]
              if held]
    out: dict[str, Any] = {"ref": ref, "remote": None, "ahead": None, "behind": None, "claims": claims,
                           "interrupted": interrupted(wb)}
    remotes_dir = wb.git.common_dir / "refs" / "remotes"
    packed = wb.git.common_dir / "packed-refs"
    candidates = sorted(d.name for d in remotes_dir.iterdir() if (d / branch).exists()) if remotes_dir.is_dir() else []
    if not candidates and packed.exists():
        text = packed.read_text(errors="replace")
        candidates = sorted({line.split()[1].split("/")[2] for line in text.splitlines()
                             if line.endswith(f"/{branch}") and " refs/remotes/" in line})
    if not candidates:
        return out
    remote = "origin" if "origin" in candidates else candidates[0]
    local, tracking = wb.git.ref_sha(ref), wb.git.read_ref(tracking_ref(remote, branch))
    out["remote"] = remote
    if local and tracking:
        out["ahead"], out["behind"] = wb.git.count_apart(local, tracking)
    return out


# -- ids a sync renumbered ---------------------------------------------------------------------------------
def resolve_renumbered(wb: Workbench, board: dict[str, Any], task_id: str, task: dict[str, Any] | None
                       ) -> tuple[dict[str, Any] | None, str | None]:
    """`wb task show OLD` after a sync renumbered OLD: the task it became when OLD is not on the board or was
    this worktree's (the task.renumber event names the worktree whose unpublished task moved), with
    `renumbered_from`; else the board's OLD with a `renumbered` line naming where the other agent's OLD went.
    (task, new id or None)."""
    on_branch = state_ref(wb) is None  # a pending event landed on the user's branch (store/landing.py): the
    # branch's own OLD kept its id, so OLD is the board's task when it has one
    if on_branch and (getattr(wb, "storage", None) is not None or not _records_renumbers(wb)):
        return task, None
    records = [e["payload"] for _line, e in wb.log.iter_all()
               if e.get("type") == "task.renumber" and e["payload"].get("from") == task_id]
    if not records:
        return task, None
    from workbench.model import reducer

    last = records[-1]
    moved = reducer.find_task(board, str(last.get("to")))
    if moved is not None and (task is None or (not on_branch and last.get("worktree") == wb.git.worktree_id())):
        return {**moved, "renumbered_from": task_id}, str(last["to"])
    if task is not None:
        return {**task, "renumbered": f"{task_id} of {last.get('agent')} is now {last.get('to')}"}, None
    return task, None


def _records_renumbers(wb: Workbench) -> bool:
    """Whether the log holds a task.renumber at all: a search of its bytes, so `wb task show` on a long log
    parses it only when one does."""
    needle = b'"type":"task.renumber"'
    paths = [wb.paths.events, *(sorted(wb.log.log_dir.iterdir()) if wb.log.log_dir.is_dir() else [])]
    for path in paths:
        try:
            if needle in path.read_bytes():
                return True
        except OSError:
            continue
    return False


# -- joining, and state on the user's branch ---------------------------------------------------------------
def join(wb: Workbench, ref_name: str, remote: str | None = None) -> bool:
    """A worktree without `.workbench/` takes up the existing state branch — the local one (another worktree of
    this clone) or the remote's — instead of starting an empty one. False when neither exists."""
    ref = ref_name if ref_name.startswith("refs/") else "refs/heads/" + ref_name
    branch = ref.removeprefix("refs/heads/")
    wb.git.refuse_checked_out(ref)  # before anything is fetched or written
    found = wb.git.ref_sha(ref)
    if found is None:
        remotes = wb.git.remotes()
        remote = remote or (wb.git.config_value(f"branch.{branch}.remote") or
                            ("origin" if "origin" in remotes else (remotes[0] if remotes else None)))
        if remote is None or remote not in remotes:
            return False
        fetched = wb.git.fetch_branch(remote, branch, tracking_ref(remote, branch))
        if fetched is None:
            return False
        found = fetched if wb.git.update_ref(ref, fetched, None) else wb.git.ref_sha(ref)
    assert found is not None
    files = wb.git.workbench_files_at(found)
    if "events.jsonl" not in files:
        raise UsageError(f"{ref} exists but holds no workbench; pick another branch for --ref")
    wb.paths.wb.mkdir(exist_ok=True)
    with wb.lock():
        _materialize(wb, files)
        wb.git.set_state_base(ref, found)
    return True


def move_to_ref(wb: Workbench, ref_name: str) -> list[str] | None:
    """`wb init --ref BRANCH` on a workbench recorded on the user's branch: config git.ref set, .gitignore made
    `*`, and the whole workbench committed as the first commit of BRANCH. The user's branch and index are not
    touched: the warning says how to stop the branch tracking .workbench/. None when there was nothing to move
    (no workbench, or state already on a ref)."""
    import re

    from workbench.model.layout import GITIGNORE_REF
    from workbench.store.atomic import write_workbench_file
    from workbench.store.config import parse_config

    if not wb.paths.config.exists() or wb.config["git"].get("ref"):
        return None
    ref = ref_name if ref_name.startswith("refs/") else "refs/heads/" + ref_name
    branch = ref.removeprefix("refs/heads/")
    wb.git.refuse_checked_out(ref)
    if wb.git.ref_sha(ref) is not None:
        raise UsageError(f"{branch} already exists: state can move only to a new branch (or, in a fresh clone or "
                         "worktree without .workbench/, `wb init --ref` takes it up)")
    with wb.lock():
        text = wb.paths.config.read_text(encoding="utf-8")
        moved, n = re.subn(r"(?m)^(\s+)ref:\s*(null|~)?\s*(#.*)?$", lambda m: f"{m.group(1)}ref: {branch}"
                           + (f"  {m.group(3)}" if m.group(3) else ""), text, count=1)
        if n == 0:
            moved, n = re.subn(r"(?m)^git:\s*\n", f"git:\n  ref: {branch}\n", text, count=1)
        if n == 0:
            moved = text.rstrip("\n") + f"\ngit:\n  ref: {branch}\n"
        if parse_config(moved.encode())["git"].get("ref") != branch:
            raise UsageError(f"could not set git.ref in .workbench/config.yaml: set `git: {{ref: {branch}}}` "
                             "by hand, then run `wb init` again")
        write_workbench_file(wb.paths.wb, "config.yaml", moved.encode())
        write_workbench_file(wb.paths.wb, ".gitignore", GITIGNORE_REF.encode())
        from workbench.store import configedit

        configedit.remember(wb)  # wb's own write of config.yaml: no config.edit
    wb.reload_config()
    outcome = wb.checkpoint(f"wb: state moves to {branch}")
    warnings = [outcome.skipped] if outcome.skipped else []
    return warnings + [f"state is now recorded on {branch}; your branch still tracks .workbench/ as it was: "
                       f"`git rm -r -q --cached .workbench && git commit -m 'wb: state moved to {branch}'` stops "
                       "that (wb does not touch your branch)"]


def _branch_sync(wb: Workbench, remote: str | None, push_branch: bool) -> SyncReport:
    """State recorded on the user's branch: sync would push their commits. Only when asked (--push-branch):
    a fast-forward push of the branch, nothing merged."""
    branch = wb.git.symbolic_head()
    if branch is None:
        raise UsageError("HEAD is detached and state is recorded on the checked-out branch: nothing to sync")
    short = branch.removeprefix("refs/heads/")
    if not push_branch:
        raise UsageError(f"state is recorded on your branch {short}, which carries your own commits: `wb sync` "
                         "pushes only a state ref. Move state to its own ref with `wb init --ref wb-state`, or "
                         f"pass --push-branch to push {short} as it is")
    remote = remote or wb.git.config_value(f"branch.{short}.remote") or "origin"
    report = SyncReport(remote, branch)
    sha = wb.git.read_ref(branch)
    if sha is None:
        return report
    why = wb.git.push_branch(remote, sha, short)
    if why is not None:
        raise GitError(f"{remote} has commits on {short} that you do not: `git pull` first, then `wb sync "
                       "--push-branch`")
    report.pushed, report.local, report.remote_commit = True, sha, sha
    return report
