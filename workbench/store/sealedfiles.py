"""Sealed files stay sealed: a log segment (`.workbench/log/NNNNNN.jsonl`) or an archive chunk
(`.workbench/archive/*.json`) that the work tree holds changed or deleted since the commit wb would commit on
is never committed by wb. A mutation refuses before it writes anything (exit 5), naming the file and the
command that restores it; every other commit path (a harness checkpoint, `wb init`, `wb migrate`,
`wb doctor --fix`) commits nothing and says why, in one line.

wb changes a sealed file itself in two places only, and says so first: a segment a merge left over that the
log holds every event of is removed (each write after a merge, and `wb doctor --fix` after its
`log.reconcile`), and a seal may write a segment under the name of one it removed. Each such change is
recorded, before it is made, in `<git dir>/wb/sealed-own.json` (path → the blob id wb wrote, or null for a
removal); the gate lets exactly that change through — so a commit skipped mid-merge or on a detached HEAD
carries it later — and forgets the record once the work tree and the commit agree on the file again. A
person's edit of a file wb also changed is another blob id, and is refused all the same.

The check is cheap: one stat per sealed file the commit holds, each read and hashed only when its stat is not
the one the blob cache (`git/repo.BlobStatCache`) knows. A mutation makes it once, before it writes; the commit
(every path's, store/commit.py) makes it on the very listing it commits (`commit_gate`): no second stat of each
file, and no moment between the check and the listing.
"""

from __future__ import annotations

import json
from pathlib import Path

from workbench.errors import Refused
from workbench.model.layout import WB_DIR
from workbench.store.atomic import atomic_write

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Listing = dict[str, tuple[str, str]]

    from workbench.store.stagecontext import StageWorkbench

SEALED_DIRS = ("log/", "archive/")
OWN_FILE = "sealed-own.json"


class SealedChanged(Refused):
    """A sealed file changed or deleted in the work tree (exit 5): wb commits nothing until it is restored."""


def _own_path(wb: StageWorkbench) -> Path:
    return wb.git.git_dir / "wb" / OWN_FILE


def _read_own(path: Path) -> dict[str, str | None]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {str(k): v for k, v in files.items() if v is None or isinstance(v, str)}


def _write_own(path: Path, files: dict[str, str | None]) -> None:
    if not files:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(exist_ok=True)
    atomic_write(path, json.dumps({"v": 1, "files": files}, sort_keys=True).encode() + b"\n")


def record_own(wb: StageWorkbench, changes: dict[str, bytes | None]) -> None:
    """wb is about to write these sealed files ({path under .workbench/: bytes}), or remove them (None):
    recorded durably first, so the gate tells these changes from a person's."""
    path = _own_path(wb)
    files = _read_own(path)
    for rel, data in changes.items():
        files[rel] = None if data is None else wb.git.blob_id(data)
    _write_own(path, files)


def check(wb: StageWorkbench, git_cfg: dict[str, Any] | None = None, *, writing: bool = True) -> None:
    """Refuse (SealedChanged) when the work tree changed or deleted a sealed file the commit wb would commit on
    holds, other than as wb itself recorded. Nothing to do when wb would not commit now (the caller knows
    commits are on). `writing`: a mutation refused before it wrote anything (the message says so); else a
    commit of what is written already."""
    cfg = wb.config["git"] if git_cfg is None else git_cfg
    ref = cfg.get("ref") or None
    refuse(wb, wb.git.sealed_changes(ref, SEALED_DIRS), ref, writing=writing)


def commit_gate(wb: StageWorkbench, ref: str | None) -> Callable[[Listing, Listing], str | None]:
    """The check above as the commit makes it (git/repo.commit_workbench's `gate`): on the listing it is about to
    commit, against the commit it is made on — {path under .workbench/: (mode, blob id)} each — so what is
    committed is what was checked, with no stat or hash of its own. The reason it commits nothing, or None."""

    def gate(parent: Listing, files: Listing) -> str | None:
        changed: list[tuple[str, str, str | None]] = []
        for rel, (_mode, sha) in sorted(parent.items()):
            if rel.startswith(SEALED_DIRS):
                now = files.get(rel)
                if now is None:
                    changed.append((rel, "deleted", None))
                elif now[1] != sha:
                    changed.append((rel, "modified", now[1]))
        try:
            refuse(wb, changed, ref, writing=False)
        except Refused as err:
            return f"not committed: {err}"
        return None

    return gate


def refuse(wb: StageWorkbench, changed: list[tuple[str, str, str | None]], ref: str | None, *,
           writing: bool) -> None:
    """SealedChanged when `changed` (git/repo.sealed_changes's rows) holds a change wb did not record as its own;
    the records of the files the commit holds again are dropped."""
    path = _own_path(wb)
    own = _read_own(path) if path.exists() else {}
    if own:  # what the commit holds again (committed, or put back) needs no record any more
        kept = {rel: sha for rel, sha in own.items() if any(c[0] == rel for c in changed)}
        if kept != own:
            _write_own(path, kept)
        own = kept
    bad = [(rel, what) for rel, what, sha in changed
           if rel not in own or own[rel] != sha or (what == "modified" and sha is None)]
    if not bad:
        return
    rel, what = bad[0]
    kind = "log segment" if rel.startswith("log/") else "archive chunk"
    where = "HEAD" if ref is None else ref
    more = f" ({len(bad) - 1} more sealed file(s) too)" if len(bad) > 1 else ""
    raise SealedChanged(
        f"{WB_DIR}/{rel} is {what} in the work tree{more}: a sealed {kind} is never changed, so wb "
        f"{'wrote nothing' if writing else 'commits nothing'}; restore it with "
        f"`git checkout {where} -- {WB_DIR}/{_restore_path(bad)}`")


def _restore_path(bad: list[tuple[str, str]]) -> str:
    """What one `git checkout` restores: the one file, or the sealed directories when there are several."""
    if len(bad) == 1:
        return bad[0][0]
    dirs = sorted({rel.split("/", 1)[0] for rel, _what in bad})
    return f" {WB_DIR}/".join(dirs)
