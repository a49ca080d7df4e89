"""The core of `wb diff` (workbench/review/) on bytes: logs, log entries, sides, the schema."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.model import frontmatter
from workbench.review import diff
from workbench.review import parse as diff_parse
from workbench.review import sides as diff_sides

from .helpers import schema_problems


def _line(seq: int, type_: str = "note.add", **extra: object) -> bytes:
    return json.dumps({"seq": seq, "type": type_, "session": None, "payload": {}, **extra},
                      separators=(",", ":")).encode() + b"\n"


def test_complete_lines_drop_a_torn_line_and_a_batch_cut_short():
    good = _line(1) + _line(2)
    assert diff_parse.complete_lines(good + b'{"seq":3,"ty') == good
    assert diff_parse.complete_lines(good + _line(3, more=1)) == good  # its last line never arrived
    assert diff_parse.complete_lines(good + _line(3, more=1) + _line(4)) == good + _line(3, more=1) + _line(4)
    assert diff_parse.complete_lines(None) == b"" and diff_parse.complete_lines(b"no newline") == b""


def test_appended_lines_prefix_backwards_and_rewritten():
    a, b, c, x = _line(1), _line(2), _line(3), _line(2, "task.add")
    assert diff_parse.appended_lines(a, a + b + c) == ([b[:-1], c[:-1]], 0, False)
    assert diff_parse.appended_lines(a + b + c, a) == ([], 2, False)
    assert diff_parse.appended_lines(a + b + c, a + x) == ([x[:-1]], 2, True)
    assert diff_parse.appended_lines(b"", b"") == ([], 0, False)


def test_rewritten_log_is_reported():
    old = _line(1) + _line(2)
    new = _line(1) + _line(2, "task.add") + _line(3)
    ev = diff.diff_events(old, new, [])
    assert (ev["rewritten"], ev["removed"], ev["appended"]) == (True, 1, 2)
    assert ev["by_type"] == {"task.add": 1, "note.add": 1}


def test_decision_log_entries():
    body = ("\n# Decision log\n\n### 2026-01-01T00:00:00Z · agent\n\nFirst.\nTwo lines.\n\n"
            "### a heading of my own\n\nmine\n")
    assert diff_parse.log_entries(body) == [
        {"ts": "2026-01-01T00:00:00Z", "actor": "agent", "text": "\nFirst.\nTwo lines.\n".strip("\n")},
        {"ts": None, "actor": None, "heading": "a heading of my own", "text": "mine"},
    ]
    assert diff_parse.log_entries("# Decision log\n") == []


def _side(label: str, **files: bytes | None) -> diff_sides.Side:
    return diff_sides.Side(label, None, {name: files.get(name.split(".")[0]) for name in diff_sides.FILES})


STATE = b"""---
schema_version: 1
status: %s
updated_at: '2026-01-01T00:00:0%dZ'
counters: {turns: %d}
session: %s
---

# Decision log
%s"""


def test_compare_state_fields_session_and_entries_validate_against_the_schema():
    session = (b"{id: S1, goal: Ship, harness_state: AWAITING_TOOL, step_index: 1, plan: [{}, {}], "
               b"pending: {kind: approval, reason: 'approval_required:deploy', yield_id: Y}}")
    old = _side("a", state=STATE % (b"idle", 1, 0, b"null", b""))
    entry = "\n### 2026-01-01T00:00:02Z · human\n\nok\n".encode()
    new = _side("b", state=STATE % (b"awaiting_tool", 2, 1, session, entry))
    data = diff.compare(old, new)
    assert schema_problems(data) == []
    assert data["state"]["fields"] == [{"field": "status", "old": "idle", "new": "awaiting_tool"},
                                       {"field": "counters.turns", "old": 0, "new": 1}]
    assert data["state"]["session"] == {"old": None, "new": {
        "id": "S1", "goal": "Ship", "harness_state": "AWAITING_TOOL", "step_index": 1, "steps": 2,
        "pending": {"kind": "approval", "reason": "approval_required:deploy"}}}
    assert data["state"]["decision_log"]["added"] == [{"ts": "2026-01-01T00:00:02Z", "actor": "human", "text": "ok"}]
    assert data["board"] == {"fields": [], "added": [], "removed": [], "changed": []}


def test_compare_board_fields_added_removed_changed():
    def board(*tasks: dict) -> bytes:
        return json.dumps({"schema_version": 1, "last_event": len(tasks), "tasks": list(tasks)}).encode()

    t1 = {"id": "T-001", "title": "A", "status": "todo", "updated_at": "x"}
    t2 = {"id": "T-002", "title": "B", "status": "todo"}
    t3 = {"id": "T-003", "title": "C", "status": "todo", "description": "new"}
    data = diff.compare(_side("a", board=board(t1, t2)),
                        _side("b", board=board({**t1, "status": "done", "updated_at": "y", "forced_done": True}, t3)))
    assert schema_problems(data) == []
    b = data["board"]
    assert b["added"] == [t3] and b["removed"] == [t2] and b["fields"] == []
    assert b["changed"] == [{"id": "T-001", "title": "A", "changes": [
        {"field": "status", "old": "todo", "new": "done"}, {"field": "forced_done", "new": True}],
        "unproven": "forced"}]  # issue 30: a done whose acceptance never passed says so


def test_no_workbench_on_either_side_is_no_change():
    data = diff.compare(_side("a"), _side("b"))
    assert data["changed"] is False and data["old"]["workbench"] is False
    assert schema_problems(data) == []


def test_the_diff_schema_is_a_valid_draft_2020_12_schema():
    import jsonschema

    path = Path(__file__).resolve().parents[2] / "schemas" / "diff.schema.json"
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"] == {"const": diff.SCHEMA_VERSION}
    assert schema_problems({"schema_version": 1}) != []  # it does refuse things


# -- the fast frontmatter reader agrees with ruamel, or steps aside ------------------------------------------
def _ruamel(yaml_text: str) -> object:
    from workbench.model import yamlio

    return yamlio.to_plain(yamlio.load_safe(yaml_text, "state.md"))


def test_fast_frontmatter_reads_what_wb_writes():
    from workbench.model import statefile

    state = {"schema_version": 1, "status": "idle", "updated_at": "2026-01-01T00:00:00.000Z",
             "active_task_id": None, "next_action": "Add the first task: wb task add TITLE",
             "touched_files": ["a.py", "it's here"], "assumptions": [], "blockers": ["T-001: waiting"],
             "counters": {"tasks_completed": 1, "turns": 0}, "last_event": 7, "session": None}
    yaml_text, _ = statefile.split(statefile.render(None, state, "\n# Decision log\n").decode())
    assert frontmatter.fast_frontmatter(yaml_text) == _ruamel(yaml_text) == state


def test_fast_frontmatter_steps_aside_outside_its_subset():
    for text in ("a: 1.5\n", "a: 2026-01-01\n", "a: yes\n", "a: True\n", "a: &x 1\nb: *x\n", "a: |\n  x\n",
                 "a:\n  - id: s1\n    tool: null\n", "a:\n  b:\n    c: 1\n", "a: [1, 2]\n", "a: 0x1F\n",
                 "a: 'open\n", "a: 1\na: 2\n", "a: b: c\n", "'a': 1\n", "a:\n  - x\n   - y\n", "a: \"\\x41\"\n"):
        assert frontmatter.fast_frontmatter(text) is None, text


def test_fast_frontmatter_comments_and_hand_formatting():
    text = ("# a comment\nstatus: idle   # idle | running\nnext_action: 'it''s # not a comment'\n"
            "blockers:\n- one\n- \"two \\u00e9\"\ncounters:\n    turns: 3   # three\n    tool_calls: 0\n"
            "session:\nempty: {}\n")
    assert frontmatter.fast_frontmatter(text) == _ruamel(text) == {
        "status": "idle", "next_action": "it's # not a comment", "blockers": ["one", "two é"],
        "counters": {"turns": 3, "tool_calls": 0}, "session": None, "empty": {}}


def test_fast_frontmatter_agrees_with_ruamel_on_generated_states():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from workbench.model import statefile

    scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                       st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30))
    values = st.one_of(scalar, st.lists(st.text(max_size=20), max_size=4),
                       st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), scalar, max_size=3))
    docs = st.dictionaries(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), values, min_size=1, max_size=6)

    @settings(max_examples=300, deadline=None)
    @given(docs)
    def check(state: dict) -> None:
        yaml_text, _ = statefile.split(statefile.render(None, state, "").decode())
        fast = frontmatter.fast_frontmatter(yaml_text)
        if fast is not None:
            assert fast == _ruamel(yaml_text)

    check()
