"""The six JSON Schemas, the validators compiled from them, and the one-line refusal messages.

The write path runs validators compiled ahead of time (workbench/_validators); jsonschema is the authority.
These tests keep the two in agreement and the compiled files fresh."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import SchemaRefused
from workbench.model import schemas

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("state", "board", "event", "call", "config", "plan")
MESSAGE = re.compile(r"^(?P<file>[a-z]+\.(json|md|yaml)): "
                     r"(?P<path>\(top level\)|[A-Za-z_][\w.\[\]-]*): (?P<rule>\S.*)$")


@functools.cache
def authority(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schemas.load_schema(kind))


def test_compiled_validators_are_fresh():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_validators.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_schema_is_valid_draft_2020_12(kind):
    path = ROOT / "schemas" / f"{kind}.schema.json"
    schema = json.loads(path.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator
    assert "schema_version" in schema["properties"], "every format carries schema_version"
    if kind != "plan":  # a plan file is written by hand; its version is optional
        assert "schema_version" in schema.get("required", [])
    assert schemas.load_schema(kind) == schema  # the copy wb uses is the project's


def test_the_package_finds_all_six():
    found = {p.name for p in schemas.schema_dir().glob("*.schema.json")}
    assert found >= {f"{kind}.schema.json" for kind in KINDS}
    assert set(schemas.KINDS) >= set(KINDS)


@pytest.mark.parametrize("path", sorted((ROOT / "schemas").glob("*.schema.json")), ids=lambda p: p.name)
def test_every_schema_file_is_draft_2020_12(path):
    schema = json.loads(path.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


# -- hypothesis: compiled validator and jsonschema agree ------------------------------------------------------

TS = "2026-11-30T02:16:33.123Z"
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=16),
                 st.text(max_size=4), st.lists(st.integers(0, 2), max_size=2), st.just({}))


def mostly(valid: st.SearchStrategy) -> st.SearchStrategy:
    """Valid values three times out of four, junk otherwise."""
    return st.one_of(valid, valid, valid, JUNK)


TASK_ID = st.one_of(st.from_regex(r"T-\d{3,5}", fullmatch=True),
                    st.sampled_from(["T-1", "T-01", "t-001", "T-001\n", "X-001", "T-00a", " T-001"]))
TIMESTAMP = st.one_of(st.just(TS), st.sampled_from(["2026-11-30T02:16:33Z", "2026-11-30 02:16:33Z",
                                                    "2026-11-30T02:16:33.123+00:00", "yesterday"]))
TITLE = st.one_of(st.text(min_size=0, max_size=8), st.just("x" * 501), st.just("x" * 500))
COMMANDS = st.lists(st.one_of(st.text(min_size=0, max_size=6), st.integers()), max_size=3)

TASK_REQUIRED = {
    "id": mostly(TASK_ID),
    "kind": mostly(st.sampled_from(["build", "review", "bug"])),
    "title": mostly(TITLE),
    "status": mostly(st.sampled_from(["todo", "in_progress", "blocked", "done", "cancelled", "finished", "Done"])),
    "owner": mostly(st.sampled_from(["builder", "reviewer", "human", "robot"])),
    "acceptance": mostly(COMMANDS),
    "depends_on": mostly(st.lists(TASK_ID, max_size=3)),
    "created_at": mostly(TIMESTAMP),
    "updated_at": mostly(TIMESTAMP),
}
TASK_OPTIONAL = {
    "reviews": mostly(TASK_ID),
    "description": mostly(st.text(max_size=8)),
    "blocked_reason": mostly(st.one_of(st.none(), st.text(max_size=8))),
    "forced_done": mostly(st.booleans()),
    "foo": JUNK,
}
TASK = st.fixed_dictionaries(TASK_REQUIRED, optional=TASK_OPTIONAL)
BOARD = st.fixed_dictionaries(
    {"schema_version": mostly(st.sampled_from([1, 1.0, 2, True, "1"])),
     "last_event": mostly(st.integers(0, 10)),
     "tasks": st.lists(TASK, max_size=3)},
    optional={"extra": JUNK},
)

STRINGS = st.lists(st.text(max_size=5), max_size=3)
STATE = st.fixed_dictionaries(
    {
        "schema_version": mostly(st.just(1)),
        "status": mostly(st.sampled_from(["idle", "running", "paused", "awaiting_tool", "completed", "failed",
                                          "sleeping"])),
        "updated_at": mostly(TIMESTAMP),
        "active_task_id": mostly(st.one_of(st.none(), TASK_ID)),
        "next_action": mostly(st.one_of(st.text(max_size=8), st.just("x" * 4001))),
        "touched_files": mostly(STRINGS),
        "assumptions": mostly(STRINGS),
        "blockers": mostly(STRINGS),
        "counters": mostly(st.fixed_dictionaries(
            {k: mostly(st.integers(-1, 5)) for k in ("tasks_completed", "tasks_failed", "turns", "tool_calls",
                                                     "tokens_consumed")})),
        "last_event": mostly(st.integers(-1, 50)),
        "session": mostly(st.one_of(st.none(), st.fixed_dictionaries(
            {"id": mostly(st.text(min_size=0, max_size=4)), "goal": mostly(st.text(max_size=4)),
             "harness_state": mostly(st.sampled_from(["IDLE", "PLANNING", "EXECUTING", "DONE", "done"])),
             "started_at": mostly(TIMESTAMP)},
            optional={"pending": mostly(st.one_of(st.none(), st.just({"reason": "tool"}))),
                      "grants": mostly(STRINGS), "step_index": mostly(st.integers(-1, 3))}))),
    },
    optional={"foo": JUNK},
)
EVENT = st.fixed_dictionaries(
    {
        "schema_version": mostly(st.just(1)),
        "seq": mostly(st.integers(0, 5)),
        "id": mostly(st.one_of(st.just("01M8N4D276R9M5GNYXD6W1EY7A"), st.just("01M8N4D276R9M5GNYXD6W1EY7I"),
                               st.text(max_size=3))),
        "ts": mostly(TIMESTAMP),
        "type": mostly(st.sampled_from(["task.add", "human.edit", "session", "Task.add", "a.b.c_d"])),
        "actor": mostly(st.sampled_from(["agent", "human", "wb", "robot"])),
        "session": mostly(st.one_of(st.none(), st.text(max_size=4))),
        "payload": mostly(st.dictionaries(st.text(max_size=3), JUNK, max_size=2)),
        "prev": mostly(st.one_of(st.none(), st.just("a" * 64), st.just("A" * 64), st.just("a" * 63))),
    },
    optional={"more": mostly(st.integers(0, 3)), "extra": JUNK},
)

AGREEMENT = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def agree(kind: str, doc: object) -> bool:
    compiled = schemas.is_valid(kind, doc)
    reference = authority(kind).is_valid(doc)
    assert compiled == reference, f"compiled says {compiled}, jsonschema says {reference} for {doc!r}"
    return reference


@AGREEMENT
@given(BOARD)
def test_board_validators_agree(doc):
    valid = agree("board", doc)
    check_message("board", doc, "board.json", valid)


@AGREEMENT
@given(st.lists(TASK, min_size=1, max_size=1))
def test_single_task_validators_agree(tasks):
    doc = {"schema_version": 1, "last_event": 0, "tasks": tasks}
    valid = agree("board", doc)
    check_message("board", doc, "board.json", valid)


@AGREEMENT
@given(STATE)
def test_state_validators_agree(doc):
    valid = agree("state", doc)
    check_message("state", doc, "state.md", valid)


@AGREEMENT
@given(EVENT)
def test_event_validators_agree(doc):
    agree("event", doc)


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)),
                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                    max_leaves=8), st.sampled_from(KINDS))
def test_arbitrary_json_validators_agree(doc, kind):
    agree(kind, doc)


def check_message(kind: str, doc: object, file: str, valid: bool) -> None:
    if valid:
        schemas.check(kind, doc, file)
        return
    with pytest.raises(SchemaRefused) as info:
        schemas.check(kind, doc, file)
    err = info.value
    text = str(err)
    assert "\n" not in text
    assert "wb bug" not in text
    m = MESSAGE.match(text)
    assert m, text
    assert (m["file"], m["path"], m["rule"]) == (file, err.path, err.rule)


# -- messages -----------------------------------------------------------------------------------------------------


def valid_task(**changes: object) -> dict:
    task = {"id": "T-001", "kind": "build", "title": "Parser", "status": "todo", "owner": "builder",
            "acceptance": [], "depends_on": [], "created_at": TS, "updated_at": TS}
    task.update(changes)
    return task


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (valid_task(status="finished"),
         'board.json: tasks[0].status: "finished" is not one of "todo", "in_progress", "blocked", "done", '
         '"cancelled"'),
        (valid_task(depends_on=["T-9"]), r'board.json: tasks[0].depends_on[0]: "T-9" does not match ^T-\d{3,}$'),
        (valid_task(acceptance=None), "board.json: tasks[0].acceptance: null is not of type array"),
        (valid_task(foo="bar"), "board.json: tasks[0]: unknown key 'foo' (not allowed by the schema)"),
        (valid_task(kind="review"), "board.json: tasks[0]: missing required key 'reviews'"),
        (valid_task(title=""), 'board.json: tasks[0].title: "" breaks minLength 1'),
    ],
    ids=["enum", "pattern", "null-array", "unknown-key", "review-needs-reviews", "min-length"],
)
def test_refusal_messages_name_file_path_and_rule(task, message):
    doc = {"schema_version": 1, "last_event": 0, "tasks": [task]}
    assert not schemas.is_valid("board", doc)
    with pytest.raises(SchemaRefused) as info:
        schemas.check("board", doc, "board.json")
    assert str(info.value) == message


def test_every_error_is_reported_by_iter_errors():
    doc = {"schema_version": 1, "last_event": -1, "tasks": [valid_task(status="x", owner="y")]}
    messages = [str(e) for e in schemas.iter_errors("board", doc, "board.json")]
    assert "board.json: last_event: -1 is below the minimum 0" in messages
    # a task is a oneOf (build | review): its errors are reported through the branch it meant
    assert any(m.startswith(("board.json: tasks[0].status: ", "board.json: tasks[0].owner: ")) for m in messages)
    for m in messages:
        assert MESSAGE.match(m), m


def test_example_workbench_is_valid(tmp_path, new_repo, wb):
    example = ROOT / ".workbench.example"
    if not example.is_dir():
        pytest.skip(".workbench.example/ is not in this checkout yet")
    import shutil

    repo = new_repo(tmp_path / "example")
    shutil.copytree(example, repo / ".workbench")
    r = wb(repo, "validate")
    assert r.returncode == 0, r.stdout + r.stderr
    r = wb(repo, "replay", "--verify")
    assert r.returncode == 0, r.stdout + r.stderr
