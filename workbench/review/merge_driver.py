"""The merge of one workbench file inside `git merge`: the three versions, the merged log replayed, the caches
left consistent (the rules themselves: workbench/review/merge.py; the command: workbench/cli/merge_driver.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workbench.model.segments import WholeLog

KINDS = ("board", "events", "state")
MERGED_PATHS = {"board": ".workbench/board.json", "events": ".workbench/events.jsonl", "state": ".workbench/state.md"}


def acts_on(kind: str, path: str) -> bool:
    """Is `path` (git's %P) the workbench file this driver merges? A root .gitattributes can route any file to
    wb's driver (`*.py merge=wb-board`): such a file is not wb's to merge by id, and no cache is touched."""
    return MERGED_PATHS.get(kind) == path


def plain_merge(root: Path, base: Path, ours: Path, theirs: Path, path: str) -> int:
    """What git does for a file with no merge driver: a line merge into `ours`, conflict markers where the
    sides disagree (`git merge-file`). 0 when clean, 1 when conflicted (git then reports the conflict)."""
    from workbench.git.repo import run_git

    proc = run_git(root, "merge-file", "-L", f"ours:{path}", "-L", f"base:{path}", "-L", f"theirs:{path}",
                   str(ours), str(base), str(theirs), check=False)
    return 0 if proc.returncode == 0 else 1


def _events(raw: bytes) -> list[dict[str, Any]]:
    from workbench.model.jsonl import records, split_lines

    lines, _torn = split_lines(raw)  # a torn last line was never acknowledged
    return records(lines)[0]  # damaged lines are skipped


def _board(raw: bytes) -> dict[str, Any]:
    from workbench.errors import Refused
    from workbench.model.boardfile import parse_board

    try:
        return parse_board(raw) if raw.strip() else {}
    except Refused:
        return {}


def _state(raw: bytes) -> tuple[Any, dict[str, Any], str]:
    from workbench.model import statefile

    if not raw.strip():
        return None, {}, ""
    parsed = statefile.parse(raw)
    return parsed.node, parsed.data, parsed.body


def _merge_commits(root: Path) -> tuple[str, str, str] | None:
    """(base, ours, theirs) inside `git merge`, from HEAD and the GITHEAD_<sha> git exports to drivers."""
    from workbench.git.repo import run_git

    heads = [k[len("GITHEAD_"):] for k in os.environ if k.startswith("GITHEAD_")]
    ours = run_git(root, "rev-parse", "HEAD", check=False).stdout.decode().strip()
    others = [h for h in heads if h != ours]
    if not ours or len(others) != 1:
        return None
    base = run_git(root, "merge-base", ours, others[0], check=False).stdout.decode().split()
    return (base[0], ours, others[0]) if base else None


def _stash_commits(root: Path, theirs: bytes, name: str) -> tuple[str, str, str] | None:
    """(base, ours, theirs) while `git stash pop` / `apply` merges the newest stash into HEAD: recognised by
    `theirs` being that stash's version of the file."""
    from workbench.git.repo import cat_batch, run_git

    stash = run_git(root, "rev-parse", "--verify", "-q", "refs/stash", check=False).stdout.decode().strip()
    ours = run_git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.decode().strip()
    if not stash or not ours:
        return None
    found = cat_batch(root, [f"{stash}:.workbench/{name}"])[0]
    if found is None or found[1] != theirs:
        return None
    return f"{stash}^1", ours, stash


def _picked_commits(root: Path) -> tuple[str, str, str] | None:
    """(base, ours, theirs) while a rebase or a cherry-pick applies one commit onto HEAD: theirs is that commit
    (the sequencer's last `done` line, or rebase-apply's original-commit), base its parent. None when git
    leaves no trace of which commit it is applying (a single `git cherry-pick`, `git merge-file`)."""
    from workbench.git.repo import GitRepo, run_git

    git_dir = GitRepo(root).git_dir
    picked = None
    done = git_dir / "rebase-merge" / "done"
    if done.exists():
        lines = [line.split() for line in done.read_text(errors="replace").splitlines()
                 if line.strip() and not line.startswith("#")]
        if lines and len(lines[-1]) > 1:
            picked = lines[-1][1]
    elif (git_dir / "rebase-apply" / "original-commit").exists():
        picked = (git_dir / "rebase-apply" / "original-commit").read_text().strip()
    if not picked:
        return None
    shas = run_git(root, "rev-parse", "--verify", "-q", f"{picked}^{{commit}}", check=False).stdout.decode().split()
    ours = run_git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.decode().split()
    if not shas or not ours:
        return None
    return f"{shas[0]}^", ours[0], shas[0]


def _versions_at(root: Path, commits: tuple[str, str, str]) -> dict[str, dict[str, bytes]]:
    from workbench.git.repo import cat_batch

    names = ("events.jsonl", "board.json", "state.md")
    specs = [f"{c}:.workbench/{n}" for c in commits for n in names]
    found = cat_batch(root, specs)
    out: dict[str, dict[str, bytes]] = {}
    for i, side in enumerate(("base", "ours", "theirs")):
        out[side] = {n: (found[i * 3 + k][1] if found[i * 3 + k] else b"") for k, n in enumerate(names)}  # type: ignore[index]
    return out


def _segments_at(root: Path, commits: tuple[str, str, str]) -> dict[str, list[tuple[str, bytes]]]:
    """{side: [(name, bytes)]}: the sealed segments under .workbench/log/ at each commit, each blob read once."""
    from workbench.git.repo import cat_batch, run_git
    from workbench.model.segments import is_segment_name

    listed: dict[str, list[tuple[str, str]]] = {}
    for side, commit in zip(("base", "ours", "theirs"), commits, strict=True):
        proc = run_git(root, "ls-tree", commit, "--", ".workbench/log/", check=False)
        rows = []
        for line in proc.stdout.decode(errors="replace").splitlines():
            meta, _tab, path = line.partition("\t")
            name = path.rsplit("/", 1)[-1]
            if meta.split()[1:2] == ["blob"] and is_segment_name(name):
                rows.append((name, meta.split()[2]))
        listed[side] = sorted(rows)
    shas = sorted({sha for rows in listed.values() for _name, sha in rows})
    blobs = {sha: (got[1] if got else b"") for sha, got in zip(shas, cat_batch(root, shas), strict=True)}
    return {side: [(name, blobs[sha]) for name, sha in rows] for side, rows in listed.items()}


def _whole_logs(root: Path, commits: tuple[str, str, str], files: dict[str, dict[str, bytes]]
                ) -> tuple[list[dict[str, Any]], Any, dict[str, list[dict[str, Any]]], WholeLog]:
    """(the sealed events all three sides share, the Tail they end at, each side's events after them, ours)."""
    from workbench.store.eventlog import Tail

    segments = _segments_at(root, commits)
    sides = {s: WholeLog(segments[s], files[s]["events.jsonl"]) for s in ("base", "ours", "theirs")}
    shared = 0  # segments sealed before the fork: the same (name, digest) on all three sides
    for trio in zip(*(sides[s].chain for s in ("base", "ours", "theirs")), strict=False):
        if len({(h.name, h.sha256) for h in trio}) != 1:
            break
        shared += 1
    head = sides["ours"].chain[shared - 1] if shared else None
    through = head.last if head else 0
    start = Tail(through, head.last_hash if head else None, 0, 0)
    rests = {s: [e for e in side.events if e["seq"] > through] for s, side in sides.items()}
    prefix = sides["ours"].events[:through]
    return prefix, start, rests, sides["ours"]


def _tail_after_ours(events: list[dict[str, Any]], start: Any, ours: WholeLog) -> list[dict[str, Any]]:
    """The merged events events.jsonl holds: those after ours' last sealed segment when the merge kept ours'
    events as they were (a rebase's pick), else those after the segments sealed before the fork (ours' later
    segments are then left over, and the next wb write removes them)."""
    from workbench.model.jsonl import encode, line_hash

    if ours.chain and ours.chain[-1].last > start.seq:
        last = ours.chain[-1]
        at = [e for e in events if e["seq"] == last.last]
        if at and line_hash(encode(at[0])) == last.last_hash:
            return [e for e in events if e["seq"] > last.last]
    return events


def merge_file(kind: str, own: dict[str, bytes], root: Path) -> tuple[bytes, list[str]]:
    from workbench.model import statefile
    from workbench.model.boardfile import encode_board
    from workbench.model.jsonl import encode
    from workbench.review import merge

    own_name = {"board": "board.json", "events": "events.jsonl", "state": "state.md"}[kind]
    commits = _merge_commits(root)
    pick = commits is None
    if commits is None:
        commits = _picked_commits(root) or _stash_commits(root, own["theirs"], own_name)
    if commits is not None:
        files = _versions_at(root, commits)
        for side in own:
            files[side][own_name] = own[side]
        # the whole logs (sealed segments, then events.jsonl): the segments all three share stay as they are,
        # and what follows them is merged by event id
        prefix, start, rests, ours_log = _whole_logs(root, commits, files)
        ordering: list[str] = []  # what no order of the two logs keeps (review/merge.py interleave)
        rest, renames = merge.merge_events(rests["base"], rests["ours"], rests["theirs"], pick=pick, start=start,
                                           conflicts=ordering)
        if kind == "events":
            return b"".join(encode(e) + b"\n" for e in _tail_after_ours(rest, start, ours_log)), []
        docs = merge.replay(prefix + rest)
        # base numbered as theirs: the picked commit's parent, or a merge base ours has renumbered since
        theirs_numbering = merge.picks(rests["base"], rests["ours"], pick=pick)
        if kind == "board":
            b, o, t = (_board(files[s]["board.json"]) for s in ("base", "ours", "theirs"))
            if theirs_numbering:
                b = merge.rename_board(b, renames["theirs"])
            _, conflicts = merge.merge_boards(b, o, t, renames=renames)
            raw = encode_board(docs.board)
            _write_cache(root, "board", raw, None)
            return raw, ordering + [c for c in conflicts if c.split(".", 1)[0] not in
                                    {o.split(":", 1)[0] for o in ordering}]
        states = [_state(files[s]["state.md"]) for s in ("base", "ours", "theirs")]
        base_state = states[0][1]
        if theirs_numbering and base_state.get("active_task_id") in renames["theirs"]:
            base_state = {**base_state, "active_task_id": renames["theirs"][base_state["active_task_id"]]}
        _, conflicts = merge.merge_state(base_state, states[1][1], states[2][1], renames)
        raw = statefile.render(states[1][0], docs.state, docs.body)
        _write_cache(root, "state", raw, docs)
        # and the board the merged log folds to, whether or not git asks for one: when only one side changed
        # board.json, git takes that side's whole, numbered as that side's log was — the next load must judge it
        # against the merged log, not take it for wb's last write (whose bytes it may be: the line wb last wrote
        # on before a checkout)
        merged_board = encode_board(docs.board)
        _write_cache(root, "board", merged_board, None)
        _alias_taken_board(root, files, docs, merged_board, raw)
        return raw, conflicts
    # A cherry-pick git leaves no trace of, `git merge-file`: each file merged on its own, with the same rules;
    # `wb validate` then finds where board or state disagree with the log, and `wb doctor --fix` rebuilds them.
    if kind == "events":
        events, _ = merge.merge_events(*(_events(own[s]) for s in ("base", "ours", "theirs")), pick=True)
        return b"".join(encode(e) + b"\n" for e in events), []
    _drop_cache(root)
    if _is_pick(kind, own):
        # events.jsonl gains the picked commit's events, appended after ours and renumbered as the log's merge
        # renumbers them (or nothing, when ours has them already); board.json and state.md stay ours, behind
        # that log, and the next wb command folds the picked events into them, as it folds any log its snapshots
        # lag. Merged here on their own, they disagreed with the log: a task id ours took, renumbered one way in
        # the log and another on the board (the next write took the difference for a person's edit); an event
        # ours had already, counted again into last_event (every later write refused: gitfuzz seed 237804267)
        return own["ours"], []
    if kind == "board":
        board, conflicts = merge.merge_boards(*(_board(own[s]) for s in ("base", "ours", "theirs")))
        return encode_board(board), conflicts
    (_, b, bb), (node, o, ob), (_, t, tb) = (_state(own[s]) for s in ("base", "ours", "theirs"))
    merged, conflicts = merge.merge_state(b, o, t, {"ours": {}, "theirs": {}})
    for counter in o.get("counters", {}):
        merged["counters"][counter] = (o["counters"][counter] + t.get("counters", {}).get(counter, 0)
                                       - b.get("counters", {}).get(counter, 0))
    # the log keeps ours and appends what theirs adds over base (a revert's theirs adds nothing: its events stay)
    merged["last_event"] = o.get("last_event", 0) + max(0, t.get("last_event", 0) - b.get("last_event", 0))
    # the picked events are appended after ours' (review/merge.py _append_theirs): the log's last event, whose
    # time the fold gives updated_at, is theirs' last when the pick brought any, else ours'
    brought = t.get("last_event", 0) > b.get("last_event", 0)
    merged["updated_at"] = (t if brought else o).get("updated_at", "")
    return statefile.render(node, merged, merge.merge_bodies(bb, ob, tb)), conflicts


def _is_pick(kind: str, own: dict[str, bytes]) -> bool:
    """Whether the commit being applied outside `git merge` adds events to its parent (a cherry-pick; a revert's
    theirs is the reverted commit's parent, behind it), by the snapshots' own last_event."""
    if kind == "board":
        last = [_board(own[side]).get("last_event") for side in ("base", "theirs")]
    else:
        last = [_state(own[side])[1].get("last_event") for side in ("base", "theirs")]
    base, theirs = last
    return isinstance(base, int) and isinstance(theirs, int) and theirs > base


def _write_cache(root: Path, kind: str, raw: bytes, docs: Any) -> None:
    """Record what the merge wrote as wb's own write, so a hand resolution afterwards is seen as a human edit.

    This write stays outside the Transaction: the driver runs inside `git merge`, which owns the work tree
    and writes the merged file itself after the driver returns, and whose other drivers run one after the
    other with no wb lock to take. So it uses the store's one cache writer (workbench.store.caches: the one
    format, written atomically), without a stat of a file git has not written yet; nothing is committed here
    (git commits the merge)."""
    from workbench.model.layout import Paths
    from workbench.store import caches

    p = Paths(root)
    if not p.cache.is_dir():
        return
    if kind == "board":
        caches.write_board_cache(p, raw)
    else:
        caches.write_state_cache(p, raw, docs.state, docs.body, stat=False)


def _alias_taken_board(root: Path, files: dict[str, dict[str, bytes]], docs: Any, merged: bytes,
                       state_raw: bytes) -> None:
    """When only one side changed board.json, git writes that side's file itself, numbered as that side's log was:
    if its tasks are the merged log's, remember those bytes as wb's, with the merged log's last_event, for the
    next load (store/caches.py `board_alias`; the next write writes board.json with it)."""
    from workbench.model.layout import Paths
    from workbench.store import caches

    p = Paths(root)
    if not p.cache.is_dir():
        return
    base, ours, theirs = (files[s]["board.json"] for s in ("base", "ours", "theirs"))
    taken = theirs if ours == base else ours if theirs == base else None
    if taken is None or taken == merged or not taken.strip():
        caches.drop_board_alias(p)
        return
    board = _board(taken)
    same = {k: v for k, v in board.items() if k != "last_event"} == \
        {k: v for k, v in docs.board.items() if k != "last_event"}
    if same:
        caches.write_board_alias(p, taken, int(docs.board.get("last_event", 0)), state_raw)
    else:
        caches.drop_board_alias(p)


def _drop_cache(root: Path) -> None:
    """Outside `git merge` (a rebase, a cherry-pick) the merged files are not replayed: forget wb's copies, so
    the next load reads them as a person's, and validates them."""
    from workbench.model.layout import Paths
    from workbench.store import caches

    caches.drop_snapshot_caches(Paths(root))
