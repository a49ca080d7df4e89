"""The view of a big JSONL file (events.jsonl, calls.jsonl) rendered once, then only the lines a version adds.

git runs the textconv once per side of each changed file of each commit it shows: for events.jsonl that was
the whole log, rendered from scratch, twice a commit. But the versions of an append-only log share their
beginning. So the last view rendered is kept under the repository's git directory (`wb/textconv/KIND`, never
in the work tree; trusted as git's own textconv cache in refs/notes/textconv is): the file it was rendered
from, the view, and where each line ends in both; a file whose lengths do not add up is not used. A version
to render is compared with the kept file byte for byte; the lines they share are taken from the kept view,
and only the rest is rendered (a line's view depends on that line and its number alone). The result is the
same text as a render from scratch, which the tests check.

git's own `diff.<driver>.cachetextconv` (wb init sets it) keeps each blob's view once rendered; this keeps
the first render of a new blob from costing the whole log.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

MIN_BYTES = 256 * 1024  # below this a render from scratch is as fast as reading the cache
KEEP_AFTER = 500  # lines rendered past the kept ones before the kept file is rewritten (it is the log's size)
_MAGIC = b"wb-textconv-cache 1"


class Kept:
    """The last render: `raw` (complete lines only), `view` (UTF-8), and per line where it ends in each."""

    __slots__ = ("raw", "view", "raw_ends", "view_ends")

    def __init__(self, raw: bytes, view: bytes, raw_ends: array[int], view_ends: array[int]) -> None:
        self.raw, self.view, self.raw_ends, self.view_ends = raw, view, raw_ends, view_ends


def _read(path: Path) -> Kept | None:
    try:
        with open(path, "rb") as fh:
            magic, lines, raw_len, view_len = fh.readline(200).rstrip(b"\n").rsplit(b" ", 3)
            n, raw_n, view_n = int(lines), int(raw_len), int(view_len)
            if magic != _MAGIC or min(n, raw_n, view_n) < 0:
                return None
            raw_ends, view_ends = array("q"), array("q")
            raw_ends.frombytes(fh.read(8 * n))
            view_ends.frombytes(fh.read(8 * n))
            raw, view = fh.read(raw_n), fh.read(view_n)
            if fh.read(1):
                return None
    except (OSError, ValueError):
        return None
    if len(raw_ends) != n or len(view_ends) != n or len(raw) != raw_n or len(view) != view_n:
        return None
    if (raw_ends[-1] if n else 0) != raw_n or (view_ends[-1] if n else 0) != view_n:
        return None
    return Kept(raw, view, raw_ends, view_ends)


def _write(path: Path, kept: Kept) -> None:
    from workbench.store.atomic import atomic_write

    head = b"%s %d %d %d\n" % (_MAGIC, len(kept.raw_ends), len(kept.raw), len(kept.view))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, head + kept.raw_ends.tobytes() + kept.view_ends.tobytes() + kept.raw + kept.view,
                     durable=False)
    except OSError:
        pass  # a cache that cannot be written is a slower render next time, nothing worse


def _shared(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share (compared a block at a time, the blocks shrinking at the end)."""
    if b.startswith(a) or a.startswith(b):  # the usual case: one version of the log extends the other
        return min(len(a), len(b))
    n = min(len(a), len(b))
    at, step = 0, 1 << 20
    while at < n:
        end = min(n, at + step)
        if a[at:end] == b[at:end]:
            at = end
        elif step == 1:
            return at
        else:
            step = max(1, step // 32)
    return at


def render(raw: bytes, path: Path, one_line: Callable[[bytes, int], str]) -> str:
    """The view of the complete lines of `raw`, each `one_line(line, number)` (its lines joined, each ending
    in a newline), the lines `raw` shares with the kept file taken from the kept view. Keeps this one when
    it adds more than KEEP_AFTER lines to what was kept (a version that is a beginning of the kept file, or
    a few lines longer, leaves it as it is)."""
    complete = raw[:raw.rfind(b"\n") + 1]
    kept = _read(path)
    if kept is None:
        kept = Kept(b"", b"", array("q"), array("q"))
    same = bisect_right(kept.raw_ends, _shared(kept.raw, complete))  # the kept lines wholly shared
    raw_at = kept.raw_ends[same - 1] if same else 0
    view_at = kept.view_ends[same - 1] if same else 0
    raw_ends, view_ends = kept.raw_ends[:same], kept.view_ends[:same]
    parts = [kept.view[:view_at]]
    size = view_at
    number = same
    while raw_at < len(complete):
        nl = complete.index(b"\n", raw_at)
        number += 1
        text = one_line(complete[raw_at:nl], number)
        piece = (text + "\n").encode("utf-8", errors="surrogateescape") if text else b""
        parts.append(piece)
        size += len(piece)
        raw_at = nl + 1
        raw_ends.append(raw_at)
        view_ends.append(size)
    view = b"".join(parts)
    if number - same > (KEEP_AFTER if same else 0):  # a few new lines cost less to render again than to keep
        _write(path, Kept(complete, view, raw_ends, view_ends))
    return view.decode("utf-8", errors="surrogateescape")
