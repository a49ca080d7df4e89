"""The merge of one workbench file inside `git merge`: the three versions, the merged log replayed, the caches
left consistent (the rules themselves: workbench/review/merge.py; the command: workbench/cli/merge_driver.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

KINDS = ("board", "events", "state")


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


def _versions_at(root: Path, commits: tuple[str, str, str]) -> dict[str, dict[str, bytes]]:
    from workbench.git.repo import cat_batch

    names = ("events.jsonl", "board.json", "state.md")
    specs = [f"{c}:.workbench/{n}" for c in commits for n in names]
    found = cat_batch(root, specs)
    out: dict[str, dict[str, bytes]] = {}
    for i, side in enumerate(("base", "ours", "theirs")):
        out[side] = {n: (found[i * 3 + k][1] if found[i * 3 + k] else b"") for k, n in enumerate(names)}  # type: ignore[index]
    return out


def merge_file(kind: str, own: dict[str, bytes], root: Path) -> tuple[bytes, list[str]]:
    from workbench.model import statefile
    from workbench.model.boardfile import encode_board
    from workbench.model.jsonl import encode
    from workbench.review import merge

    own_name = {"board": "board.json", "events": "events.jsonl", "state": "state.md"}[kind]
    commits = _merge_commits(root)
    if commits is not None:
        files = _versions_at(root, commits)
        for side in own:
            files[side][own_name] = own[side]
        events, renames = merge.merge_events(*(_events(files[s]["events.jsonl"]) for s in ("base", "ours", "theirs")))
        if kind == "events":
            return b"".join(encode(e) + b"\n" for e in events), []
        docs = merge.replay(events)
        if kind == "board":
            b, o, t = (_board(files[s]["board.json"]) for s in ("base", "ours", "theirs"))
            _, conflicts = merge.merge_boards(b, o, t, renames=renames)
            raw = encode_board(docs.board)
            _write_cache(root, "board", raw, None)
            return raw, conflicts
        states = [_state(files[s]["state.md"]) for s in ("base", "ours", "theirs")]
        _, conflicts = merge.merge_state(states[0][1], states[1][1], states[2][1], renames)
        raw = statefile.render(states[1][0], docs.state, docs.body)
        _write_cache(root, "state", raw, docs)
        return raw, conflicts
    # Outside `git merge` (a rebase, a cherry-pick): each file merged on its own, with the same rules.
    if kind == "events":
        events, _ = merge.merge_events(*(_events(own[s]) for s in ("base", "ours", "theirs")))
        return b"".join(encode(e) + b"\n" for e in events), []
    _drop_cache(root)
    if kind == "board":
        board, conflicts = merge.merge_boards(*(_board(own[s]) for s in ("base", "ours", "theirs")))
        return encode_board(board), conflicts
    (_, b, bb), (node, o, ob), (_, t, tb) = (_state(own[s]) for s in ("base", "ours", "theirs"))
    merged, conflicts = merge.merge_state(b, o, t, {"ours": {}, "theirs": {}})
    for counter in o.get("counters", {}):
        merged["counters"][counter] = (o["counters"][counter] + t.get("counters", {}).get(counter, 0)
                                       - b.get("counters", {}).get(counter, 0))
    merged["last_event"] = o.get("last_event", 0) + t.get("last_event", 0) - b.get("last_event", 0)
    merged["updated_at"] = max(o.get("updated_at", ""), t.get("updated_at", ""))
    return statefile.render(node, merged, merge.merge_bodies(bb, ob, tb)), conflicts


def _write_cache(root: Path, kind: str, raw: bytes, docs: Any) -> None:
    """Record what the merge wrote as wb's own write, so a hand resolution afterwards is seen as a human edit."""
    import hashlib

    from workbench.store.atomic import atomic_write

    cache = root / ".workbench" / ".cache"
    if not cache.is_dir():
        return
    if kind == "board":
        atomic_write(cache / "board.json", raw, durable=False)
    else:  # no stat: git writes the file after this driver returns, so the hash decides
        atomic_write(cache / "state.body", docs.body.encode("utf-8"), durable=False)
        blob = {"sha": hashlib.sha256(raw).hexdigest(), "state": docs.state}
        atomic_write(cache / "state.json", json.dumps(blob, ensure_ascii=False).encode(), durable=False)


def _drop_cache(root: Path) -> None:
    for name in ("board.json", "state.json"):
        try:
            (root / ".workbench" / ".cache" / name).unlink()
        except FileNotFoundError:
            pass
