"""The migrations as pure functions (documents in, documents out), the registry check, and the change lists."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from workbench.migrate import apply as migrate
from workbench.migrate.apply import KINDS, REGISTRY, Context, Kind, Migration, RegistryError, check_registry
from workbench.model import reducer, schemas, statefile
from workbench.model.jsonl import encode, line_hash

from .conftest import FIXTURES

CTX = Context("2026-11-30T12:00:00.000Z")
V0 = FIXTURES / "v0" / ".workbench"


def v0_state() -> dict:
    parsed = statefile.parse((V0 / "state.md").read_bytes())
    return {"frontmatter": parsed.data, "body": parsed.body}


def v0_board() -> dict:
    return json.loads((V0 / "board.json").read_text())


# -- the registry ----------------------------------------------------------------------------------------
def test_every_chain_is_contiguous_and_ends_at_the_current_version():
    check_registry(REGISTRY, KINDS)  # also run at import
    for name, kind in KINDS.items():
        assert [m.source for m in REGISTRY[name]] == list(range(kind.oldest, kind.current))
        assert schemas.load_schema(kind.schema)["properties"]["schema_version"]["const"] == kind.current
    assert KINDS["state"].current == reducer.STATE_VERSION and KINDS["board"].current == reducer.BOARD_VERSION


def _step(kind: str, source: int) -> Migration:
    return Migration(kind, source, lambda doc, ctx: doc, "test")


@pytest.mark.parametrize("sources, current, message", [
    ([0, 2], 3, r"go \[0, 2\]; expected .*\[0, 1, 2\]"),  # a gap
    ([0], 2, r"ending at the current version 2"),  # stops short of the current version
    ([1, 0], 2, r"go \[1, 0\]"),  # out of order
    ([0, 0], 1, r"go \[0, 0\]"),  # registered twice
])
def test_a_broken_chain_is_refused(sources, current, message):
    kinds = {"state": Kind("state", "state.md", "state", current, 0)}
    with pytest.raises(RegistryError, match=message):
        check_registry({"state": [_step("state", s) for s in sources]}, kinds)


def test_a_version_bump_without_the_schema_const_is_refused():
    kinds = {"state": Kind("state", "state.md", "state", 3, 0)}
    with pytest.raises(RegistryError, match=r"schema_version const 2 but this wb writes state version 3"):
        check_registry({"state": [_step("state", 0), _step("state", 1), _step("state", 2)]}, kinds)


def test_migrations_for_an_unknown_kind_are_refused():
    with pytest.raises(RegistryError, match="unknown kind 'notes'"):
        check_registry({**REGISTRY, "notes": [_step("notes", 0)]}, KINDS)


def test_upgrade_runs_the_chain_and_never_aliases_its_input():
    doc = v0_board()
    assert migrate.upgrade("board", doc, 0, CTX) == migrate.board_1_to_2(migrate.board_0_to_1(doc, CTX), CTX)
    current = migrate.upgrade("board", doc, 0, CTX)
    again = migrate.upgrade("board", current, 2, CTX)
    assert again == current and again is not current


def test_board_1_to_2_changes_no_task_and_its_output_is_valid():
    doc = migrate.board_0_to_1(v0_board(), CTX)
    before = copy.deepcopy(doc)
    out = migrate.board_1_to_2(doc, CTX)
    assert doc == before and out["schema_version"] == 2  # pure: its input untouched
    assert out["tasks"] == doc["tasks"] and {k for k in out if k != "schema_version"} == set(doc) - {"schema_version"}
    schemas.check("board", out, "board.json")
    with pytest.raises(Exception, match="schema_version"):
        schemas.check("board", doc, "board.json")  # a v1 board is not a v2 one: the gate asks for `wb migrate`


# -- state.md --------------------------------------------------------------------------------------------
def test_state_0_to_1_on_the_fixture():
    doc = v0_state()
    before = copy.deepcopy(doc)
    out = migrate.state_0_to_1(doc, CTX)
    assert doc == before, "a migration must not mutate its input"
    assert out == migrate.state_0_to_1(doc, CTX), "and is deterministic"
    fm = out["frontmatter"]
    schemas.check("state", _at_current(fm), "state.md")  # valid once at the current version
    assert list(fm) == ["schema_version", "status", "updated_at", "active_task_id", "next_action", "touched_files",
                        "assumptions", "blockers", "counters", "last_event", "session"]
    assert fm["blockers"] == ["T-002: GET /api/health times out after 30s"]  # was `risks`
    assert fm["counters"] == {"tasks_completed": 3, "tasks_failed": 1, "turns": 0, "tool_calls": 0,
                              "tokens_consumed": 12450}
    assert fm["active_task_id"] == "T-003"  # was `current_task`
    assert fm["status"] == "running" and fm["session"] is None and fm["last_event"] == 0
    assert fm["touched_files"] == ["api/health.py", "tests/test_endpoints.py"]
    # the old decision log is kept whole; what v1 has no field for is kept in a new entry, not dropped
    assert out["body"].startswith(doc["body"].rstrip("\n"))
    added = out["body"][len(doc["body"].rstrip("\n")):]
    assert added.startswith(f"\n\n### {CTX.now} · wb\n")
    assert '- agent: "task-processor"' in added and '- started_at: "2026-03-25T14:30:00Z"' in added


def test_state_0_to_1_keeps_a_current_task_that_is_not_a_task_id_in_the_log():
    doc = {"frontmatter": {"status": "pending", "updated_at": "2026-03-25T14:35:22Z",
                           "current_task": "analizar-logs-api", "touched_files": None, "risks": "one risk",
                           "assumptions": None},
           "body": ""}
    out = migrate.state_0_to_1(doc, CTX)
    fm = out["frontmatter"]
    schemas.check("state", _at_current(fm), "state.md")
    assert fm["active_task_id"] is None
    assert fm["status"] == "idle"  # wb 0.0.x "pending"
    assert fm["touched_files"] == [] and fm["assumptions"] == [] and fm["blockers"] == ["one risk"]
    assert out["body"].startswith(reducer.EMPTY_BODY.rstrip("\n"))
    assert '- current_task: "analizar-logs-api"' in out["body"]


def test_state_0_to_1_with_nothing_to_keep_adds_no_entry():
    out = migrate.state_0_to_1({"frontmatter": {"status": "idle"}, "body": ""}, CTX)
    assert out["body"] == reducer.EMPTY_BODY
    schemas.check("state", _at_current(out["frontmatter"]), "state.md")


def _at_current(fm: dict) -> dict:
    return migrate.state_1_to_2({"frontmatter": fm, "body": ""}, CTX)["frontmatter"]


def test_state_1_to_2_changes_only_the_version():
    fm = {"schema_version": 1, "status": "idle", "updated_at": "2026-11-30T02:25:14.732Z", "active_task_id": None,
          "next_action": "go", "touched_files": [], "assumptions": ["a"], "blockers": [],
          "counters": {"tasks_completed": 0, "tasks_failed": 0, "turns": 0, "tool_calls": 0, "tokens_consumed": 0},
          "last_event": 7, "session": None}
    doc = {"frontmatter": fm, "body": "\n# Decision log\n"}
    before = copy.deepcopy(doc)
    out = migrate.state_1_to_2(doc, CTX)
    assert doc == before, "a migration must not mutate its input"
    assert out == {"frontmatter": {**fm, "schema_version": 2}, "body": doc["body"]}
    schemas.check("state", out["frontmatter"], "state.md")


def test_state_0_to_1_tolerates_a_version_1_document_that_lost_its_schema_version():
    fm = {"status": "paused", "updated_at": "2026-11-30T02:25:14.732Z", "active_task_id": "T-001",
          "next_action": "go", "touched_files": [], "assumptions": [], "blockers": ["T-002: x"],
          "counters": {"tasks_completed": 2, "tasks_failed": 0, "turns": 5, "tool_calls": 1, "tokens_consumed": 9},
          "last_event": 7, "session": None}
    out = migrate.state_0_to_1({"frontmatter": fm, "body": "\n# Decision log\n"}, CTX)
    assert out["body"] == "\n# Decision log\n"
    assert {k: v for k, v in out["frontmatter"].items() if k not in ("schema_version", "updated_at", "last_event")} \
        == {k: v for k, v in fm.items() if k not in ("updated_at", "last_event")}


# -- board.json ------------------------------------------------------------------------------------------
def test_board_0_to_1_on_the_fixture():
    doc = v0_board()
    before = copy.deepcopy(doc)
    out = migrate.board_0_to_1(doc, CTX)
    assert doc == before
    schemas.check("board", migrate.board_1_to_2(out, CTX), "board.json")  # valid once at the current version
    tasks = {t["id"]: t for t in out["tasks"]}
    assert [t["id"] for t in out["tasks"]] == ["T-001", "T-002", "T-003", "T-004"]
    assert {t["kind"] for t in out["tasks"]} == {"build"} and {t["owner"] for t in out["tasks"]} == {"builder"}
    assert all(t["acceptance"] == [] and t["depends_on"] == [] for t in out["tasks"])
    assert [t["status"] for t in out["tasks"]] == ["done", "blocked", "in_progress", "todo"]
    assert tasks["T-001"]["created_at"] == "2026-03-25T14:30:00Z"  # kept when present
    assert tasks["T-003"]["created_at"] == CTX.now  # stamped when absent
    assert tasks["T-002"]["blocked_reason"] == migrate.FAILED_REASON
    assert tasks["T-002"]["description"] == "GET /api/health timed out (30s)"
    assert tasks["T-004"]["description"] == 'Kept from wb 0.0.x: priority: "low"'  # unknown key kept, not dropped


def test_board_0_to_1_renumbers_ids_that_are_not_task_ids_and_follows_references():
    doc = {"tasks": [
        {"id": "migrar-schema-v2", "title": "Migrate", "status": "completed"},
        {"id": "T-007", "name": "Validate", "status": "in-progress", "deps": ["migrar-schema-v2"]},
        {"title": "No id", "status": "open"},
        {"id": "T-007", "title": "Duplicate", "status": "canceled"},
        {"id": "T-010", "title": "Review it", "status": "todo", "reviews": "migrar-schema-v2"},
    ]}
    out = migrate.board_0_to_1(doc, CTX)
    schemas.check("board", migrate.board_1_to_2(out, CTX), "board.json")  # valid once at the current version
    assert [t["id"] for t in out["tasks"]] == ["T-011", "T-007", "T-012", "T-013", "T-010"]
    first, second, _no_id, dup, review = out["tasks"]
    assert first["description"] == 'Kept from wb 0.0.x: id: "migrar-schema-v2"'
    assert second["title"] == "Validate" and second["depends_on"] == ["T-011"] and second["status"] == "in_progress"
    assert dup["status"] == "cancelled" and 'id: "T-007"' in dup["description"]
    assert review["kind"] == "review" and review["reviews"] == "T-011" and review["owner"] == "reviewer"


def test_board_0_to_1_leaves_what_it_cannot_place_for_the_schema_to_name():
    out = migrate.upgrade("board", {"tasks": [], "owner": "me"}, 0, CTX)
    errors = [str(e) for e in schemas.iter_errors("board", out, "board.json")]
    assert errors == ["board.json: (top level): unknown key 'owner' (not allowed by the schema)"]


# -- config.yaml -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("commit, expected", [(True, "every"), (False, "off"), ("every", "every")])
def test_config_0_to_1(commit, expected):
    doc = {"git": {"commit": commit, "ref": None}, "lock_timeout": 10}
    out = migrate.config_0_to_1(doc, CTX)
    assert list(out)[0] == "schema_version" and out["schema_version"] == 1
    assert out["git"] == {"commit": expected, "ref": None} and doc["git"]["commit"] == commit
    schemas.check("config", out, "config.yaml")


def test_config_render_keeps_every_comment():
    raw = (V0 / "config.yaml").read_bytes()
    config = migrate.config_0_to_1(migrate.read_config(V0 / "config.yaml").doc, CTX)
    text = migrate.render_config(raw, config).decode()
    assert text.splitlines()[:4] == ["# wb settings (wb 0.0.x). Edit freely.", "schema_version: 1", "git:",
                                     "  commit: every          # wb 0.0.x: true = one commit per change"]
    assert "lock_timeout: 10         # seconds to wait for another wb process" in text


# -- events.jsonl ----------------------------------------------------------------------------------------
def test_events_0_to_1_upcasts_each_line_and_chains_them():
    records = [{"ts": "2026-03-25T14:30:00Z", "type": "session_start", "payload": {"budget": 50000}},
               {"type": "task_completed", "task": "T-001", "actor": "human"},
               {"ts": "not a time", "type": "note"}]
    before = copy.deepcopy(records)
    out = migrate.events_0_to_1(records, CTX)
    assert records == before and out == migrate.events_0_to_1(records, CTX)
    assert [e["seq"] for e in out] == [1, 2, 3]
    assert [e["payload"]["record"] for e in out] == records  # each line kept whole
    assert {e["type"] for e in out} == {"legacy.event"}
    assert [e["actor"] for e in out] == ["agent", "human", "agent"]
    assert [e["ts"] for e in out] == ["2026-03-25T14:30:00Z"] * 3  # a line without a good time takes the last
    assert out[0]["prev"] is None
    for before_event, event in zip(out, out[1:], strict=False):
        assert event["prev"] == line_hash(encode(before_event))
    assert len({e["id"] for e in out}) == 3 and all(re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", e["id"]) for e in out)
    assert sorted(e["id"] for e in out) == [e["id"] for e in out]
    for event in out:
        schemas.check("event", event, "events.jsonl")


def test_the_migration_apply_reducer_installs_the_documents_it_carries():
    docs = reducer.empty_docs("2026-11-30T12:00:00.000Z")
    state = {**docs.state, "next_action": "migrated"}
    del state["updated_at"], state["last_event"]
    event = {"seq": 2, "ts": "2026-11-30T12:00:01.000Z", "type": "migration.apply", "actor": "wb",
             "payload": {"state": state, "body": "body", "board": {"schema_version": 1, "tasks": []}}}
    assert reducer.apply(docs, event) is True
    assert docs.state["next_action"] == "migrated" and docs.state["last_event"] == 2
    assert docs.body == "body" and docs.board == {"schema_version": 1, "tasks": [], "last_event": 2}
    docs.state["next_action"] = "changed later"
    assert event["payload"]["state"]["next_action"] == "migrated", "the event's payload is never aliased"


# -- change lists and file edges -------------------------------------------------------------------------
def test_field_changes_and_moves():
    before = {"a": 1, "risks": ["x"], "tasks": [{"id": "T-001", "s": "todo"}, {"id": "T-002"}]}
    after = {"a": 2, "blockers": ["x"], "tasks": [{"id": "T-001", "s": "done"}, {"id": "T-003"}]}
    changes = migrate.pair_moves(migrate.field_changes(before, after))
    assert changes == [
        {"op": "change", "path": "a", "old": 1, "new": 2},
        {"op": "move", "path": "blockers", "from": "risks", "new": ["x"]},
        {"op": "remove", "path": "tasks[T-002]", "old": {"id": "T-002"}},
        {"op": "change", "path": "tasks[T-001].s", "old": "todo", "new": "done"},
        {"op": "add", "path": "tasks[T-003]", "new": {"id": "T-003"}},
    ]
    assert migrate.field_changes(before, copy.deepcopy(before)) == []
    # equal numbers are not a rename (tasks_failed: 1 is not schema_version: 1)
    assert [c["op"] for c in migrate.pair_moves(migrate.field_changes({"n": 1}, {"v": 1}))] == ["remove", "add"]


@pytest.mark.parametrize("content, expected", [
    (b"", None),
    (b'{"a":1}', None),  # one torn line
    (b'{"a":1}\n', (b'{"a":1}', b'{"a":1}')),
    (b'{"a":1}\n{"b":2}\n{"c"', (b'{"a":1}', b'{"b":2}')),
    (b'{"a":1}\n' + b"x" * 200_000 + b"\n" + b"y" * 70_000, (b'{"a":1}', b"x" * 200_000)),
])
def test_edge_lines(tmp_path: Path, content, expected):
    path = tmp_path / "log.jsonl"
    path.write_bytes(content)
    assert migrate.edge_lines(path) == expected
