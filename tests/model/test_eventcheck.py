"""model/eventcheck.surely_valid, the quick yes schemas.is_valid asks before the compiled event validator: it
never says yes to an event the compiled validator refuses, and says yes to the events wb writes — so
is_valid's verdict is the compiled validator's on every event (hypothesis, on mutations of a valid one)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model import eventcheck, schemas

BASE: dict[str, Any] = {
    "schema_version": 1, "seq": 12, "id": "01HZX3V9K8Q7M6N5P4R3S2T1VW", "ts": "2026-01-02T03:04:05Z",
    "type": "agent.tool_call", "actor": "agent", "via": "hook", "tty": False, "session": "S-1",
    "payload": {"tool": "Edit"}, "prev": "ab" * 32, "more": 2,
}
KEYS = [*BASE, "proof", "trust", "extra"]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.sampled_from([1.0, 2.0, 0.0])
    | st.text(max_size=8) | st.sampled_from(["agent", "human", "wb", "web", "git", "tty-code", "web-token", "env",
                                              "task.add", "a.b_c", "A.b", "x", "ab" * 32, "AB" * 32, "ab" * 31,
                                              "01HZX3V9K8Q7M6N5P4R3S2T1VW", "01HZX3V9K8Q7M6N5P4R3S2T1VI",
                                              "2026-01-02T03:04:05.123Z", "2026-01-02T03:04:05Z\n",
                                              "2026-01-02 03:04:05Z"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)

MUTATION = st.tuples(st.sampled_from(["set", "drop"]), st.sampled_from(KEYS), JSON)


def compiled_valid(doc: Any) -> bool:
    try:
        schemas._compiled("event")(doc)
    except ValueError:
        return False
    return True


@settings(max_examples=1500, deadline=None)
@given(mutations=st.lists(MUTATION, max_size=3), reorder=st.booleans())
def test_quick_yes_only_for_what_the_schema_accepts(mutations: list[tuple[str, str, Any]], reorder: bool) -> None:
    event = dict(BASE)
    for op, key, value in mutations:
        if op == "drop":
            event.pop(key, None)
        else:
            event[key] = value
    if reorder:
        event = dict(reversed(list(event.items())))
    valid = compiled_valid(event)
    if eventcheck.surely_valid(event):
        assert valid, event
    assert schemas.is_valid("event", event) == valid
    for _ in range(2):  # the second time through the seen shapes and types
        assert schemas.is_valid("event", event) == valid


def test_what_wb_writes_is_a_quick_yes() -> None:
    assert eventcheck.surely_valid(BASE)
    minimal = {k: BASE[k] for k in ("schema_version", "seq", "id", "ts", "type", "actor", "session", "payload")}
    assert eventcheck.surely_valid({**minimal, "prev": None})
    assert eventcheck.surely_valid({**BASE, "proof": "web-token", "trust": "env", "session": None})
    assert not eventcheck.surely_valid([BASE])
    assert not eventcheck.surely_valid({**BASE, "seq": 12.0}) and compiled_valid({**BASE, "seq": 12.0})


def test_quick_yes_follows_the_schema_file() -> None:
    """surely_valid restates the event schema's rules by hand: a schema change must be a change of it too.
    Its key sets, enums and patterns are the schema's, and every rule of the schema is one it restates."""
    schema = schemas.load_schema("event")
    props = schema["properties"]
    assert set(schema["required"]) == eventcheck._REQUIRED
    assert set(props) == eventcheck._ALLOWED and schema["additionalProperties"] is False
    assert set(props["actor"]["enum"]) == eventcheck._ACTORS
    assert set(props["via"]["enum"]) == eventcheck._VIAS
    assert set(props["proof"]["enum"]) == eventcheck._PROOFS
    rules = {key: {k: v for k, v in rule.items() if k not in ("description", "title")} for key, rule in props.items()}
    assert rules == {
        "schema_version": {"const": 1},
        "seq": {"type": "integer", "minimum": 1},
        "id": {"type": "string", "pattern": "^[0-9A-HJKMNP-TV-Z]{26}$"},
        "ts": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$"},
        "type": {"type": "string", "pattern": "^[a-z]+(\\.[a-z_]+)+$"},
        "actor": {"enum": sorted(eventcheck._ACTORS, key=props["actor"]["enum"].index)},
        "via": {"enum": sorted(eventcheck._VIAS, key=props["via"]["enum"].index)},
        "tty": {"type": "boolean"},
        "proof": {"enum": sorted(eventcheck._PROOFS, key=props["proof"]["enum"].index)},
        "trust": {"const": "env"},
        "session": {"type": ["string", "null"]},
        "payload": {"type": "object"},
        "prev": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
        "more": {"type": "integer", "minimum": 1},
    }, "the event schema changed: change model/eventcheck.surely_valid with it, then this test"
    assert set(schema) - {"$schema", "$id", "title", "description"} == {"type", "required", "additionalProperties",
                                                                         "properties"}
