"""What YAML cannot carry raw (issue 14.3) is written double-quoted with escapes, on both state.md writers:
the fast line rewrite (statefile.double_quoted) and ruamel (yamlio.fresh). Whatever the string, it reads back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from workbench.model import statefile, yamlio

TEXT = st.text(st.one_of(st.characters(blacklist_categories=("Cs",)),
                         st.sampled_from(list("\ufffe\uffff\x85\u2028\u2029\r\n\t\x00\x1b\x9b\x7f\ufeff\"'\\"))))


@given(TEXT)
def test_double_quoted_reads_back_as_the_same_string(value: str) -> None:
    line = "k: " + statefile.double_quoted(value) + "\n"
    assert "\n" not in line[:-1]
    assert yamlio.to_plain(yamlio.load_round_trip(line, "state.md"))["k"] == value


@given(TEXT)
def test_ruamel_writes_what_reads_back(value: str) -> None:
    data = {"k": value, "l": [value], "m": {value: value}}
    text = yamlio.dump_round_trip(yamlio.new_map(data))
    assert yamlio.to_plain(yamlio.load_round_trip(text, "state.md")) == data


def test_the_reported_characters() -> None:
    for value in ("\ufffe", "\uffff", "a\x85b", "\u2028"):
        assert statefile.NOT_RAW.search(value)
        line = "k: " + statefile.double_quoted(value) + "\n"
        assert line.isascii() or value == "\u2028"
        assert yamlio.to_plain(yamlio.load_round_trip(line, "state.md"))["k"] == value
