"""events.jsonl: seq without gaps, a hash chain, torn tails and cut-short batches (CONTRACT §2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import about_files
from workbench.api import Bench
from workbench.errors import Refused
from workbench.model import ids
from workbench.model.jsonl import encode, line_hash
from workbench.store.eventlog import EventLog, chain


def event(type_: str = "note.add", **payload: object) -> dict:
    return {"schema_version": 1, "id": ids.new_id(), "ts": ids.utc_now(), "type": type_, "actor": "agent",
            "session": None, "payload": payload or {"text": "hello"}}


def fresh_log(tmp_path: Path, n: int) -> EventLog:
    log = EventLog(tmp_path / "events.jsonl")
    for i in range(n):
        log.append(chain([event(text=f"note {i}")], log.tail()), log.tail())
    return log


# -- the format ---------------------------------------------------------------------------------------------


def test_seq_and_hash_chain(tmp_path):
    log = fresh_log(tmp_path, 3)
    lines = log.path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    events = [json.loads(line) for line in lines[:-1]]
    assert [e["seq"] for e in events] == [1, 2, 3]
    assert events[0]["prev"] is None
    assert events[1]["prev"] == line_hash(lines[0])
    assert events[2]["prev"] == line_hash(lines[1])
    assert all("more" not in e for e in events)
    tail = log.tail()
    assert (tail.seq, tail.hash, tail.torn) == (3, line_hash(lines[2]), 0)
    assert tail.good_size == log.path.stat().st_size
    assert [e["seq"] for e in log.read_after(1)] == [2, 3]
    assert [e["seq"] for _line, e in log.iter_all()] == [1, 2, 3]


def test_a_batch_is_one_write_with_more_counts(tmp_path):
    log = fresh_log(tmp_path, 1)
    batch = chain([event(text="a"), event(text="b"), event(text="c")], log.tail())
    assert [e.get("more") for e in batch] == [2, 1, None]
    log.append(batch, log.tail())
    assert log.tail().seq == 4
    assert [e["seq"] for _l, e in log.iter_all()] == [1, 2, 3, 4]


def test_empty_log(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    assert log.tail().seq == 0 and log.tail().hash is None
    assert list(log.iter_all()) == []
    assert log.read_after(0) == []


# -- a torn last line ---------------------------------------------------------------------------------------------


def test_torn_last_line_is_ignored_on_read_and_dropped_on_append(tmp_path):
    log = fresh_log(tmp_path, 3)
    good = log.path.read_bytes()
    torn = encode(chain([event(text="never acknowledged")], log.tail())[0])[:-12]  # no newline: cut mid-write
    with open(log.path, "ab") as fh:
        fh.write(torn)

    tail = log.tail()
    assert (tail.seq, tail.good_size, tail.torn) == (3, len(good), len(torn))
    assert [e["seq"] for _l, e in log.iter_all()] == [1, 2, 3]
    assert log.read_after(0)[-1]["seq"] == 3

    new = chain([event(text="next")], tail)
    log.append(new, tail)
    data = log.path.read_bytes()
    assert data == good + encode(new[0]) + b"\n"
    assert b"never acknowledged" not in data
    assert [json.loads(line)["seq"] for line in data.splitlines()] == [1, 2, 3, 4]
    assert [e["payload"]["text"] for _l, e in log.iter_all()][-1] == "next"


@about_files  # events.jsonl damaged by hand (SQLite's own: tests/store/test_backend_sqlite.py)
def test_torn_line_in_a_real_workbench(bench, repo, wb):
    bench.add_task("Parser")
    events = repo / ".workbench" / "events.jsonl"
    good = events.read_bytes()
    with open(events, "ab") as fh:
        fh.write(b'{"schema_version":1,"seq":3,"id":"01M8N4D2')

    b = Bench.open(repo)
    assert b.status()["last_event"]["seq"] == 2
    assert [e["seq"] for e in b.log()] == [1, 2]
    r = wb(repo, "validate")
    assert r.returncode == 5 and "torn last line" in r.stderr  # reported, for `wb doctor --fix`

    b.note("after the crash")
    data = events.read_bytes()
    assert data.startswith(good) and b"01M8N4D2\n" not in data and data.endswith(b"\n")
    assert [json.loads(line)["seq"] for line in data.splitlines()] == [1, 2, 3]
    assert b.validate() == []
    assert b.replay().mismatches == []


def test_truncate_torn(tmp_path):
    log = fresh_log(tmp_path, 2)
    size = log.path.stat().st_size
    with open(log.path, "ab") as fh:
        fh.write(b'{"seq": 3, "partial')
    assert log.truncate_torn() == len(b'{"seq": 3, "partial')
    assert log.path.stat().st_size == size
    assert log.truncate_torn() == 0


# -- a batch cut short ----------------------------------------------------------------------------------------------


def test_batch_cut_short_is_ignored_and_replaced(tmp_path):
    log = fresh_log(tmp_path, 2)
    good = log.path.read_bytes()
    batch = chain([event(text="first of two"), event(text="second of two")], log.tail())
    first = encode(batch[0]) + b"\n"
    assert batch[0]["more"] == 1
    with open(log.path, "ab") as fh:
        fh.write(first)  # the crash came before the second line

    tail = log.tail()
    assert (tail.seq, tail.good_size, tail.torn) == (2, len(good), len(first))
    assert [e["seq"] for _l, e in log.iter_all()] == [1, 2]
    assert log.read_after(0)[-1]["seq"] == 2

    log.append(chain([event(text="after recovery")], tail), tail)
    data = log.path.read_bytes()
    assert b"first of two" not in data
    assert [e["payload"]["text"] for _l, e in log.iter_all()] == ["note 0", "note 1", "after recovery"]


def test_batch_cut_short_in_a_real_workbench(bench, repo):
    bench.add_task("Parser")
    events = repo / ".workbench" / "events.jsonl"
    log = EventLog(events)
    batch = chain([event("task.start", id="T-001", **{"from": "todo"}), event(text="second")], log.tail())
    with open(events, "ab") as fh:
        fh.write(encode(batch[0]) + b"\n")

    b = Bench.open(repo)
    assert b.show_task("T-001")["status"] == "todo"  # the cut batch never happened
    assert b.status()["last_event"]["seq"] == 2
    b.note("recovered")
    assert [e["type"] for e in b.log()] == ["workbench.init", "task.add", "note.add"]
    assert b.show_task("T-001")["status"] == "todo"
    assert b.validate() == []
    assert b.replay().mismatches == []


# -- damage inside the log is reported -------------------------------------------------------------------------------


@about_files  # events.jsonl damaged by hand (SQLite's own: tests/store/test_backend_sqlite.py)
def test_edited_middle_line_is_reported_by_validate(bench, repo, wb, error_line):
    bench.add_task("Parser")
    bench.add_task("Printer")
    bench.note("last")
    events = repo / ".workbench" / "events.jsonl"
    lines = events.read_bytes().split(b"\n")
    assert b'"Parser"' in lines[1]
    lines[1] = lines[1].replace(b'"Parser"', b'"Forged"')
    events.write_bytes(b"\n".join(lines))

    r = wb(repo, "validate")
    assert r.returncode == 5
    line = error_line(r.stderr)
    assert "events.jsonl" in line and "hash chain broken at seq 3" in line

    r = wb(repo, "replay", "--verify")
    assert r.returncode == 5
    assert "hash chain broken" in error_line(r.stderr)


@about_files  # events.jsonl damaged by hand (SQLite's own: tests/store/test_backend_sqlite.py)
def test_deleted_middle_line_is_reported(bench, repo, wb, error_line):
    bench.add_task("Parser")
    bench.add_task("Printer")
    events = repo / ".workbench" / "events.jsonl"
    lines = events.read_bytes().split(b"\n")
    del lines[1]
    events.write_bytes(b"\n".join(lines))
    r = wb(repo, "validate")
    assert r.returncode == 5
    assert "seq 3 where 2 was expected" in error_line(r.stderr)


def test_garbage_inside_the_log_is_not_skipped(tmp_path):
    log = fresh_log(tmp_path, 3)
    lines = log.path.read_bytes().split(b"\n")
    lines[1] = b"this is not json"
    log.path.write_bytes(b"\n".join(lines))
    with pytest.raises(Refused, match=r"events\.jsonl: line 2: damaged line"):
        list(log.iter_all())


@about_files  # events.jsonl damaged by hand (SQLite's own: tests/store/test_backend_sqlite.py)
def test_broken_chain_after_the_snapshot_refuses_to_load(bench, repo):
    bench.add_task("Parser")
    events = repo / ".workbench" / "events.jsonl"
    log = EventLog(events)
    bad = chain([event(text="appended by hand")], log.tail())[0]
    bad["prev"] = "0" * 64
    with open(events, "ab") as fh:
        fh.write(encode(bad) + b"\n")
    with pytest.raises(Refused, match=r"seq 3: hash chain broken"):
        Bench.open(repo).note("refused")
