"""What YAML cannot carry raw (issue 14.3) is written double-quoted with escapes, on both state.md writers:
the fast line rewrite (statefile.double_quoted) and ruamel (yamlio.fresh). Whatever the string, it reads back."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from workbench.model import frontmatter, statefile, yamlio

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


def test_every_character_yaml_cannot_carry_raw_is_unprintable() -> None:
    """frontmatter.not_raw answers a printable string without its pattern: right only while Python calls every
    character of NOT_RAW unprintable, which this checks over the whole of Unicode."""
    pattern = re.compile(frontmatter.NOT_RAW)
    matched = [chr(c) for c in range(0x110000) if pattern.match(chr(c))]
    assert matched and not [c for c in matched if c.isprintable()]
    for value in ("plain", "tab\there", "nel\x85", "bom\ufeff", "\ud800", "é ü", ""):
        assert frontmatter.not_raw(value) == bool(pattern.search(value)), repr(value)


def test_the_reported_characters() -> None:
    for value in ("\ufffe", "\uffff", "a\x85b", "\u2028"):
        assert statefile.not_raw(value)
        line = "k: " + statefile.double_quoted(value) + "\n"
        assert line.isascii() or value == "\u2028"
        assert yamlio.to_plain(yamlio.load_round_trip(line, "state.md"))["k"] == value
