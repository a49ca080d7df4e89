"""`wb doctor`: find what needs repair after a crash or a hand edit, and with --fix repair what can be.

Repairs: a torn tail of events.jsonl or calls.jsonl (an interrupted append, never acknowledged) is cut off;
snapshots behind the log are caught up by replaying the events after them; a hand edit of a snapshot (one that
differs from what the log folds to, whoever committed it) is recorded as `human.edit`, never reverted;
uncommitted workbench changes are committed; leftover temp files are removed. Each repair writes through the
store (the transaction, the store's write functions under the lock, the one commit policy, whose gate never
commits a file that fails validation). The lock is a kernel flock, released when its holder dies: it cannot go
stale, and a lock held by a live process is reported, not broken. A broken hash chain is reported with the first bad
seq and never "fixed": the log is the audit trail, and rewriting it would hide what happened.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.errors import WorkbenchError
from workbench.progress import Progress, advance, share, tick
from workbench.store.atomic import remove_temp_files, torn_line_bytes, truncate_torn_line
from workbench.store.commit import commits
from workbench.store.lock import holder
from workbench.store.workbench import Workbench

if TYPE_CHECKING:
    from workbench.store.workbench import Loaded


@dataclass
class Finding:
    code: str
    message: str
    fixable: bool
    fixed: bool = False
    # work the next wb write does by itself (snapshots behind the log, files not yet committed, writes waiting in
    # the git directory): reported, and `--fix` does it now, but no health problem — `wb doctor` healthy means
    # the next write succeeds (the dry write says when it would not), as `wb validate` says (issue 29)
    waits: bool = False
    # clutter that never stops a write (the temp file of a write a crash cut short): reported, `--fix` removes it,
    # no health problem either
    harmless: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "fixable": self.fixable, "fixed": self.fixed,
                "waits": self.waits, "harmless": self.harmless}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return all(f.fixed or f.waits or f.harmless for f in self.findings)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _last_seq(wb: Workbench) -> int:
    """The log's last seq for the progress bar; 0 when the log cannot be read (the checks below say why)."""
    try:
        return wb.log.tail().seq
    except WorkbenchError:
        return 0


def tree_cache_finding(wb: Workbench, fix: bool) -> Finding | None:
    """`.workbench/.cache/` in the work tree: wb keeps its caches in the git directory and never reads this one
    (a commit or an agent can put anything there). `fix` removes it when it is a plain folder inside the tree
    (its links are removed, never followed); anything else is left to a person."""
    from workbench.store.atomic import remove_workbench_dir

    path = wb.paths.tree_cache
    if not os.path.lexists(path):
        return None
    plain = path.is_dir() and not path.is_symlink() and not wb.paths.wb.is_symlink()
    finding = Finding("tree_cache", ".workbench/.cache is not wb's: wb keeps its caches in the git directory and "
                                    "never reads this one" + ("" if plain else " (not a plain folder: remove it "
                                                                                "by hand)"), plain)
    if fix and plain:
        with wb.lock():
            remove_workbench_dir(wb.paths.wb, ".cache")
        finding.fixed = True
    return finding


def examine(wb: Workbench, fix: bool = False, progress: Progress | None = None, *, full: bool = False) -> Report:
    """What needs repair, repaired with `fix`. The log is read twice (its chain, then its schemas):
    `progress(done, total)` counts both passes, every 5,000 events (total = twice the last seq). Sealed
    segments checked before on this machine are trusted by digest; `full` checks them all again."""
    report = Report()
    p = wb.paths
    add = report.findings.append

    # 0. a line too long for any reader (issue 30): the one command that helps moves it aside
    if overlong_finding(wb, fix, add) and not fix:
        return report  # every later check reads the log, and stops at that line

    # 0b. a work tree the user's git left behind the last commit (its log that commit's first lines): --fix brings
    # the committed files back, keeping the work tree's aside
    behind_finding(wb, fix, add)

    # 1. the event log: chain (sealed segments checked once, then trusted by digest; `full`: all), then a torn tail
    from workbench.store.logcheck import SealedCheck

    chain_ok = True
    seqs = _last_seq(wb) if progress else 0
    first = share(progress, 0, 1, 2)
    check = SealedCheck(wb.log, p, full=full)
    try:
        if not check.run(lambda h: advance(first, h.first - 1, h.last, seqs)):
            raise WorkbenchError(check.problems[0] + (f" (and {len(check.problems) - 1} more)"
                                                      if len(check.problems) > 1 else ""))
        start = check.res.chain[-1].last if check.res.chain else 0
        for n, _ in enumerate(wb.log.iter_unsealed(check.res), start=start):
            tick(first, n, seqs)
    except WorkbenchError as err:
        chain_ok = False
        said = str(err).replace("; run `wb doctor`", "")
        add(Finding("log_damaged", f"{said} — not repaired: the log is the audit trail; restore it from git "
                                   "(`git log -p -- .workbench/events.jsonl .workbench/log/`) or keep it for "
                                   "inspection", False))
    if chain_ok:
        segment_findings(wb, check, fix, add)
    tail = wb.log.tail() if chain_ok else None  # a damaged line stops the tail's reader as it stopped the chain's
    if tail is not None and tail.torn:
        finding = Finding("torn_tail", f"events.jsonl ends with {tail.torn} bytes of an interrupted write "
                                       "(never acknowledged)", True)
        if fix:
            with wb.lock():  # an append in flight would otherwise look torn
                wb.log.truncate_torn()
            finding.fixed = True
        add(finding)
    torn_calls = torn_line_bytes(p.calls)
    if torn_calls:
        finding = Finding("torn_calls", f"calls.jsonl ends with {torn_calls} bytes of an interrupted write "
                                        "(never acknowledged)", True)
        if fix:
            with wb.lock():
                truncate_torn_line(p.calls)
            finding.fixed = True
        add(finding)

    # 2. an interrupted migration
    if (p.wb / ".migrate.json").exists():
        add(Finding("migration_interrupted", "a `wb migrate` was interrupted: run `wb migrate` to finish it", False))

    # 3. snapshots behind the log
    if chain_ok:
        try:
            loaded = wb.load(detect_human=False)
        except WorkbenchError as err:
            loaded = None
            gone = [f.name for f in (p.state, p.board) if not f.exists()]
            if gone and p.events.exists():  # a `git rm` committed, a checkout: the log holds all of them
                finding = Finding("snapshot_missing", f"{', '.join(gone)} missing (the event log rebuilds it)", True)
                if fix:
                    with wb.transaction(actor="wb", create=True):
                        pass  # a create transaction writes the missing snapshots folded from the whole log
                    finding.fixed = True
                    loaded = wb.load(detect_human=False)
                add(finding)
            elif "is beyond the event log's last seq" in str(err) and p.events.exists():
                loaded = _snapshots_ahead(wb, str(err), fix, add)
            elif "over the cap of" in str(err) and str(err).startswith(("board.json:", "state.md:")):
                loaded = _snapshots_ahead(wb, str(err), fix, add, code="snapshot_overlong")
            else:
                add(Finding("unloadable", str(err), False))
        if loaded is not None and not loaded.replayed:
            try:  # a hand edit not yet recorded (committed with plain git, or not): recorded, never reverted
                edited = [e["file"] for e in wb.load().human_edits]
            except WorkbenchError:
                edited = []
            if edited:
                # what the next write does by itself (the dry write below says when it would refuse the edit)
                finding = Finding("hand_edit", f"{', '.join(sorted(set(edited)))} edited by hand, not yet recorded "
                                               "(the next wb write records it)", True, waits=True)
                if fix:
                    with wb.transaction(actor="wb"):
                        pass  # the transaction records the edit as human.edit (agent.edit during a turn)
                    finding.fixed = True
                add(finding)
        if loaded is not None and loaded.replayed:
            finding = Finding("snapshots_behind", f"state.md/board.json miss the last {loaded.replayed} event(s) "
                                                  "of the log (a crash after the append)", True, waits=True)
            if fix:
                with wb.transaction(actor="wb"):
                    pass  # an empty transaction writes the caught-up snapshots
                finding.fixed = True
            add(finding)

    # 4. schema problems
    from workbench.ops.validate import DISAGREE, validate_workbench

    disagree = []
    for problem in validate_workbench(wb, share(progress, 1, 1, 2), full=full):
        if DISAGREE in problem:
            disagree.append(problem.replace(f" ({DISAGREE})", ""))
            continue
        if "torn last line" in problem and any(f.code == "torn_tail" for f in report.findings):
            continue
        if "is beyond the log's last seq" in problem and any(f.code == "snapshot_ahead" for f in report.findings):
            continue  # reported above, and --fix rebuilds it
        if torn_calls and not fix and problem.startswith("calls.jsonl:") and "damaged line" in problem:
            continue  # the torn line, reported above
        if "hash chain" in problem or ("seq" in problem or problem.startswith("log/")) and not chain_ok:
            continue  # the damaged log, reported above
        if any(f.code in ("unloadable", "snapshot_overlong") and f.message.startswith(problem.split(" (restore")[0])
               for f in report.findings):
            continue  # the file that does not load, reported above in the same words
        add(Finding("invalid", problem + " (fix the file by hand, or restore it with git)", False))

    if disagree:  # a snapshot the log does not fold to (a cherry-pick, a hand edit wb's cache was made to hide)
        finding = Finding("snapshots_disagree", f"state.md/board.json disagree with the event log: {disagree[0]}"
                          + (f" (and {len(disagree) - 1} more)" if len(disagree) > 1 else ""), True)
        if fix:
            from workbench.ops.replay import replay

            rebuilt = replay(wb).docs
            if rebuilt is not None:
                record_disagreement(wb, rebuilt)
                finding.fixed = True
        add(finding)

    # 5. leftover temp files
    temps = [path for path in p.wb.rglob(".tmp-*") if path.is_file()]
    if temps:
        finding = Finding("temp_files", f"{len(temps)} leftover temp file(s) of interrupted atomic writes", True,
                          harmless=True)  # wb never reads one: the next write succeeds beside it
        if fix:
            with wb.lock():  # under the lock, no atomic write is in flight: every temp file is a leftover
                remove_temp_files(p.wb)
            finding.fixed = True
        add(finding)

    # 5b. a .workbench/.cache/ in the work tree (an older wb's, a clone's, an agent's): never read
    tree_cache = tree_cache_finding(wb, fix)
    if tree_cache is not None:
        add(tree_cache)

    # 6. the lock: flock dies with its holder, so a lock is never stale; one held long is worth a word
    hint = holder(p.lock)
    if hint is not None:
        alive = hint.isdigit() and _pid_alive(int(hint))
        add(Finding("lock_held", f"another wb process{f' (pid {hint})' if alive else ''} holds the lock now; "
                                 "if it hangs, stop it — its lock goes with it", False))

    # 7. git's diff and merge drivers (a removed virtual environment, a clone, an older wb's registration)
    from workbench.store import drivers

    problems = drivers.drivers_problems(wb.root, wb.git.common_dir)
    if problems:
        finding = Finding("drivers", "git's wb diff/merge drivers cannot run: " + "; ".join(problems), True)
        if fix:
            with wb.lock():
                drivers.register_drivers(wb.root, wb.git.common_dir)
            finding.fixed = not drivers.drivers_problems(wb.root, wb.git.common_dir)
        add(finding)

    # 8. wb's last commit is complete: `git gc --prune=now` beside a writer can prune objects it names
    if commits(wb.config["git"]):
        git_ref = wb.config["git"].get("ref")
        ref = (git_ref if git_ref.startswith("refs/") else "refs/heads/" + git_ref) if git_ref else "HEAD"
        missing = wb.git.missing_objects(ref)
        if missing:
            finding = Finding("incomplete_commit", f"wb's last commit on {ref} names {len(missing)} object(s) git "
                                                   "no longer has (pruned by a `git gc --prune=now` beside wb?)",
                              True)
            if fix:
                still = wb.git.restore_objects(ref)
                finding.fixed = not still
                if still:
                    finding.message += (f" — {len(still)} could not be rebuilt from the files: the next wb "
                                        "commit is complete again, the damaged one stays in history")
            add(finding)

    # 8b. wb's last commit, taken back from the branch by the user's git a moment after it was made (a stash
    # or merge --abort that had read HEAD before it): its events are in the git directory (store/pending.py)
    lost, _calls = wb.pending.taken_back(wb.log, wb.git)
    if lost:
        finding = Finding("taken_back", f"{len(lost)} acknowledged event(s) of wb's last commit are on no branch: "
                                        "the user's git moved the branch back over that commit", True)
        if fix:
            with wb.transaction(actor="human") as tx:  # writes them again, and commits them
                finding.fixed = tx.revived > 0
        add(finding)

    # 8c. acknowledged writes in the git directory alone (issue 29), and the write's own checks run dry
    # else: what refuses is named above (a snapshot ahead of the log too, until --fix rebuilds it)
    rebuilt_first = ("snapshot_ahead", "snapshot_overlong")
    if chain_ok and all(f.fixed or f.fixable and f.code not in rebuilt_first for f in report.findings):
        write_findings(wb, fix, add)

    add_agent_wiring_finding(wb, add)

    # 9. uncommitted workbench changes (last: the repairs above may have written files)
    if commits(wb.config["git"]) and not wb.config["git"].get("ref"):
        from workbench.git.changes import workbench_status
        from workbench.git.repo import run_git

        dirty = workbench_status(wb.root)
        if wb.git.index_lock.exists():  # git's index is locked: only a person can tell whether a git still runs
            # a write beside it was committed and only git's index lags behind (the files are as HEAD has them)
            lagging = bool(dirty) and "??" not in dirty and run_git(
                wb.root, "diff", "--quiet", "HEAD", "--", ".workbench", check=False).returncode == 0
            add(Finding("index_lock", wb.git.index_lock_advice(waited=False)
                        + (", then `git reset -q -- .workbench` (wb's writes are committed; git's index lags behind)"
                           if lagging else ""), False))
            dirty = "" if lagging else dirty
        if dirty:
            count = len(dirty.splitlines())
            # never committed beside a problem a person must solve (a committed log line changed, a file that
            # does not validate): the commit would record the damage as history
            standing = [f for f in report.findings if not (f.fixed or f.waits or f.fixable)]
            safe = chain_ok and not standing
            finding = Finding("uncommitted", f"{count} workbench file(s) changed since the last commit"
                              + ("" if safe else " (not committed while the log is damaged: restore it first)"
                                 if not chain_ok else " (not committed while this stands: "
                                 + "; ".join(dict.fromkeys(" ".join(f.message.split())[:120] for f in standing)) + ")"),
                              safe, waits=safe)
            if fix and safe:
                # a load first: a hand edit among the changes (config.yaml's too) is recorded, in this commit
                try:
                    with wb.transaction(actor="wb", commit=False):
                        pass
                except WorkbenchError:
                    pass  # a file that does not load: the commit gate below says why, and commits nothing
                outcome = wb.checkpoint("wb: doctor: commit pending workbench changes")
                # no new commit when a crash came after the ref moved: only the index was behind, and
                # the checkpoint synced it — fixed if .workbench/ is clean now
                finding.fixed = outcome.sha is not None or not workbench_status(wb.root)
                if outcome.skipped:
                    finding.message += f" — {outcome.skipped}"
            add(finding)
    return report


def write_findings(wb: Workbench, fix: bool, add: Any) -> None:
    """What the next write does and refuses, found by running it dry (Transaction `dry`: the load with the pending
    journal folded in, the adoption, the sealed-file gate, `_validate`, `check_writable`; nothing written):
    acknowledged events only in the pending journal are named with the command that lands them (`fix` lands
    them, unless git is mid-operation: that is the person's to end); a refusal is named as the write would
    say it, so `wb doctor` healthy means the next write succeeds."""
    from workbench.ops.status import waiting_writes

    try:
        with wb.transaction(actor="wb", dry=True) as tx:
            waiting = waiting_writes(wb, tx.loaded)
    except WorkbenchError as err:
        add(Finding("write_refused", f"the next wb write would be refused: {err}", False))
        return
    if waiting is None:
        return
    if not waiting["events"] and not waiting["refused"]:  # only what an earlier landing set aside: a person's
        add(Finding("set_aside", waiting["text"], False))
        return
    finding = Finding("pending", waiting["text"], waiting["why"] is None, waits=True)
    if fix and waiting["why"] is None:
        with wb.transaction(actor="wb") as tx:
            pass  # adopts the journal's events: lands them on this branch, and commits them
        finding.fixed = True
        if tx.outcome is not None and tx.outcome.warnings:
            finding.message += " — " + "; ".join(tx.outcome.warnings)
    add(finding)


_TRUST_STEP = {
    "claude-code": ("Claude Code did not run wb's hooks: start `claude` in this repository, accept its prompt to "
                    "trust the folder, and check `/hooks` lists wb's (a `disableAllHooks` setting, or settings "
                    "of higher precedence, turn them off)"),
    "codex": ("Codex runs project hooks only once they are trusted: run `codex` in this repository, trust the "
              "project, and trust wb's hooks when it says \"Hooks need review\" (or with /hooks); `codex exec` "
              "skips untrusted hooks without a word"),
}


def add_agent_wiring_finding(wb: Workbench, add: Any) -> None:
    """An agent acted (events by `agent`) after its client was wired to wb (`.claude/settings.json`, `.mcp.json`,
    `.codex/hooks.json` or `.codex/config.toml` names wb) while no hook of that client has recorded anything
    since: its tool calls went unrecorded and unguarded. Names the client's trust step. Never fixable: only a
    person can trust hooks in the client."""
    import json
    from datetime import UTC, datetime

    from workbench.ops.init import wired_clients

    wired = wired_clients(wb.root, mcp=True)
    if not wired:
        return
    since = {client: (wb.root / rel).stat().st_mtime for client, rel in wired.items()}
    acted: dict[str, int] = {}
    heard: set[str] = set()

    def when(record: dict[str, Any]) -> float:
        try:
            return datetime.strptime(str(record.get("ts")), "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=UTC).timestamp()
        except ValueError:
            return 0.0

    def hook_of(record: dict[str, Any]) -> str | None:
        payload = record.get("payload")
        if str(record.get("type", "")).startswith("agent.") and isinstance(payload, dict) \
                and "agent_session" in payload:
            return str(payload.get("agent"))
        return None

    try:
        for _raw, event in wb.log.iter_all():
            client = hook_of(event)
            if client in since and when(event) >= since[client] - 1:
                heard.add(client)
            elif client is None and event.get("actor") == "agent":
                for name, mtime in since.items():
                    if when(event) >= mtime - 1:
                        acted[name] = acted.get(name, 0) + 1
    except WorkbenchError:
        return  # a damaged log is reported above
    spool = wb.git.git_dir / "wb" / "spool.jsonl"
    try:
        for line in spool.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                client = hook_of(json.loads(line))
            except ValueError:
                continue
            if client:
                heard.add(client)
    except OSError:
        pass
    for client, count in acted.items():
        if client not in heard:
            add(Finding("agent_hooks_silent",
                        f"{wired[client]} wires {client} to wb, yet {count} event(s) by an agent since then came "
                        f"with no hook event of {client}: its tool calls were neither recorded nor guarded. "
                        + _TRUST_STEP[client], False))

def segment_findings(wb: Workbench, check: Any, fix: bool, add: Any) -> None:
    """The sealed segments: an events.jsonl past its threshold (a workbench from before segments, or a seal
    cut short) is sealed; segments a merge left over are removed once the log holds their events, and the
    events it lacks are appended to the log first (a `log.reconcile` event records what was folded in)."""
    from workbench.store import sealing

    lacking = check.orphans_missing()
    if check.res.orphans:
        finding = Finding("segments_left", f"{len(check.res.orphans)} sealed segment(s) a merge left over, which "
                                           "the log does not continue" + (f": {'; '.join(lacking)}" if lacking
                                                                          else " (their events are in the log)"),
                          True)
        if fix:
            if lacking:
                fold_orphans(wb)
            with wb.lock():
                sealing.remove_orphans(wb.log)
            finding.fixed = not wb.log.resolution().orphans
        add(finding)
    if sealing.due(wb.log, wb.config):
        tail = wb.log.tail()
        finding = Finding("log_unsealed", f"events.jsonl holds {tail.good_size:,} bytes past the last sealed "
                                          "segment: sealing moves them into .workbench/log/", True)
        if fix:
            with wb.lock():
                sealing.seal(wb.log, wb.config)
            finding.fixed = not sealing.due(wb.log, wb.config)
        add(finding)


def fold_orphans(wb: Workbench) -> None:
    """Append the events of leftover segments that the log lacks (by id), in their order, as one transaction."""
    from workbench.model.jsonl import records, split_lines

    with wb.transaction(actor="wb") as tx:
        have = {e["id"] for _line, e in wb.log.iter_all()} | {e["id"] for e in tx.events}
        res = wb.log.resolution()
        folded = []
        for h in res.orphans:
            for event in records(split_lines((wb.log.log_dir / h.name).read_bytes()[h.size:])[0])[0]:
                if event.get("id") not in have:
                    have.add(event["id"])
                    folded.append(event)
        for event in folded:  # the same events, by id: only their seq and chain are new
            fresh = tx.emit(event["type"], event["payload"], actor=event.get("actor"), session=event.get("session"),
                            ts=event.get("ts"))
            fresh["id"] = event["id"]
        tx.emit("log.reconcile", {"segments": [h.name for h in res.orphans], "events": [e["id"] for e in folded]})
        tx.summary = f"wb: doctor: fold {len(folded)} event(s) of segments a merge left over into the log"


def record_disagreement(wb: Workbench, rebuilt: Any) -> None:
    """Snapshots that differ from what the whole log folds to are a hand edit, whoever made or committed them:
    recorded as `human.edit` (the snapshots stay as they are, and replay then agrees), never reverted. Only
    when nothing a person can set differs (wb's derived keys: updated_at, last_event) are they rebuilt."""
    from workbench.model import reducer
    from workbench.store import humanedit

    with wb.transaction(actor="wb") as tx:
        for event in tx.events:  # what this transaction's load recorded already
            reducer.apply(rebuilt, event)
        edits = humanedit.diff_docs(rebuilt, tx.docs)
        for edit in edits:
            tx.emit("human.edit", edit, actor="human")
        if not edits:
            tx.rebuild_snapshots(rebuilt)
        tx.summary = "wb: doctor: record the snapshots' hand edit" if edits else None


def _snapshots_ahead(wb: Workbench, err: str, fix: bool, add: Callable[[Finding], None],
                     code: str = "snapshot_ahead") -> Loaded | None:
    """state.md says it folds events the log (with the pending journal) does not hold: the user's git gave this
    branch a snapshot written on another (a modified state.md carried over by a checkout), or took the log's
    lines and left the snapshot (a `git stash` racing a write). The snapshots are derived: the log rebuilds them,
    and the ones found are kept aside, never deleted — what they folded is in the log of the branch they came
    from, or was never acknowledged here. The same for a snapshot over its reader's cap (`snapshot_overlong`): wb
    never writes one, and no command reads it."""

    p = wb.paths
    what = err.split("; run")[0].split(" (restore it")[0]
    finding = Finding(code, f"{what} (the event log rebuilds the snapshots; the ones found are kept aside)", True)
    add(finding)
    if not fix:
        return None
    from workbench.store.kept import set_aside_snapshots

    with wb.lock():
        aside = set_aside_snapshots(wb.git.keep_dir, [p.state, p.board])
    with wb.transaction(actor="wb", create=True):
        pass  # a create transaction writes the missing snapshots folded from the whole log, and commits them
    finding.fixed = True
    finding.message += f": rebuilt, the old ones are in {aside}"
    return wb.load(detect_human=False)


def overlong_finding(wb: Workbench, fix: bool, add: Callable[[Finding], None]) -> bool:
    """events.jsonl lines over the reader's cap (store/overlong.py): every command refuses the log until `--fix`
    moves them aside, byte for byte, into .workbench/artifacts/set-aside/ and chains the events after them again."""
    from workbench.model.jsonl import MAX_LINE_BYTES
    from workbench.store import overlong

    spans = overlong.overlong_lines(wb.paths.events)
    if not spans:
        return False
    sizes = ", ".join(f"{length:,} bytes at byte {start:,}" for start, length in spans[:3])
    finding = Finding("log_line_overlong", f"events.jsonl holds {len(spans)} line(s) over the cap of "
                                           f"{MAX_LINE_BYTES:,} bytes ({sizes}): not wb's (wb writes none), and no "
                                           "command reads the log past it", True)
    if fix:
        with wb.lock():
            moved = overlong.set_aside(wb)
        where = ", ".join(".workbench/" + m for m in moved)
        # committed at once, on its own: the log's committed lines changed, and only this repair may do that
        outcome = wb.checkpoint(f"wb: doctor: set aside {len(moved)} over-long line(s) of events.jsonl in {where}")
        finding.fixed = True
        finding.message += f": moved aside to {where}" + (f", committed ({outcome.sha[:12]})" if outcome.sha else
                                                        f" — {outcome.skipped}" if outcome.skipped else "")
    add(finding)
    return True


def behind_finding(wb: Workbench, fix: bool, add: Callable[[Finding], None]) -> None:
    from workbench.store import logprefix

    found = logprefix.behind(wb)
    if found is None:
        return
    where, lines = found
    finding = Finding("log_behind", f"events.jsonl is {where}'s log without its last {lines} line(s): the "
                                    "user's git put back an older commit's files (a `git stash` racing wb's commit, "
                                    "a checkout of .workbench/); every write refuses it as an undo — commit that "
                                    "undo if it is one, or --fix brings back the committed files", True)
    if fix:
        with wb.lock():
            aside = logprefix.bring_forward(wb)
        finding.fixed = True
        finding.message += f": brought back; the work tree's files are kept in {aside}"
    add(finding)
