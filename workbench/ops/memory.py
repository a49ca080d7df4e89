"""Memory that knows when it is stale (issue 22): notes and assumptions that name the paths they are about.

`wb note --about PATH…` and `wb set assumptions+=TEXT --about PATH…` record the paths and the commit HEAD was at
(the `about` of their event); the reducer keeps each as an item of state.md `memory` (`M-<seq>`, the event that
made it). An item is stale once a commit after its own changes one of its paths: `wb status`, `wb prime` and
`wb handoff` name that commit, and `wb verify M-…` confirms the item again as of HEAD (a `memory.verify` event,
with who confirmed it). Only commits count: an uncommitted edit is the working tree's, not history's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.errors import UsageError

SHOWN = 10  # stale items a status names; the rest are counted


def paths_about(root: Path, cwd: Path, paths: list[str]) -> list[str]:
    """The paths as typed (relative to `cwd`, or absolute) as paths in the work tree at `root`, `/`-separated,
    in the order given, each once; a UsageError for one outside it."""
    out: list[str] = []
    base = root.resolve()
    for typed in paths:
        if not typed.strip():
            raise UsageError("--about needs a path")
        full = (cwd / typed).resolve() if not Path(typed).is_absolute() else Path(typed).resolve()
        try:
            rel = full.relative_to(base).as_posix()
        except ValueError:
            raise UsageError(f"--about {typed}: outside the work tree {root}; name a path in it") from None
        if rel not in out:
            out.append(rel)
    return out


def stale_items(root: Path, state: dict[str, Any]) -> list[dict[str, Any]]:
    """The memory items a later commit made stale, oldest item first: each {id, kind, text, about, since, at,
    changed_by: {sha, subject} | None, commits, command}. `changed_by` None: the commit it was recorded at is
    not in this history (rewritten or not fetched), so nothing vouches for it either."""
    from workbench.git import changes

    out = []
    for item in state.get("memory") or []:
        found = changes.commits_touching(root, item.get("commit"), list(item.get("about") or []))
        if found == []:
            continue
        out.append({"id": item["id"], "kind": item["kind"], "text": item["text"], "about": item["about"],
                    "since": item.get("commit"), "at": (item.get("verified") or {}).get("at") or item["at"],
                    "changed_by": found[0] if found else None, "commits": len(found or []),
                    "command": f"wb verify {item['id']}"})
    return out


def summary(root: Path, state: dict[str, Any]) -> dict[str, Any] | None:
    """`memory` of `wb status --json`: how many items, and the stale ones (at most SHOWN, `more` the rest);
    None without any item (and then no git is asked anything)."""
    memory = state.get("memory") or []
    if not memory:
        return None
    stale = stale_items(root, state)
    return {"items": len(memory), "stale": stale[:SHOWN], "more": max(0, len(stale) - SHOWN)}


def clip(text: str, width: int) -> str:
    """One line of at most `width` characters (ops/status.clip's rule; status imports this module)."""
    one = " ".join(str(text).split())
    return one if len(one) <= width else one[: width - 1] + "…"


def line(item: dict[str, Any], width: int = 80) -> str:
    """One stale item for people: `M-12 note "…" about src/x.py: changed by abc123456789 "subject" — wb verify M-12`."""
    by = item["changed_by"]
    why = (f"changed by {by['sha'][:12]} \u201c{clip(by['subject'], 60)}\u201d"
           + (f" and {item['commits'] - 1} more" if item["commits"] > 1 else "")) if by else \
        f"its commit {str(item['since'])[:12]} is not in this history"
    return (f"{item['id']} {item['kind']} \u201c{clip(item['text'], width)}\u201d about "
            f"{', '.join(item['about'][:3])}{' …' if len(item['about']) > 3 else ''}: {why} — {item['command']}")
