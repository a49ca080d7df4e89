"""The event log as sealed segments (docs/files.md#the-sealed-log): events.jsonl holds the tail; past
`log.segment_events` a write seals it into `.workbench/log/NNNNNN.jsonl`, in the same commit; the whole log
reads the same; a torn tail, a tampered or re-chained segment, a seal cut short by kill -9, and an old long
events.jsonl are each handled as a user would check afterwards (validate, replay, git status, every note)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import WB_ARGV, about_files, make_repo, run_git, run_wb
from workbench.model.jsonl import line_hash
from workbench.model.segments import header_of

pytestmark = about_files  # events.jsonl's sealed segments in log/ (SQLite keeps every event in one table)

SMALL = "log:\n  segment_events: 5\n"


def _wb_ok(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    out = run_wb(repo, *args)
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def _workbench(tmp_path: Path, *, config: str = SMALL, name: str = "repo") -> Path:
    repo = make_repo(tmp_path / name)
    _wb_ok(repo, "init")
    with open(repo / ".workbench" / "config.yaml", "a", encoding="utf-8") as fh:
        fh.write(config)
    _wb_ok(repo, "note", "config set")  # records the config edit, commits it
    return repo


def _notes(repo: Path, n: int, prefix: str = "n") -> list[str]:
    texts = [f"{prefix} {i}" for i in range(n)]
    for text in texts:
        _wb_ok(repo, "note", text)
    return texts


def whole_log(repo: Path) -> list[dict]:
    """The whole log as on disk: the sealed segments in order, then events.jsonl (checked by the library)."""
    from workbench.store.eventlog import EventLog

    return [e for _line, e in EventLog(repo / ".workbench" / "events.jsonl").iter_all()]


def committed_log(repo: Path, ref: str = "HEAD") -> list[dict]:
    """The whole log as committed at `ref`: its segments, then its events.jsonl (nothing read from disk)."""
    from workbench.model.segments import WholeLog

    names = run_git(repo, "ls-tree", "--name-only", ref, "--", ".workbench/log/").split()
    segments = [(n.rsplit("/", 1)[-1], run_git(repo, "show", f"{ref}:{n}").encode()) for n in names]
    return WholeLog(segments, run_git(repo, "show", f"{ref}:.workbench/events.jsonl").encode()).events


def assert_sound(repo: Path, acknowledged: list[str]) -> None:
    for args in (("validate",), ("replay", "--verify")):
        out = run_wb(repo, *args)
        assert out.returncode == 0, out.stdout + out.stderr
    assert run_git(repo, "status", "--porcelain", "--", ".workbench") == ""
    for events in (whole_log(repo), committed_log(repo)):
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        texts = [e["payload"].get("text") for e in events if e["type"] == "note.add"]
        assert [t for t in acknowledged if t not in texts] == []
        assert len({e["id"] for e in events}) == len(events)


def segments(repo: Path) -> list[Path]:
    return sorted((repo / ".workbench" / "log").glob("[0-9]*.jsonl"))


# -- sealing ---------------------------------------------------------------------------------------------------
def test_a_write_past_the_threshold_seals_the_tail_in_its_own_commit(tmp_path: Path) -> None:
    repo = _workbench(tmp_path)  # events 1-3: init, the config edit, its note
    acked = _notes(repo, 13)
    segs = segments(repo)
    assert [s.name for s in segs] == ["000001.jsonl", "000002.jsonl", "000003.jsonl"]
    headers = [header_of(s.read_bytes(), s.name) for s in segs]
    assert [(h.first, h.last) for h in headers] == [(1, 5), (6, 10), (11, 15)]
    for before, after in zip(headers, headers[1:], strict=False):
        assert after.prev_sha256 == before.sha256  # the digests chain
        first = json.loads(segs[after.number - 1].read_bytes().splitlines()[1])
        assert first["prev"] == before.last_hash  # and so does the event chain
    tail = (repo / ".workbench" / "events.jsonl").read_bytes().splitlines()
    assert json.loads(tail[0])["seq"] == 16 and json.loads(tail[0])["prev"] == headers[-1].last_hash
    # the seal was committed by the write that made it: the commit that added segment 3 is a `wb note`
    added = run_git(repo, "log", "--format=%B", "--diff-filter=A", "--", ".workbench/log/000003.jsonl")
    assert added.startswith("wb: note")
    assert "Wb-Also-Changed" not in added  # a seal is wb's own write, not a hand edit riding along
    assert_sound(repo, acked)
    # sealed segments are never rewritten afterwards
    sealed = {s.name: s.read_bytes() for s in segs}
    _notes(repo, 6, "later")
    assert all(p.read_bytes() == sealed[p.name] for p in segs)


def test_reading_after_a_seq_reaches_into_the_segments_only_when_it_must(tmp_path: Path) -> None:
    from workbench.store.eventlog import EventLog

    repo = _workbench(tmp_path)
    _notes(repo, 12)
    log = EventLog(repo / ".workbench" / "events.jsonl")
    everything = whole_log(repo)
    last = everything[-1]["seq"]
    assert [e["seq"] for e in log.read_after(3)] == list(range(4, last + 1))
    assert [e["seq"] for e in log.read_after(15)] == list(range(16, last + 1))
    assert log.read_after(last) == []
    tail, after = log.scan_after(10)
    assert tail.seq == last and [e["id"] for e in after] == [e["id"] for e in everything[10:]]


def test_a_torn_tail_segment_is_ignored_then_cut_by_doctor(tmp_path: Path) -> None:
    repo = _workbench(tmp_path)
    acked = _notes(repo, 7)
    with open(repo / ".workbench" / "events.jsonl", "ab") as fh:
        fh.write(b'{"schema_version":1,"seq":')  # a crash mid-append: never acknowledged
    assert run_wb(repo, "status").returncode == 0
    out = run_wb(repo, "validate")
    assert out.returncode == 5 and "torn last line" in out.stderr
    _wb_ok(repo, "doctor", "--fix")
    assert_sound(repo, acked)


def test_an_empty_tail_after_a_seal_continues_from_the_last_segment(tmp_path: Path) -> None:
    repo = _workbench(tmp_path, config="log:\n  segment_events: 1\n")
    acked = _notes(repo, 3)
    assert (repo / ".workbench" / "events.jsonl").read_bytes() == b""
    assert_sound(repo, acked)


# -- damage ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("trusted_first", [False, True])
def test_a_tampered_sealed_segment_is_damage_for_validate_and_doctor(tmp_path: Path, trusted_first: bool) -> None:
    repo = _workbench(tmp_path)
    _notes(repo, 12)
    if trusted_first:  # checked once already on this machine: the record must not vouch for changed bytes
        _wb_ok(repo, "validate")
    seg = segments(repo)[1]
    raw = seg.read_bytes()
    assert b'"n ' in raw
    seg.write_bytes(raw.replace(b'"n ', b'"N ', 1))
    out = run_wb(repo, "validate")
    assert out.returncode == 5 and "log/000002.jsonl" in out.stderr and "digest" in out.stderr
    doctor = run_wb(repo, "doctor", "--json")
    assert doctor.returncode == 1
    codes = {f["code"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert "log_damaged" in codes and "000002" in codes["log_damaged"]["message"]
    assert not codes["log_damaged"]["fixable"]
    assert run_wb(repo, "doctor", "--fix").returncode == 1
    assert run_git(repo, "status", "--porcelain", "--", ".workbench/log")  # never committed by a repair
    assert run_wb(repo, "replay", "--verify").returncode != 0  # never silently used
    run_git(repo, "checkout", "--", ".workbench/log")
    assert run_wb(repo, "validate").returncode == 0


@pytest.mark.parametrize("notes", [12, 13])  # 12: events.jsonl empty after the last seal; 13: one event in it
def test_a_segment_resealed_with_its_own_digest_breaks_the_chain(tmp_path: Path, notes: int) -> None:
    """An edit that recomputes the segment's own digest is still found: the next segment names the old one."""
    import hashlib

    repo = _workbench(tmp_path)
    _notes(repo, notes)
    seg = segments(repo)[0]
    head, _, body = seg.read_bytes().partition(b"\n")
    body = body.replace(b'"config set"', b'"config SET"')
    header = json.loads(head)
    header["sha256"] = hashlib.sha256(body).hexdigest()
    header["last_hash"] = line_hash(body.splitlines()[-1])
    seg.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + body)
    out = run_wb(repo, "validate", "--full")
    assert out.returncode == 5, out.stdout + out.stderr
    assert "restore .workbench/log/" in out.stderr  # damage, not a merge's leftovers
    report = json.loads(run_wb(repo, "doctor", "--json").stdout)
    assert "log_damaged" in {f["code"] for f in report["findings"]}
    assert "segments_left" not in {f["code"] for f in report["findings"]}


def test_validate_trusts_a_checked_segment_by_digest_and_full_rechecks(tmp_path: Path) -> None:
    from workbench.model.layout import Paths
    from workbench.store.eventlog import EventLog
    from workbench.store.logcheck import SealedCheck

    repo = _workbench(tmp_path)
    _notes(repo, 12)
    p = Paths(repo)
    log = EventLog(p.events)
    first = SealedCheck(log, p)
    assert first.run() and first.checked == 3 and first.trusted == 0
    again = SealedCheck(log, p)
    assert again.run() and again.checked == 0 and again.trusted == 3
    full = SealedCheck(log, p, full=True)
    assert full.run() and full.checked == 3
    assert not (repo / ".workbench" / "segments.json").exists()  # the record lives in the git directory
    assert (repo / ".git" / "wb" / "cache" / "segments.json").exists()
    # the sealed log's fold is kept too: after one more seal only the new segment is folded again
    _wb_ok(repo, "validate")
    _notes(repo, 5, "more")
    later = SealedCheck(log, p)
    assert later.run() and later.checked == 1 and later.trusted == 3
    docs, k = later.folded()
    assert docs is not None and k == 3
    _wb_ok(repo, "validate")
    last = SealedCheck(log, p)
    assert last.run() and last.folded()[1] == 4
    assert run_wb(repo, "replay", "--verify").returncode == 0


# -- kill -9 while sealing -------------------------------------------------------------------------------------
@pytest.mark.parametrize("point", ["before_rename:000003.jsonl", "after_segment_write", "before_tail_rewrite",
                                   "before_rename:events.jsonl", "after_tail_rewrite"])
def test_kill_9_while_sealing_leaves_a_sound_workbench(tmp_path: Path, point: str) -> None:
    repo = _workbench(tmp_path)
    acked = _notes(repo, 11)  # the log is at seq 14: the next note seals 11..15
    env = dict(os.environ, WB_FAULT=point)
    killed = subprocess.run([*WB_ARGV, "note", "inflight"], cwd=repo, env=env, capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    out = run_wb(repo, "validate")
    assert out.returncode == 0 or "changed since the last commit" in out.stderr, out.stderr
    assert run_wb(repo, "replay", "--verify").returncode == 0
    texts = [e["payload"].get("text") for e in whole_log(repo)]
    assert "inflight" in texts  # appended and fsync'd before the seal began: acknowledged on disk
    _wb_ok(repo, "note", "after")
    assert_sound(repo, [*acked, "inflight", "after"])
    assert [s.name for s in segments(repo)] == ["000001.jsonl", "000002.jsonl", "000003.jsonl"]


# -- an events.jsonl from before segments ----------------------------------------------------------------------
def test_a_long_unsealed_log_is_sealed_by_doctor_fix_idempotently(tmp_path: Path) -> None:
    repo = _workbench(tmp_path, config="")
    acked = _notes(repo, 23)
    assert segments(repo) == []
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + SMALL)
    _wb_ok(repo, "note", "threshold lowered")  # an ordinary write seals the backlog, several segments at once
    assert len(segments(repo)) == 5
    assert_sound(repo, [*acked, "threshold lowered"])


def test_doctor_fix_seals_an_old_long_events_jsonl(tmp_path: Path) -> None:
    repo = _workbench(tmp_path, config="")
    acked = _notes(repo, 12)
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + SMALL)
    _wb_ok(repo, "note", "recorded")  # the config edit recorded, the tail sealed by this write
    # an old workbench: every event back in one events.jsonl, as a wb before segments kept it
    events = b"".join(s.read_bytes().partition(b"\n")[2] for s in segments(repo))
    events += (repo / ".workbench" / "events.jsonl").read_bytes()
    run_git(repo, "rm", "-rq", ".workbench/log")
    (repo / ".workbench" / "events.jsonl").write_bytes(events)
    run_git(repo, "commit", "-qam", "an old, unsegmented log")
    report = json.loads(run_wb(repo, "doctor", "--json").stdout)
    assert "log_unsealed" in {f["code"] for f in report["findings"]}
    _wb_ok(repo, "doctor", "--fix")
    assert len(segments(repo)) == 3
    assert_sound(repo, [*acked, "recorded"])
    second = json.loads(run_wb(repo, "doctor", "--json").stdout)
    assert second["healthy"] and not second["findings"]


def test_wb_diff_across_a_seal_shows_the_events_appended_and_nothing_removed(tmp_path: Path) -> None:
    repo = _workbench(tmp_path)  # seq 3
    _notes(repo, 1)  # seq 4: events.jsonl holds 1..4
    before = run_git(repo, "rev-parse", "HEAD").strip()
    _notes(repo, 3, "after")  # seq 5 seals 1..5; 6 and 7 in events.jsonl
    assert segments(repo)
    for args in ((before,), (before, "HEAD")):
        data = json.loads(_wb_ok(repo, "diff", *args, "--format", "json").stdout)["events"]
        assert (data["appended"], data["removed"], data["rewritten"]) == (3, 0, False)
        assert (data["first_seq"], data["last_seq"]) == (5, 7)


def test_a_symlinked_log_directory_is_refused(tmp_path: Path) -> None:
    repo = _workbench(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".workbench" / "log").symlink_to(elsewhere)
    out = run_wb(repo, "note", "x")
    assert out.returncode == 5 and "log" in out.stderr and "symbolic link" in out.stderr


def test_a_left_over_segment_with_events_the_log_lacks_is_folded_in_by_doctor_fix(tmp_path: Path) -> None:
    """As a merge made without wb's drivers could leave it: a segment the log does not continue, holding an
    event the log lacks. validate says so; doctor --fix appends it (same id) with log.reconcile, removes it."""
    import copy

    from workbench.model import ids
    from workbench.model.jsonl import encode
    from workbench.model.segments import encode_segment

    repo = _workbench(tmp_path)
    acked = _notes(repo, 13)  # segments 1-3 (seq 1-15), seq 16 in events.jsonl
    last = header_of(segments(repo)[-1].read_bytes(), "000003.jsonl")
    note = next(e for e in whole_log(repo) if e["type"] == "note.add")
    lost = {**note, "id": ids.new_id(), "seq": 16, "prev": last.last_hash, "payload": {"text": "only there"}}
    other_side = copy.copy(last)
    other_side.sha256 = "0" * 64  # sealed after another segment 3: not ours
    data, _ = encode_segment(4, [encode(lost)], other_side)
    (repo / ".workbench" / "log" / "000004.jsonl").write_bytes(data)
    run_git(repo, "add", ".workbench/log")
    run_git(repo, "commit", "-qm", "a merge made without wb's drivers")
    out = run_wb(repo, "validate")
    assert out.returncode == 5 and "000004.jsonl" in out.stderr and "lacks" in out.stderr
    _wb_ok(repo, "doctor", "--fix")
    assert not (repo / ".workbench" / "log" / "000004.jsonl").exists()
    log = whole_log(repo)
    assert [e["id"] for e in log if e["payload"].get("text") == "only there"] == [lost["id"]]
    assert log[-1]["type"] == "log.reconcile" and log[-1]["payload"]["events"] == [lost["id"]]
    assert_sound(repo, [*acked, "only there"])


def test_resolve_without_segments_and_with_an_empty_tail() -> None:
    from workbench.model.segments import encode_segment, resolve

    assert resolve([], None, lambda _seq: None).chain == []
    assert resolve([], (1, None), lambda _seq: None).problem is None
    _data, first = encode_segment(1, [b'{"seq":1,"prev":null}'], None)
    assert resolve([first], None, lambda _seq: None).chain == [first]


def test_status_names_the_last_event_of_a_sealed_segment_and_refuses_a_changed_last_line(tmp_path: Path) -> None:
    """Just after a seal events.jsonl is empty: `wb status` reads the newest event off the last segment's last
    line alone, taken because its hash is the one the header seals (CONTRACT §8's history bar: reading and
    checking the whole segment for it was a quarter of a status at 100,000 events). A last line changed after
    the seal is not taken: status refuses as it did, naming the segment."""
    repo = _workbench(tmp_path)
    events_path = repo / ".workbench" / "events.jsonl"
    for i in range(20):
        _wb_ok(repo, "note", f"n {i}")
        if events_path.stat().st_size == 0:
            break
    assert events_path.stat().st_size == 0, "no write sealed the whole tail"
    newest = whole_log(repo)[-1]
    shown = json.loads(_wb_ok(repo, "status", "--json").stdout)["last_event"]
    assert shown == {"seq": newest["seq"], "type": newest["type"], "ts": newest["ts"], "actor": newest["actor"]}
    segment = sorted((repo / ".workbench" / "log").iterdir())[-1]
    raw = segment.read_bytes()
    assert raw.endswith(b'"}\n') or raw.endswith(b"}\n")
    changed = raw.replace(newest["ts"].encode(), newest["ts"].replace("Z", "1Z").encode())
    assert changed != raw
    segment.write_bytes(changed)
    refused = run_wb(repo, "status", "--json")
    assert refused.returncode != 0 and f"log/{segment.name}" in refused.stderr, refused.stdout + refused.stderr
