"""`wb log`: the event log, filtered, as text or JSON."""

from __future__ import annotations

import json

from tests.person import as_person

EVENT_KEYS = {"schema_version", "seq", "id", "ts", "type", "actor", "via", "tty", "session", "payload", "prev"}


def test_log_json(bench, repo, wb):
    bench.add_task("Parser")
    bench.start_task("T-001")
    bench.note("a decision")
    r = wb(repo, "log", "--json")
    assert r.returncode == 0, r.stderr
    events = json.loads(r.stdout)
    assert [e["seq"] for e in events] == [1, 2, 3, 4]
    assert [e["type"] for e in events] == ["workbench.init", "task.add", "task.start", "note.add"]
    for e in events:
        assert EVENT_KEYS <= set(e) <= EVENT_KEYS | {"more", "proof"}
    assert events[0]["prev"] is None and events[0]["actor"] == "wb"
    assert all(e["actor"] == "agent" for e in events[1:])
    assert len({e["id"] for e in events}) == 4
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)
    assert events[1]["payload"]["task"]["title"] == "Parser"
    assert events[3]["payload"] == {"text": "a decision"}


def test_log_filters(bench, repo, wb):
    bench.add_task("Parser")
    bench.start_task("T-001")
    assert as_person(repo, "note", "a decision").returncode == 0  # a person at a terminal
    family = json.loads(wb(repo, "log", "--json", "--type", "task").stdout)
    assert [e["type"] for e in family] == ["task.add", "task.start"]
    exact = json.loads(wb(repo, "log", "--json", "--type", "note.add").stdout)
    assert len(exact) == 1 and exact[0]["actor"] == "human"
    last = json.loads(wb(repo, "log", "--json", "-n", "2").stdout)
    assert [e["seq"] for e in last] == [3, 4]
    assert json.loads(wb(repo, "log", "--json", "--session", "nope").stdout) == []


def test_log_text(bench, repo, wb):
    bench.add_task("Parser")
    r = wb(repo, "log")
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].split()[0] == "#1" and "workbench.init" in lines[0]
    assert lines[1].split()[0] == "#2" and "task.add" in lines[1] and "T-001 Parser" in lines[1]
    r = wb(repo, "log", "--type", "nothing.here")
    assert r.stdout.strip() == "no events match"


def test_log_shows_the_newest_and_says_how_many_more(bench, repo, wb):
    for n in range(1, 56):
        bench.note(f"decision {n}")
    bench.add_task("Parser")
    shown = wb(repo, "log", "--type", "note").stdout.splitlines()
    assert shown[0] == "(5 earlier matching events not shown: wb log --type note --all shows them, -n N the last N)"
    assert len(shown) == 51 and "decision 6" in shown[1] and "decision 55" in shown[-1]  # the newest 50, in order
    every = wb(repo, "log", "--type", "note", "--all").stdout.splitlines()
    assert len(every) == 55 and every[-50:] == shown[1:]  # the same lines, the earlier ones before them
    last = wb(repo, "log", "-n", "2").stdout.splitlines()
    assert last[0].startswith("(55 earlier matching events not shown: wb log --all") and len(last) == 3
    assert "T-001 Parser" in last[-1]
    assert len(json.loads(wb(repo, "log", "--type", "note", "--json").stdout)) == 55  # --json: every one
    assert [e["payload"]["text"] for e in json.loads(wb(repo, "log", "--json", "--type", "note", "-n", "1").stdout)] \
        == ["decision 55"]
    assert len(wb(repo, "log", "--type", "task").stdout.splitlines()) == 1  # all shown: nothing said
    assert wb(repo, "log", "--all", "-n", "3").returncode == 2


def test_log_columns_line_up_whoever_acted(bench, repo, wb):
    """Issue 31: `wb` (wb's own), `agent (api)` and a person's events in one listing: the type and summary
    columns start at the same place on every line."""
    bench.add_task("Parser")
    assert as_person(repo, "note", "a decision").returncode == 0
    bench.start_task("T-001")
    lines = wb(repo, "log").stdout.splitlines()
    assert len(lines) == 4
    starts = {line.index(kind) for line, kind in zip(lines, ["workbench.init", "task.add", "note.add",
                                                              "task.start"], strict=True)}
    assert len(starts) == 1, lines
    summaries = {line.index(text) for line, text in zip(lines[1:], ["T-001 Parser", "a decision", "T-001"],
                                                        strict=True)}
    assert len(summaries) == 1, lines
