"""The committed log stays a prefix of the work tree's (issue 29): events.jsonl is only ever appended to, so the
commit wb would commit on anchors its lines. A work tree whose log no longer starts with them — a line edited,
lines removed or reordered (a `git revert` staged and not committed, a `git checkout OLD -- .workbench/`, a
race of the user's `git stash` with a write) — is reported by `wb validate` and `wb doctor`, and refused by the
write before it writes anything, in the same words: wb never commits the user's change to its log as its own.
The user either commits it (a committed revert is theirs, and wb goes on from it) or restores the log.

The check is cheap on a write: the blob cache knows the work tree's file by its stat when it is the committed
one (the usual case), and otherwise the committed blob is read from the loose object wb wrote, no git process.
"""

from __future__ import annotations

import json

from workbench.errors import GitError, Refused, WorkbenchError
from workbench.model.layout import WB_DIR

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from workbench.store.stagecontext import StageWorkbench


class LogRewritten(Refused):
    """The work tree's events.jsonl no longer starts with the lines the commit holds (exit 5)."""


def check(wb: StageWorkbench, appending: list[dict[str, Any]]) -> None:
    """Refuse (LogRewritten) a write onto a log whose committed lines changed: nothing is written. `appending`,
    the write's events, chained: those the pending journal lands back (a `git stash` took a committed line from
    the work tree just as wb committed it) make the log whole again, and are counted."""
    from workbench.model.jsonl import encode

    problem = committed_lines_changed(wb, b"".join(encode(e) + b"\n" for e in appending))
    if problem:
        raise LogRewritten(f"refused, nothing was written: {problem}")


def committed_lines_changed(wb: StageWorkbench, appending: bytes = b"") -> str | None:
    """The log is only ever appended to, so the last commit that recorded it anchors its chain: an edit of a
    committed line — the last one included, which no `prev` of a later line protects yet — is reported, and so
    are removed lines. None when the file still starts with every committed line (or there is no commit to
    compare with, or git owns the files: mid-merge, mid-rebase)."""
    sides = _sides(wb)
    if sides is None:
        return None
    where, _ref, committed, working = sides
    # the write's own append lands after the torn tail's truncation
    current = working[:working.rfind(b"\n") + 1] + appending if appending else working
    committed = committed[:committed.rfind(b"\n") + 1]  # a torn last line committed by hand was never an event
    if current.startswith(committed):
        return None
    committed = _less_sealed(wb, committed)  # a seal since that commit moved its first lines into log/
    if current.startswith(committed) or (appending and _same_events(committed, current)):
        return None
    keep = (f"to keep them, restore the log with `git checkout {where} -- {WB_DIR}/` after saving what you "
            "need")
    if committed.startswith(working):
        removed = committed[len(working):].count(b"\n")
        return (f"events.jsonl: {removed} committed line(s) were removed after {where} recorded them (the log "
                f"is append-only): if that is your undo, commit it first (`git commit`); {keep}")
    old_lines, new_lines = committed.split(b"\n"), current.split(b"\n")
    for number, (old, new) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if old != new:
            return (f"events.jsonl:{number}: a committed line was changed after {where} recorded it (the log is "
                    f"append-only; restore it with `git checkout {where} -- {WB_DIR}/events.jsonl` after saving "
                    "what you need)")
    return (f"events.jsonl: committed lines were removed after {where} recorded them (restore the log with "
            f"`git checkout {where} -- {WB_DIR}/events.jsonl`)")


def _sides(wb: StageWorkbench) -> tuple[str, str, bytes, bytes] | None:
    """(the ref as named, the commit it is compared with, the committed log, the work tree's) — None when there
    is nothing to compare: no commit, commits off, mid-merge or mid-rebase (the file is git's to rewrite until
    the operation ends), or the work tree's file is the committed one, as its stat says."""
    try:
        git_cfg = wb.config["git"]
    except WorkbenchError:
        return None  # config.yaml itself is reported as a problem of its own
    if git_cfg.get("commit") == "off" or wb.git.operation_in_progress():
        return None
    ref = git_cfg.get("ref")
    ref = (ref if ref.startswith("refs/") else "refs/heads/" + ref) if ref else "HEAD"
    where = ref
    if ref != "HEAD":  # state on its own ref: the work tree was made from the state commit recorded for it, which
        # a `wb sync` on another worktree (or one killed between its ref and its files) may have moved past
        ref = wb.git.state_base(ref) or ref
    try:
        found = wb.git.committed_wb_file("events.jsonl", ref)
        if found is None or wb.git.known_blob("events.jsonl") == found[0]:
            return None
        return where, ref, found[1], wb.paths.events.read_bytes()
    except (GitError, OSError):
        return None


def behind(wb: StageWorkbench) -> tuple[str, int] | None:
    """(the ref, how many lines) when the work tree's log is the committed log's first lines and nothing else:
    the user's git put back an older commit's files (a `git stash push` racing a write's commit resets them to
    the commit before the one wb just made). Bringing the committed files back loses nothing of the work tree's."""
    sides = _sides(wb)
    if sides is None:
        return None
    where, _ref, committed, working = sides
    committed = committed[:committed.rfind(b"\n") + 1]
    if working == committed or not committed.startswith(working) or not working.endswith(b"\n"):
        return None
    return where, committed[len(working):].count(b"\n")


def bring_forward(wb: StageWorkbench) -> Path:
    """Put back the committed events.jsonl, state.md and board.json (the caller saw `behind`, and holds the
    lock); the work tree's are kept aside in `<git dir>/wb/set-aside/<time>/`, never deleted. Returns that
    folder."""
    from workbench.store.atomic import atomic_write
    from workbench.store.kept import set_aside_snapshots

    sides = _sides(wb)
    if sides is None:
        raise WorkbenchError("events.jsonl is no longer behind the last commit: nothing was changed")
    ref = sides[1]
    p = wb.paths
    files = {path: wb.git.committed_wb_file(path.name, ref) for path in (p.events, p.state, p.board)}
    aside = set_aside_snapshots(wb.git.keep_dir, [path for path, found in files.items() if found is not None])
    for path, found in files.items():
        if found is not None:
            atomic_write(path, found[1])
    return aside


def _same_events(committed: bytes, current: bytes) -> bool:
    """Whether `current` begins with `committed`'s events, each the same but for how it was batched (`more`) and
    so chained (`prev`): a committed event the pending journal lands back, in one batch with the write's own."""
    import json

    def parsed(line: bytes) -> Any:
        try:
            event = json.loads(line)
        except ValueError:
            return None
        if isinstance(event, dict):
            event.pop("more", None)
            event.pop("prev", None)
        return event

    old, new = committed.splitlines(), current.splitlines()
    return len(new) >= len(old) and all(parsed(a) == parsed(b) is not None for a, b in zip(old, new, strict=False))


def _less_sealed(wb: StageWorkbench, committed: bytes) -> bytes:
    """The committed events.jsonl without its leading lines that are sealed in log/ now, byte for byte (the
    chain makes the last of them enough to compare: its hash is the one the sealed log holds at its seq)."""
    from workbench.model.jsonl import line_hash

    chain = wb.log.resolution().chain
    if not chain:
        return committed
    last = chain[-1].last
    lines = committed.split(b"\n")
    cut = 0
    for i, line in enumerate(lines):
        try:
            seq = json.loads(line).get("seq") if line else None
        except (ValueError, AttributeError):
            break
        if not isinstance(seq, int) or seq > last:
            break
        cut = i + 1
    if not cut:
        return committed
    seq = json.loads(lines[cut - 1])["seq"]
    sealed = [h for h in chain if h.first <= seq <= h.last][0]
    want = sealed.last_hash if seq == sealed.last else next(
        (line_hash(raw) for raw, e in wb.log.sealed_events(sealed) if e["seq"] == seq), None)
    return b"\n".join(lines[cut:]) if line_hash(lines[cut - 1]) == want else committed
