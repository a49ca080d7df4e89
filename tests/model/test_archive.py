"""model/archive.py, pure: what is due, the fold of board.archive, and the void rule that keeps merges lossless."""

from __future__ import annotations

import copy
from typing import Any

from workbench.model import archive


def _board(statuses: str) -> dict[str, Any]:
    tasks = [{"id": f"T-{i:03d}", "kind": "build", "title": f"t{i}", "status": s, "owner": "builder",
              "acceptance": [], "depends_on": [], "created_at": "2026-01-01T00:00:00Z",
              "updated_at": "2026-01-01T00:00:00Z"}
             for i, s in enumerate(statuses.split(), start=1)]
    return {"schema_version": 2, "last_event": 9, "tasks": tasks}


def test_the_oldest_finished_tasks_are_due_in_chunks_past_keep() -> None:
    board = _board("done todo done cancelled done done todo done")  # 6 finished
    assert archive.plan(board, keep=4, chunk=3) == []  # 6 < 4 + 3
    (due,) = archive.plan(board, keep=2, chunk=3)
    assert due["ids"] == ["T-001", "T-003", "T-004"]
    assert due["file"] == f"archive/T-000001_T-000004_{due['sha256'][:12]}.json"
    assert archive.plan(copy.deepcopy(board), keep=2, chunk=3) == [due]  # deterministic
    assert len(archive.plan(board, keep=0, chunk=3)) == 2
    assert archive.plan(board, keep=0, chunk=0) == []


def test_the_fold_moves_exactly_what_was_sealed_and_records_ranges() -> None:
    board = _board("done todo done cancelled done done todo done")
    (due,) = archive.plan(board, keep=2, chunk=3)
    file, raw = archive.fold_archive(board, due)  # type: ignore[misc]
    assert file == due["file"] and archive.digest(raw) == due["sha256"]
    assert [t["id"] for t in board["tasks"]] == ["T-002", "T-005", "T-006", "T-007", "T-008"]
    (ref,) = board["archive"]
    assert ref["ranges"] == [[1, 1], [3, 4]] and ref["cancelled"] == ["T-004"]
    assert ref["first"] == "T-001" and ref["last"] == "T-004" and ref["tasks"] == 3
    assert archive.archived_done(board, "T-001") and archive.archived_done(board, "T-003")
    assert not archive.archived_done(board, "T-004")  # cancelled: a dependency on it is not met
    assert not archive.archived_done(board, "T-002") and archive.highest_archived(board) == 4


def test_a_seal_whose_tasks_changed_since_is_void() -> None:
    board = _board("done done done done")
    (due,) = archive.plan(board, keep=1, chunk=3)
    changed = copy.deepcopy(board)
    changed["tasks"][1]["title"] = "renamed on the other branch"
    before = copy.deepcopy(changed)
    assert archive.fold_archive(changed, due) is None and changed == before
    reopened = copy.deepcopy(board)
    reopened["tasks"][0]["status"] = "todo"
    assert archive.fold_archive(reopened, due) is None
    sealed_elsewhere = copy.deepcopy(board)
    sealed_elsewhere["tasks"] = sealed_elsewhere["tasks"][1:]
    assert archive.fold_archive(sealed_elsewhere, due) is None


def test_segment_names_sort_in_id_order_and_a_name_from_before_still_folds() -> None:
    board = _board(" ".join(["done"] * 12))
    low = archive.segment_file(board["tasks"][:3], "a" * 64)
    high = archive.segment_file([{**board["tasks"][0], "id": "T-1001"}, {**board["tasks"][1], "id": "T-1250"}],
                                "b" * 64)
    assert low < high and low.startswith("archive/T-000001_T-000003_")  # 250 < 1001 sorts so too
    assert archive.segment_file([{"id": "T-250"}], "c" * 64) < high
    # a board.archive recorded before the names were padded to 6 digits folds as it did
    (due,) = archive.plan(copy.deepcopy(board), keep=9, chunk=3)
    old = {**due, "file": archive.segment_file(
        [t for t in board["tasks"] if t["id"] in due["ids"]], due["sha256"], 3)}
    assert old["file"].startswith("archive/T-001_T-003_")
    moved = archive.fold_archive(board, old)
    assert moved is not None and moved[0] == old["file"] and board["archive"][0]["file"] == old["file"]
