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


# -- reading the frontmatter without ruamel when it is in wb's subset: statefile.parse_plain (issue 33, the
# SQLite backend's `wb validate` and `wb doctor`) must give statefile.parse's data and body, or its very refusal
BYTES = st.one_of(
    st.builds(_doc, st.dictionaries(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), st.one_of(
        SCALAR, st.lists(TEXT, max_size=3), st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), SCALAR,
                                                            max_size=3)), min_size=1, max_size=5)),
    st.binary(max_size=60).map(lambda b: b"---\n" + b + b"\n---\nbody\n"),
    st.text(alphabet="ab:-# '\"\n\t[]{}&*|>1.,", max_size=60).map(lambda t: f"---\n{t}\n---\n".encode()),
    st.binary(max_size=40),
)


def _outcome(read: object, raw: bytes) -> object:
    from workbench.errors import Refused

    try:
        return read(raw)  # type: ignore[operator]
    except Refused as err:
        return ("refused", str(err))


@settings(max_examples=500, deadline=None)
@given(BYTES)
def test_parse_plain_is_parse_without_ruamel_where_it_can(raw: bytes) -> None:
    def parse(r: bytes) -> tuple[dict, str]:
        parsed = statefile.parse(r)
        return parsed.data, parsed.body

    assert _outcome(statefile.parse_plain, raw) == _outcome(parse, raw)


def test_parse_plain_reads_what_wb_writes_without_ruamel() -> None:
    import subprocess
    import sys

    raw = _doc({"schema_version": 1, "status": "idle", "touched_files": ["a.py"], "counters": {"turns": 1},
                "session": None, "last_event": 3})
    code = ("import sys; from workbench.model import statefile; "
            f"assert statefile.parse_plain({raw!r})[0]['last_event'] == 3; "
            "assert not [m for m in sys.modules if m.startswith('ruamel')], 'ruamel imported'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_parse_plain_refuses_a_number_too_long_in_parse_s_words() -> None:
    """A number of more digits than wb reads: the subset reader steps aside, so every reader of state.md (a load
    without ruamel among them) refuses it as `parse` does (tests/security/test_hostile_numbers.py)."""
    raw = _doc({"schema_version": 1, "status": "idle", "last_event": 3}).replace(b"last_event: 3",
                                                                               b"last_event: " + b"9" * 5000)
    assert statefile.parse_fast(raw) is None

    def parse(r: bytes) -> tuple[dict, str]:
        parsed = statefile.parse(r)
        return parsed.data, parsed.body

    refused = _outcome(statefile.parse_plain, raw)
    assert refused == _outcome(parse, raw) and isinstance(refused, tuple) and refused[0] == "refused"
