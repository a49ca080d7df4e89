"""Progress of long work (replay, validate, doctor, migrate), reported to the caller's `progress(done, total)`.

The core never draws: the CLI passes a callback that does (workbench/cli/output.py). Reports come every
EVERY items, so following progress costs nothing measurable.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int], None]
EVERY = 5000  # items (log lines, events) between two reports


def tick(progress: Progress | None, done: int, total: int) -> None:
    """Report `done` of `total` when `done` is a multiple of EVERY (0 included)."""
    if progress is not None and done % EVERY == 0:
        progress(done, total)


def share(progress: Progress | None, before: int, weight: int, whole: int) -> Progress | None:
    """A callback for one pass of several, reporting to `progress` as its share of all of them: `before` and
    `weight` are the units of the passes before it and of itself, out of `whole`."""
    if progress is None:
        return None
    outer = progress

    def report(done: int, total: int) -> None:
        outer(before * total + weight * done, whole * total)
    return report


def advance(progress: Progress | None, start: int, end: int, total: int) -> None:
    """Report, as `tick` would have item by item, the multiples of EVERY in [start, end): a block of items
    taken at once (a sealed log segment trusted by its digest)."""
    if progress is None:
        return
    for done in range(-(-start // EVERY) * EVERY, end, EVERY):
        progress(done, total)
