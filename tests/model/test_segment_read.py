"""model/segments.check_body reads a sealed segment's lines off one decode of its text (issue 33: one
json.loads per line was most of a cold start). What it accepts and what it refuses must be exactly what reading
each line on its own with jsonl.read_line gives: a line that is two objects, half of one, a repeated key, a
lone surrogate's escape, bytes that are not UTF-8 — whatever the lines around it hold."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from workbench.errors import Refused
from workbench.model.jsonl import encode, line_hash, read_line, stamp
from workbench.model.segments import Header, check_body


def _events(n: int) -> list[bytes]:
    lines: list[bytes] = []
    prev = None
    for seq in range(1, n + 1):
        line = encode({"schema_version": 1, "seq": seq, "id": f"E{seq}", "ts": "2026-01-01T00:00:00Z",
                       "type": "note.add", "actor": "human", "payload": {"text": f"note é {seq}"}, "prev": prev})
        lines.append(line)
        prev = line_hash(line)
    return lines


def _segment(lines: list[bytes]) -> tuple[bytes, Header]:
    body = b"".join(line + b"\n" for line in lines)
    head = b'{"wb_segment":1}\n'
    header = Header(1, 1, len(lines), len(lines), hashlib.sha256(body).hexdigest(), line_hash(lines[-1]), None,
                    None, size=len(head))
    return head + body, header


def _line_by_line(raw: bytes, header: Header) -> list[tuple[bytes, dict]]:
    """check_body as it read before: read_line on each line (the digest is the caller's, and right here)."""
    out = []
    prev, expected = header.prev_hash, header.first
    for number, line in enumerate(raw[header.size:].split(b"\n")[:-1], start=2):
        event = read_line(line, f"log/{header.name}", f"line {number}")
        if event.get("seq") != expected:
            raise Refused(f"log/{header.name}: line {number}: seq {event.get('seq')} where {expected} was expected")
        if event.get("prev") != prev:
            raise Refused(f"log/{header.name}: line {number}: hash chain broken at seq {expected}")
        prev = line_hash(line)
        expected += 1
        out.append((line, event))
    if expected - 1 != header.last or prev != header.last_hash:
        raise Refused(f"log/{header.name}: holds seq {header.first}..{expected - 1}, its header says ..{header.last}")
    return out


def _outcome(read, raw: bytes, header: Header) -> object:
    try:
        return read(raw, header)
    except Refused as err:
        return str(err)


NASTY = [
    b'{"seq":1,"seq":1}',  # a repeated key
    b'{"a":"x"},{"b":[1',  # an object and the start of another: its end on the next line
    b'2]}',
    b'{"a":"},{"}',  # a string that looks like a line break between objects
    b' {"seq":1}',  # whitespace around an object
    b'{"seq":1} ',
    b'{"t":"\\ud800"}',  # a lone surrogate's escape
    b'{"t":"\\ud83d\\ude00"}',  # a pair: an emoji, valid
    b'{"t":"\xff"}',  # not UTF-8
    b'[1]',
    b'',
    b'{"n":NaN}',
    b'{"t":"\\u00e9"}',  # an escape wb would not write, valid all the same
]


@given(st.lists(st.tuples(st.integers(0, 7), st.sampled_from(NASTY)), max_size=3), st.booleans())
def test_check_body_reads_as_each_line_on_its_own_does(swaps: list[tuple[int, bytes]], rechain: bool) -> None:
    lines = _events(8)
    for at, nasty in swaps:
        lines[at] = nasty
    if rechain:  # the lines after a swap chained to it, so that only the line itself can be refused
        prev = None
        for i, line in enumerate(lines):
            try:
                event = json.loads(line)
            except ValueError:
                event = None
            if isinstance(event, dict) and "seq" in event and line not in NASTY:
                event["prev"] = prev
                lines[i] = line = encode(event)
            prev = line_hash(line)
    raw, header = _segment(lines)
    assert _outcome(check_body, raw, header) == _outcome(_line_by_line, raw, header)


def test_a_sound_segment_reads_whole() -> None:
    raw, header = _segment(_events(50))
    assert [e["seq"] for _line, e in check_body(raw, header)] == list(range(1, 51))


# -- jsonl.stamp: a line's seq, ts and type read off its start, unparsed (a fold's events no reducer reads) --------
_STAMP_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=30) | st.sampled_from(
    ["2026-01-01T00:00:00Z", "é", 'a"b', "a\\b", "\u2028", ""])


@given(seq=st.integers(min_value=-2, max_value=10**20), ts=_STAMP_TEXT,
       type_=st.sampled_from(["agent.tool_call", "task.add", "Agent.x", "a\\u002eb", "x"]) | _STAMP_TEXT,
       spelled=st.sampled_from(["wb", "spaced", "escaped"]))
def test_a_stamp_is_what_a_parse_of_the_line_gives(seq: int, ts: str, type_: str, spelled: str) -> None:
    event = {"schema_version": 1, "seq": seq, "id": "01M96M1J9CFVFNG1AXGN6Q8Y90", "ts": ts, "type": type_,
             "actor": "agent", "session": None, "payload": {"ts": "x", "type": "y"}, "prev": None}
    line = encode(event)
    if spelled == "spaced":
        line = json.dumps(event).encode()
    elif spelled == "escaped":
        line = json.dumps(event, ensure_ascii=True, separators=(",", ":")).encode()
    found = stamp(line)
    if found is None:
        return
    parsed = read_line(line, "events.jsonl", "line 1")
    assert (int(found[1]), found[2].decode("ascii"), found[3].decode("ascii")) == (
        parsed["seq"], parsed["ts"], parsed["type"])


def test_a_stamp_is_read_only_off_wb_own_spelling() -> None:
    line = encode({"schema_version": 1, "seq": 7, "id": "01M96M1J9CFVFNG1AXGN6Q8Y90", "ts": "2026-01-01T00:00:00Z",
                   "type": "agent.tool_call", "actor": "agent", "session": None, "payload": {}, "prev": None})
    found = stamp(line)
    assert found is not None and (found[1], found[2], found[3]) == (b"7", b"2026-01-01T00:00:00Z", b"agent.tool_call")
    assert stamp(b" " + line) is None
    assert stamp(line.replace(b'"ts":"', b'"ts": "')) is None
    assert stamp(line.replace(b"2026", b"\\u0032026", 1)) is None  # an escape: parsed, not read off the bytes
