"""logcheck's first check of the sealed log folds each segment of valid events by its fold-relevant events (of a
run of events no reducer reads, only the last; the log's first always): that fold is the fold of every event."""

from __future__ import annotations

from typing import Any

from tests.conftest import about_files
from workbench.model import reducer

pytestmark = about_files  # the sealed segments of events.jsonl (SQLite keeps every event in one table)


def test_the_first_checks_fold_is_the_whole_fold(tmp_path: Any) -> None:
    """logcheck folds a segment of valid events by its fold-relevant ones (of a run of events no reducer reads,
    the last; the log's first always): cut into segments anywhere, that fold is the fold of every event."""
    from tests.store.test_cold_verdict import sealed_workbench
    from workbench.store.logcheck import _fold_relevant
    from workbench.store.workbench import Workbench

    repo = sealed_workbench(tmp_path / "repo")
    pairs = list(Workbench(repo).log.iter_all())
    assert sum(reducer.stamp_only(e["type"]) for _line, e in pairs) > len(pairs) // 2
    whole = reducer.fold_more(None, (e for _line, e in pairs))
    assert whole is not None
    for size in (1, 2, 3, 7, 20, len(pairs)):
        docs = None
        for at in range(0, len(pairs), size):
            docs = reducer.fold_more(docs, _fold_relevant(pairs[at:at + size], docs is None))
        assert docs is not None
        assert (docs.state, docs.body, docs.board, docs.sealed) == (whole.state, whole.body, whole.board,
                                                                    whole.sealed), size
