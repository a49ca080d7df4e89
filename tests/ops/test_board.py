"""ops/board.py: what a card says of a task — ready, waits, claim, scope, forced or overridden done, and the
optional keys (labels, priority, assignee, parent) read when a task has them — and which events name a task."""

from __future__ import annotations

from tests.conftest import files_only
from workbench.ops.board import card, columns, names_task

BASE = {"kind": "build", "owner": "builder", "acceptance": [], "depends_on": [], "created_at": "x",
        "updated_at": "x"}


def task(tid: str, status: str = "todo", **kw: object) -> dict[str, object]:
    return {**BASE, "id": tid, "title": f"task {tid}", "status": status, **kw}


def test_cards_carry_every_marker_a_reviewer_looks_for() -> None:
    tasks = [
        task("T-001", "done", forced_done=True, proof={"event": 3, "head": None, "forced": True, "checks": [],
                                                      "override": "a person said so"}),
        task("T-002", depends_on=["T-001"], labels=["ui"], priority=1, assignee="ann", parent="T-001"),
        task("T-003", depends_on=["T-002"], claim={"agent": "bot", "since": "2026-01-01T00:00:00Z",
                                                   "until": "2999-01-01T00:00:00Z", "lease_s": 60}),
        task("T-004", "in_progress", scope={"allowed": ["src/**"]},
             claim={"agent": "old", "since": "2020-01-01T00:00:00Z", "until": "2020-01-01T00:01:00Z",
                    "lease_s": 60}),
    ]
    board = {"tasks": tasks}
    data = columns(tasks, board, now="2026-06-01T00:00:00Z")
    by_id = {c["id"]: c for col in data["columns"] for c in col["tasks"]}
    assert by_id["T-001"]["forced"] and by_id["T-001"]["override"] == "a person said so"
    assert by_id["T-002"]["ready"] and by_id["T-002"]["labels"] == ["ui"] and by_id["T-002"]["priority"] == 1
    assert by_id["T-002"]["assignee"] == "ann" and by_id["T-002"]["parent"] == "T-001"
    assert not by_id["T-003"]["ready"] and by_id["T-003"]["waiting_on"] == ["T-002 (todo)"]
    assert by_id["T-003"]["claim"] == {"agent": "bot", "until": "2999-01-01T00:00:00Z"}
    assert by_id["T-004"]["claim"] is None  # the lease ran out
    assert by_id["T-004"]["scope"] == {"allowed": ["src/**"]}
    assert "labels" not in by_id["T-003"]  # a board without the optional keys is shown the same
    assert [t["id"] for c in columns(tasks, board, label="ui")["columns"] for t in c["tasks"]] == ["T-002"]
    assert [t["id"] for c in columns(tasks, board, owner="ann")["columns"] for t in c["tasks"]] == ["T-002"]
    assert card(task("T-009"), [], {"tasks": []}, set(), "now")["ready"] is False


def test_the_events_that_name_a_task() -> None:
    assert names_task({"type": "task.add", "payload": {"task": {"id": "T-001"}}}, "T-001")
    assert names_task({"type": "task.start", "payload": {"id": "T-001"}}, "T-001")
    assert names_task({"type": "human.edit", "payload": {"file": "board.json", "upsert": [{"id": "T-001"}]}},
                      "T-001")
    assert names_task({"type": "human.edit", "payload": {"file": "board.json", "remove": ["T-001"]}}, "T-001")
    assert not names_task({"type": "task.start", "payload": {"id": "T-002"}}, "T-001")
    assert not names_task({"type": "note.add", "payload": {"text": "T-001"}}, "T-001")


@files_only  # `wb run` / sealed segments
def test_a_tasks_history_reads_only_the_sealed_segments_that_name_it(tmp_path, monkeypatch) -> None:
    """`wb board`'s history key: the first look indexes each sealed segment's task ids (kept per machine by the
    segment's digest); every later look, for any task, reads only the segments that name the task and the
    unsealed tail, never the whole log — and finds what reading every event finds."""
    from tests.conftest import run_git, run_wb
    from workbench.api import Bench
    from workbench.ops.board import history, names_task
    from workbench.store.eventlog import EventLog

    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    run_git(repo, "commit", "-q", "--allow-empty", "-m", "initial")
    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + "log:\n  segment_events: 5\n")
    bench = Bench.open(repo)
    first = bench.add_task("the first task")["id"]
    for i in range(16):
        bench.note(f"note {i}")
    last = bench.add_task("a later task")["id"]
    for i in range(6):
        bench.note(f"more {i}")
    chain = bench.wb.log.sealed_chain()
    assert len(chain) >= 4

    read: list[str] = []
    real = EventLog.sealed_events

    def counted(self: EventLog, header: object) -> object:
        read.append(header.name)  # type: ignore[attr-defined]
        return real(self, header)  # type: ignore[arg-type]

    monkeypatch.setattr(EventLog, "sealed_events", counted)
    everything = [e for _line, e in Bench.open(repo).wb.log.iter_all()]
    read.clear()
    for task_id in (first, last, first):
        wb = Bench.open(repo).wb
        assert history(wb, task_id) == [e for e in everything if names_task(e, task_id)], task_id
    assert len(read) >= len(chain)  # the first look indexed every segment
    read.clear()
    for task_id in (first, last):
        got = Bench.open(repo).task_history(task_id)
        assert got and got[0]["type"] == "task.add"
        naming = [h.name for h in chain if any(h.first <= e["seq"] <= h.last for e in got)]
        assert read == naming, (task_id, read, naming)  # only the segments that name it, not all of them
        assert len(read) <= 2 < len(chain)
        read.clear()
    index = repo / ".git" / "wb" / "cache" / "taskindex.json"
    assert index.exists()
    index.write_text("{not json")  # a broken cache is read as absent: every segment read and indexed again
    assert history(Bench.open(repo).wb, last) == [e for e in everything if names_task(e, last)]
    assert len(read) >= len(chain) and index.read_text().startswith("{")


def test_what_the_board_watches_changes_with_every_write_of_another_process(bench, repo) -> None:  # type: ignore[no-untyped-def]
    """`wb board` and `wb serve` read again when the stamp of the watched files changes: the snapshots and the
    log on files, the database and its write-ahead log on SQLite — a write by any process moves it."""
    from tests.conftest import spawn_wb
    from workbench.ops.board import stamp, watched

    paths = watched(bench.wb)
    assert all(p.parent.exists() for p in paths)
    for title in ("one", "two"):
        before = stamp(paths)
        assert spawn_wb(repo, "task", "add", title).returncode == 0
        assert stamp(paths) != before, title
    quiet = stamp(paths)
    assert spawn_wb(repo, "status").returncode == 0  # a reader writes nothing
    assert stamp(paths) == quiet
