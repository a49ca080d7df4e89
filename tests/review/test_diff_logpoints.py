"""`wb diff` between points of the event log (`@SEQ`, `@-N`, `now`): the history a SQLite workbench has, and on
files the same fold of the log. Every format works from either backend; on files a log point gives the diff the
commits of those events give; on SQLite `wb diff` alone shows what the latest session changed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_wb
from workbench.api import Bench, init

from .helpers import FILES, diff_json, head, schema_problems


def _advance(bench: Bench) -> None:
    """seq 2: a task added; 3-5: started, finished, a note (seq 1 is workbench.init)."""
    bench.add_task("Parse the config", acceptance=["true"])
    bench.start_task("T-001")
    bench.done_task("T-001")
    bench.note("Chose a hand-written parser: the grammar has four rules.")


def _meaning(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in ("old", "new")}


def test_two_points_of_the_log_show_what_the_events_between_them_changed(bench, repo, wb):
    _advance(bench)
    data = diff_json(wb, repo, "@2", "@5")
    assert data["old"] == {"label": "@2", "commit": None, "workbench": True}
    assert data["new"] == {"label": "@5", "commit": None, "workbench": True}
    [changed] = data["board"]["changed"]
    assert {"field": "status", "old": "todo", "new": "done"} in changed["changes"]
    assert [e["text"] for e in data["state"]["decision_log"]["added"]] == [
        "Chose a hand-written parser: the grammar has four rules."]
    ev = data["events"]
    assert ev["by_type"] == {"task.start": 1, "task.done": 1, "note.add": 1}
    assert (ev["old_last_seq"], ev["new_last_seq"], ev["first_seq"], ev["last_seq"]) == (2, 5, 3, 5)
    assert [d["task"] for d in data["done"]] == ["T-001"]
    assert data["config"]["fields"] == []  # the log does not record config.yaml: a log point compares none
    # the same points, named from the end and as a range; the last point against now: nothing
    assert _meaning(diff_json(wb, repo, "@-3..@-0")) == _meaning(data)
    assert _meaning(diff_json(wb, repo, "@2..")) == _meaning(data)
    assert diff_json(wb, repo, "@5")["changed"] is False
    back = diff_json(wb, repo, "@5", "@2")
    assert back["events"]["removed"] == 3 and back["board"]["changed"]


def test_a_point_is_what_the_commit_of_that_event_holds_on_files(bench, repo, wb):
    """On files the fold of the log to seq N is the workbench wb committed with event N."""
    if not FILES:
        return  # no commits to compare with: the test above is the SQLite one
    bench.add_task("Parse the config", acceptance=["true"])
    a = head(repo)
    bench.start_task("T-001")
    bench.done_task("T-001")
    bench.note("Chose a parser.")
    b = head(repo)
    assert _meaning(diff_json(wb, repo, "@2", "@5")) == _meaning(diff_json(wb, repo, a, b))
    assert _meaning(diff_json(wb, repo, "@2", b)) == _meaning(diff_json(wb, repo, a, b))  # mixed, either way
    assert _meaning(diff_json(wb, repo, "@0", "@5"))["board"]["added"][0]["id"] == "T-001"


def test_every_format_renders_a_diff_of_log_points(bench, repo, wb, tmp_path):
    _advance(bench)
    text = wb(repo, "diff", "@2", "@5")
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0] == "wb diff @2 → @5"
    assert "  ~ T-001 Parse the config" in text.stdout
    md = wb(repo, "diff", "@2", "@5", "--format", "markdown").stdout
    assert md.startswith("## wb diff: @2 → @5")
    assert "| T-001 | Parse the config | `status` | `todo` | `done` |" in md
    html = wb(repo, "diff", "@2", "@5", "--format", "html")
    assert html.returncode == 0 and "<title>wb diff @2 → @5</title>" in html.stdout
    assert "<script" not in html.stdout
    out = tmp_path / "review.html"
    assert wb(repo, "diff", "@2", "@5", "--format", "html", "-o", str(out)).returncode == 0
    assert out.read_text(encoding="utf-8") == html.stdout
    assert schema_problems(json.loads(wb(repo, "diff", "@0", "--format", "json").stdout)) == []


def test_a_point_the_log_does_not_hold_and_a_merge_base_of_points_are_one_line(bench, repo, wb, error_line):
    _advance(bench)
    r = wb(repo, "diff", "@9")
    assert r.returncode == 1 and r.stdout == ""
    assert error_line(r.stderr) == ("wb: '@9': the event log holds seq 1 to 5; name a point from @0 to @5 (or "
                                    "@-N: N events before the last)")
    assert wb(repo, "diff", "@-6").returncode == 1
    r = wb(repo, "diff", "@1...@3")
    assert r.returncode == 2 and "A...B" in error_line(r.stderr)


def _sqlite(path: Path) -> Bench:
    init(path, backend="sqlite", no_git=True)
    return Bench.open(path)


def test_on_sqlite_wb_diff_alone_shows_what_the_latest_session_changed(tmp_path, wb):
    """No git history to compare with: the default is the log just before the latest session's first event,
    against now (the whole log when no event names a session)."""
    path = tmp_path / "scratch"
    path.mkdir()
    bench = _sqlite(path)
    bench.add_task("Before any session")
    whole = diff_json(wb, path)
    assert whole["old"]["label"] == "@0 (before the first event)" and whole["new"]["label"] == "now"
    assert [t["id"] for t in whole["board"]["added"]] == ["T-001"]
    for session, text in (("S-1", "in the first session"), ("S-2", "in the second session")):
        with bench.wb.transaction(actor="agent", session=session) as tx:
            tx.emit("note.add", {"text": text})
    bench.add_task("After, outside any session")  # events with no session do not end it
    data = diff_json(wb, path)
    assert data["old"]["label"] == "@3 (the start of session S-2)"  # S-2 began with seq 4
    assert [e["text"] for e in data["state"]["decision_log"]["added"]] == ["in the second session"]
    assert [t["id"] for t in data["board"]["added"]] == ["T-002"]
    assert data["events"]["by_type"] == {"note.add": 1, "task.add": 1}


def test_on_sqlite_a_git_revision_is_refused_in_one_line_even_in_a_repository(repo, wb, error_line):
    init(repo, backend="sqlite")
    Bench.open(repo).add_task("First")
    r = wb(repo, "diff", "HEAD")
    assert r.returncode == 2 and r.stdout == ""
    line = error_line(r.stderr)
    assert line.startswith("wb: 'HEAD': use `wb diff @-1`") and "has no git history of its state" in line
    data = diff_json(wb, repo, "@1", "now")
    assert [t["id"] for t in data["board"]["added"]] == ["T-001"]


def test_the_sqlite_side_now_is_the_database_as_it_is(tmp_path):
    """`now` reads the stored snapshots, not a fold: a snapshot damaged by hand shows, as the working tree's
    files show on files (wb doctor says what is wrong)."""
    from tests.damage import write_board

    path = tmp_path / "scratch"
    path.mkdir()
    bench = _sqlite(path)
    bench.add_task("First")
    board = json.loads(run_wb(path, "task", "list", "--json").stdout)
    assert board
    write_board(path, b'{"schema_version": 2, "tasks": [')
    r = run_wb(path, "diff", "@2", "--format", "json")
    assert r.returncode == 0
    data = json.loads(r.stdout)
    assert data["board"]["removed"][0]["id"] == "T-001"  # the unreadable side compares as absent
    assert "board.json:1: broken JSON" in data["warnings"][0]


def test_on_sqlite_a_point_folded_from_a_checkpoint_is_the_fold_from_the_first_event(tmp_path, wb):
    """Issue 33: a SQLite write past each 1,000 events keeps the snapshots at its seq, and `wb diff @SEQ` folds
    from the nearest of them rather than from the first event, and reads only the event lines between the two
    sides (at 50,000 events: 0.54 s of CPU and 92 MiB → 0.15 s and 58 MiB). What it shows is what the whole fold
    shows — across a checkpoint, between two, backwards, from @0, against now, a task changed on both sides."""
    path = tmp_path / "scratch"
    path.mkdir()
    bench = _sqlite(path)
    bench.add_task("Parse the config")
    for batch in range(12):  # 2,400 notes, 200 to a write, the task started and blocked among them
        with bench.wb.transaction(actor="agent") as tx:
            for i in range(200):
                tx.emit("note.add", {"text": f"note {batch}.{i}"})
        if batch == 4:
            bench.start_task("T-001")
        if batch == 9:
            bench.block_task("T-001", "waits for the schema")
    storage = bench.wb.storage  # type: ignore[attr-defined]
    kept = storage.checkpoints()
    assert len(kept) == 2 and 1000 <= kept[0] < 1300 and 2000 <= kept[1] < 2300, kept
    last = bench.wb.log.tail().seq
    ranges = [["@-1"], [f"@{kept[0] - 1}..@{kept[0] + 1}"], ["@1500"], [f"@{last - 100}..@1100"], ["@0..@-0"],
              [f"@{kept[1]}..now"], ["@3", f"@{kept[1] + 5}"]]
    folded_from_checkpoints = [diff_json(wb, path, *r) for r in ranges]
    assert folded_from_checkpoints[4]["events"]["appended"] == last
    # a point inside a write (the last 200 notes were one) stands where that write began, as on files
    assert (folded_from_checkpoints[0]["events"]["old_last_seq"], folded_from_checkpoints[0]["events"]["appended"]) \
        == (last - 200, 200)
    assert any(c["changes"] for c in folded_from_checkpoints[3]["board"]["changed"])  # blocked → in progress
    with storage.conn:
        storage.conn.execute("DELETE FROM snapshots WHERE name GLOB 'checkpoint/*'")
    assert storage.checkpoints() == []
    assert [diff_json(wb, path, *r) for r in ranges] == folded_from_checkpoints
