"""ops/eventlist.py: the newest N events read from the end, and the earlier matches counted from their bytes."""

from __future__ import annotations

import itertools
import json

import pytest

from tests.conftest import about_files
from workbench.errors import Refused
from workbench.model.jsonl import encode
from workbench.ops.eventlist import every, matches, newest
from workbench.store.eventlog import EventLog, chain


def _log(tmp_path, payloads):
    events = [{"schema_version": 1, "id": f"e{i}", "ts": "2026-12-02T00:00:00Z", "type": t, "actor": "agent",
               "session": s, "payload": p} for i, (t, s, p) in enumerate(payloads)]
    from workbench.store.eventlog import Tail

    chain(events, Tail(0, None, 0, 0), batch=False)
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(encode(e) + b"\n" for e in events))
    return EventLog(path), events


TRICKY = [  # payloads naming `type` and `session` themselves, and strings that look like keys
    ("workbench.init", None, {}),
    ("task.add", None, {"task": {"id": "T-001", "type": "note.add", "session": "S1"}}),
    ("note.add", "S1", {"text": ',"type":"task.add","session":"S1"'}),
    ("tool.call", "S1", {"args": {"type": "task", "session": None}, "tool": "x"}),
    ("task", None, {"session": "S1"}),
    ("taskish.add", "S1", {}),
    ("task.done", "S2", {"id": "T-001"}),
    ("note.add", None, {"text": 'say "type'}),
    ("state.set", "S\u00e9\"1", {"changes": {"session": {"type": "task.add"}}}),
]


@pytest.mark.parametrize("type_,session", [("task", None), ("task.add", None), ("note", None), (None, "S1"),
                                          ("task", "S2"), ("note.add", None), (None, "S\u00e9\"1"),
                                          ("tool", "S1"), ("nothing", None)])
def test_the_earlier_count_is_what_reading_every_event_finds(tmp_path, type_, session):
    log, events = _log(tmp_path, TRICKY * 3)
    everything = [e for e in events if matches(e, type_, session)]
    for limit, checked in itertools.product((1, 2, 5, 100), (1, 4, 1000)):  # past `checked`: picked by bytes
        shown, earlier = newest(log, limit, type=type_, session=session, checked=checked)
        assert shown == everything[-limit:]
        assert earlier == max(0, len(everything) - limit)


def test_the_newest_are_checked_as_they_are_read(tmp_path):
    log, events = _log(tmp_path, TRICKY)
    lines = log.path.read_bytes().splitlines(keepends=True)
    edited = json.loads(lines[-2])
    edited["payload"] = {"text": "rewritten"}
    log.path.write_bytes(b"".join(lines[:-2]) + encode(edited) + b"\n" + lines[-1])
    with pytest.raises(Refused, match="hash chain broken"):
        newest(log, 3)
    assert newest(log, 1)[0][0]["seq"] == len(events)  # the newest alone needs no link to what it did not read


def test_a_torn_tail_is_left_out(tmp_path):
    log, events = _log(tmp_path, TRICKY)
    with open(log.path, "ab") as fh:
        fh.write(b'{"schema_version":1,"seq":')
    shown, earlier = newest(log, 2)
    assert [e["seq"] for e in shown] == [len(events) - 1, len(events)] and earlier == len(events) - 2


@pytest.mark.parametrize("type_", ["task", "task.add", "note", "taskish", "nothing"])
def test_a_log_whose_payloads_name_no_type_is_counted_from_its_bytes(tmp_path, type_):
    plain = [("workbench.init", None, {}), ("task.add", None, {"task": {"id": "T-001"}}),
             ("taskish.add", None, {"text": ',"type":"task.add"'}), ("note.add", None, {"text": "x"}),
             ("task.done", None, {"id": "T-001"}), ("task", "S1", {})]
    log, events = _log(tmp_path, plain * 4)
    everything = [e for e in events if matches(e, type_, None)]
    for limit in (1, 3):
        shown, earlier = newest(log, limit, type=type_)
        assert shown == everything[-limit:] and earlier == max(0, len(everything) - limit)


def _segmented_repo(tmp_path, segment_events):
    """A repository whose workbench seals its log every `segment_events` events."""
    from tests.conftest import run_git, run_wb

    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    run_git(repo, "commit", "-q", "--allow-empty", "-m", "initial")
    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + f"log:\n  segment_events: {segment_events}\n")
    return repo


@about_files  # events.jsonl's sealed segments in log/ (SQLite keeps every event in one table)
def test_the_earlier_count_across_sealed_segments_is_what_reading_every_event_finds(tmp_path):
    """With the log sealed in segments, the count of earlier matching events is the same — the first time (each
    wholly earlier segment counted and kept by its digest), and again from what was kept."""
    from workbench.api import Bench

    repo = _segmented_repo(tmp_path, segment_events=5)
    bench = Bench.open(repo)
    for i in range(40):
        if i % 3:
            bench.note(f"note {i}")
        else:
            bench.add_task(f"task {i}")
    assert len(list((repo / ".workbench" / "log").glob("*.jsonl"))) >= 6
    cache = repo / ".git" / "wb" / "cache" / "typecounts.json"
    for limit in (1, 3, 7, 12):
        for type_ in ("task", "note", "task.add", "workbench"):
            everything = every(Bench.open(repo).wb.log, type=type_)
            for _again in range(2):
                shown, earlier = Bench.open(repo).log_newest(limit, type=type_)
                assert shown == everything[-limit:], (limit, type_)
                assert earlier == max(0, len(everything) - limit), (limit, type_)
    assert cache.exists()


@about_files  # events.jsonl's sealed segments in log/ (SQLite keeps every event in one table)
def test_a_rare_type_far_back_is_found_past_segments_kept_as_holding_none_of_it(tmp_path):
    """The newest task events lie many segments back: the segments between, kept (by digest) as holding no task
    event, are passed over, and the page is the same with the cache, without it, and with a stale cache; a
    segment changed by hand is read, not passed over, and `wb validate` still refuses it."""
    from tests.conftest import run_wb
    from workbench.api import Bench

    repo = _segmented_repo(tmp_path, segment_events=4)
    bench = Bench.open(repo)
    for i in range(6):
        bench.add_task(f"task {i}")
    for i in range(30):
        bench.note(f"note {i}")
    cache = repo / ".git" / "wb" / "cache" / "typecounts.json"

    def _page(repo):  # only the newest 3 events read and checked: the rest looked at as bytes, as at 50k events
        wb = Bench.open(repo).wb
        return newest(wb.log, 4, type="task", checked=3, paths=wb.paths)

    everything = every(Bench.open(repo).wb.log, type="task")
    pages = []
    for _run in range(3):  # no cache; the cache it wrote; the cache again
        pages.append(_page(repo))
    assert cache.exists()
    assert all(page == (everything[-4:], len(everything) - 4) for page in pages)
    assert b":task" in cache.read_bytes()
    cache.unlink()
    assert _page(repo) == pages[0]
    # a note segment rewritten by hand to hold a task event: its digest no longer matches, so it is read
    segments = sorted((repo / ".workbench" / "log").glob("*.jsonl"))
    victim = segments[-2]
    raw = victim.read_bytes()
    tampered = raw.replace(b'"type":"note.add"', b'"type":"task.add"', 1)
    assert tampered != raw
    victim.write_bytes(tampered)
    shown, _earlier = _page(repo)
    assert any(e["type"] == "task.add" and e["seq"] > everything[-1]["seq"] for e in shown)
    assert run_wb(repo, "validate").returncode != 0
