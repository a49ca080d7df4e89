"""The two sides of a `wb diff`: the working tree or a commit, and how `wb diff [REV [REV]]` names them.

A commit's workbench files are read with one `git cat-file --batch` (no checkout, no temporary files); a side
without `.workbench/` is an empty workbench. A side is the files' bytes: parsing them is workbench.review.parse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import NotFound, UsageError
from workbench.git.repo import cat_batch, run_git
from workbench.model.layout import WB_DIR

FILES = ("state.md", "board.json", "events.jsonl", "calls.jsonl", "config.yaml")
WORKTREE = "working tree"


@dataclass
class Side:
    """One side of a diff: its files' bytes (None: absent) and how to name it."""

    label: str  # what the user typed ("HEAD", "main~3"), or "working tree"
    commit: str | None  # the commit it resolved to; None for the working tree or an empty side
    files: dict[str, bytes | None] = field(default_factory=dict)
    root: Path | None = None  # where to read its sealed log segments (.workbench/log/) from, when needed
    # a SQLite workbench's side: the seq it stands at, and how to read its log's lines between two seqs — its
    # events.jsonl is not held whole, only the lines between the two sides are read (review/logpoints.py)
    seq: int | None = None
    log_range: Callable[[int, int], bytes] | None = None

    def sealed_from(self, seq: int) -> bytes:
        """The event lines of this side's sealed segments with seq >= `seq` (read newest first, only as far
        back as needed): what a seal since the other side moved out of events.jsonl."""
        from workbench.errors import Refused
        from workbench.model.jsonl import split_lines
        from workbench.model.segments import LOG_DIR, header_of, is_segment_name

        if self.root is None:
            return b""
        log = f"{WB_DIR}/{LOG_DIR}"
        if self.commit is None:
            try:
                names = sorted(n for n in (p.name for p in (self.root / log).iterdir()) if is_segment_name(n))
            except OSError:
                return b""
        else:
            listed = run_git(self.root, "ls-tree", "--name-only", self.commit, "--", log + "/", check=False)
            names = sorted(n for n in (x.rsplit("/", 1)[-1] for x in listed.stdout.decode().split())
                           if is_segment_name(n))
        parts: list[bytes] = []
        for name in reversed(names):
            if self.commit is None:
                raw = (self.root / log / name).read_bytes()
            else:
                got = cat_batch(self.root, [f"{self.commit}:{log}/{name}"])[0]
                raw = got[1] if got else b""
            try:
                header = header_of(raw, name)
            except Refused:
                break
            if header.last < seq:
                break
            lines = split_lines(raw[header.size:])[0][max(0, seq - header.first):]
            parts.append(b"".join(line + b"\n" for line in lines))
            if header.first <= seq:
                break
        return b"".join(reversed(parts))


    @property
    def has_workbench(self) -> bool:
        return any(v is not None for v in self.files.values())

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "commit": self.commit, "workbench": self.has_workbench}


def aligned_logs(old: Side, new: Side) -> tuple[bytes | None, bytes | None]:
    """The two sides' events.jsonl from the same first event: a side sealed since the other (its events.jsonl
    begins later, or is empty) gets its sealed events from there put back in front, so a seal between two
    revisions reads as what it is — nothing removed — and the events appended since are the ones shown."""
    from workbench.model.jsonl import loads_record

    if old.seq is not None and new.seq is not None and old.log_range is not None and new.log_range is not None:
        # two points of one SQLite log: only the lines after the older one differ
        shared = min(old.seq, new.seq)
        return old.log_range(shared, old.seq), new.log_range(shared, new.seq)
    raw = [old.files.get("events.jsonl"), new.files.get("events.jsonl")]

    def first_seq(data: bytes | None) -> int | None:
        if not data or b"\n" not in data:
            return None
        event = loads_record(data[:data.index(b"\n")])
        return event.get("seq") if event and isinstance(event.get("seq"), int) else None

    firsts = [first_seq(r) for r in raw]
    known = [f for f in firsts if f is not None]
    if not known or (len(known) == 2 and known[0] == known[1]):
        return raw[0], raw[1]
    start = min(known)
    out = []
    for side, data, first in zip((old, new), raw, firsts, strict=True):
        if first == start or data is None:
            out.append(data)
            continue
        out.append(side.sealed_from(start) + data)
    return out[0], out[1]


def read_worktree(root: Path) -> Side:
    base = root / WB_DIR
    files: dict[str, bytes | None] = {}
    for name in FILES:
        try:
            files[name] = (base / name).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            files[name] = None
    return Side(WORKTREE, None, files, root)


def read_revs(root: Path, revs: list[tuple[str, bool]]) -> list[Side]:
    """Each (rev, optional) as a Side, all in one cat-file call. An optional rev that does not resolve (HEAD
    before the first commit) is an empty side; any other raises NotFound."""
    specs: list[str] = []
    for rev, _optional in revs:
        if not rev or "\n" in rev or rev.strip() != rev:
            raise NotFound(f"unknown revision '{rev}'")
        specs.append(f"{rev}^{{commit}}")
        specs.extend(f"{rev}:{WB_DIR}/{name}" for name in FILES)
    found = cat_batch(root, specs)
    sides = []
    step = 1 + len(FILES)
    for i, (rev, optional) in enumerate(revs):
        commit, *blobs = found[i * step:(i + 1) * step]
        if commit is None:
            if optional:
                sides.append(Side(rev, None, {name: None for name in FILES}))
                continue
            raise NotFound(f"unknown revision '{rev}'")
        files = {name: (blob[1] if blob else None) for name, blob in zip(FILES, blobs, strict=True)}
        sides.append(Side(rev, commit[0], files, root))
    return sides


def merge_base(root: Path, a: str, b: str) -> Side:
    first, second = read_revs(root, [(a, False), (b, False)])
    proc = run_git(root, "merge-base", str(first.commit), str(second.commit), check=False)
    base = proc.stdout.decode().strip()
    if proc.returncode != 0 or not base:
        raise NotFound(f"'{a}' and '{b}' have no merge base")
    side = read_revs(root, [(base, False)])[0]
    side.label = f"merge-base({a}, {b})"
    return side


def resolve(root: Path, revs: list[str], default_base: str = "HEAD") -> tuple[Side, Side]:
    """The (old, new) sides of `wb diff [REV [REV]]`, read as `git diff` reads its revisions:
    none → default_base vs the working tree; one → it vs the working tree; two → the first vs the second;
    `A..B` → A vs B; `A...B` → merge-base(A, B) vs B (an empty end of a range means HEAD)."""
    if len(revs) > 2:
        raise UsageError("wb diff takes at most two revisions")
    if not revs:
        return read_revs(root, [(default_base, True)])[0], read_worktree(root)
    if len(revs) == 1 and "..." in revs[0]:
        a, _, b = revs[0].partition("...")
        a, b = a or "HEAD", b or "HEAD"
        return merge_base(root, a, b), read_revs(root, [(b, False)])[0]
    if len(revs) == 1 and ".." in revs[0]:
        a, _, b = revs[0].partition("..")
        old, new = read_revs(root, [(a or "HEAD", False), (b or "HEAD", False)])
        return old, new
    if len(revs) == 1:
        return read_revs(root, [(revs[0], False)])[0], read_worktree(root)
    if any(".." in r for r in revs):
        raise UsageError("a range (A..B or A...B) takes no second revision")
    old, new = read_revs(root, [(revs[0], False), (revs[1], False)])
    return old, new
