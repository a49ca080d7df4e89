"""state.md's fast path rewrites changed scalar lines without ruamel; it must agree with ruamel exactly."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model import statefile, yamlio

TEXT = st.text(alphabet=string.ascii_letters + string.digits + " _-:#'\"/.,()+!?é\\\t", max_size=30)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**9), TEXT)


def _doc(values: dict) -> bytes:
    return statefile.render(None, values, "\n# Decision log\n")


@settings(max_examples=300, deadline=None)
@given(
    old=st.fixed_dictionaries({"a": SCALAR, "b": SCALAR, "counters": st.fixed_dictionaries(
        {"x": st.integers(0, 10**6), "y": st.integers(0, 10**6)})}),
    new=st.fixed_dictionaries({"a": SCALAR, "b": SCALAR, "counters": st.fixed_dictionaries(
        {"x": st.integers(0, 10**6), "y": st.integers(0, 10**6)})}),
    comment=st.booleans(),
)
def test_fast_render_parses_back_to_the_new_values(old: dict, new: dict, comment: bool) -> None:
    raw = _doc(old)
    if comment:
        raw = raw.replace(b"\nb:", b"\n# a human's comment\nb:", 1)
    parsed = statefile.parse(raw)
    assert parsed.data == old  # the generator itself round-trips
    out = statefile.render_fast(raw, old, new, parsed.body)
    if out is None:
        return  # the caller falls back to ruamel: always correct
    again = statefile.parse(out)
    assert again.data == new
    assert again.body == parsed.body
    changed = {k for k in old if old[k] != new[k]} | {f"  {k}" for k in old["counters"]
                                                       if old["counters"][k] != new["counters"][k]}
    before, after = raw.decode().splitlines(), out.decode().splitlines()
    assert len(before) == len(after)
    for line_before, line_after in zip(before, after, strict=True):
        if line_before != line_after:
            assert any(line_before.startswith(k + ":") for k in changed), (line_before, line_after)


def test_fast_render_takes_the_common_mutation_without_ruamel() -> None:
    old = {"schema_version": 1, "updated_at": "2026-11-30T02:25:14.732Z", "next_action": "Write parser",
           "counters": {"turns": 0, "tool_calls": 0}, "last_event": 7}
    raw = _doc(old)
    new = {**old, "updated_at": "2026-11-30T03:00:00.000Z", "last_event": 9, "next_action": "a: b # c",
           "counters": {"turns": 1, "tool_calls": 0}}
    out = statefile.render_fast(raw, old, new, "\n# Decision log\n")
    assert out is not None
    assert statefile.parse(out).data == new


def test_fast_render_declines_lists_and_multiline() -> None:
    old = {"blockers": [], "next_action": "x"}
    raw = _doc(old)
    assert statefile.render_fast(raw, old, {"blockers": ["T-001: y"], "next_action": "x"}, "") is None
    assert statefile.render_fast(raw, old, {"blockers": [], "next_action": "two\nlines"}, "") is None


def test_yaml_never_builds_python_objects() -> None:
    evil = "!!python/object/apply:os.system ['echo owned']\n"
    try:
        value = yamlio.load_safe(evil, "config.yaml")
    except Exception as err:  # refused: fine
        assert "config.yaml" in str(err)
    else:
        assert not callable(value)
