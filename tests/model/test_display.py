"""model/display.escape (issue 14.2): every character that could hide or rewrite what a person reads is shown
as its escape — C0 and C1 controls, ANSI escapes, bidi controls, invisible characters — and nothing else
changes."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from workbench.model.display import escape

HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
                    "\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def test_the_reported_command_is_shown_whole() -> None:
    assert escape("echo tests-pass \x1b[8m; touch owned\x1b[0m") == "echo tests-pass \\e[8m; touch owned\\e[0m"


def test_each_kind_of_hidden_character_has_a_visible_escape() -> None:
    assert escape("a\u202eb") == "a\\u202eb"  # right-to-left override
    assert escape("\u2066x\u2069") == "\\u2066x\\u2069"  # isolates
    assert escape("\x9b2J") == "\\x9b2J"  # C1 CSI
    assert escape("\x85") == "\\x85"  # NEL
    assert escape("ok\rrm -rf") == "ok\\rrm -rf"  # a carriage return writes over the line
    assert escape("\x00\x07\x08\x7f") == "\\x00\\x07\\x08\\x7f"
    assert escape("a\u200bb\ufeff") == "a\\u200bb\\ufeff"
    assert escape("\ud800") == "\\ud800"


def test_one_line_by_default_and_lines_kept_with_layout() -> None:
    assert escape("one\ntwo\tthree") == "one\\ntwo\\tthree"
    assert escape("one\ntwo\tthree\r\x1b[2K", layout=True) == "one\ntwo\tthree\\r\\e[2K"


def test_ordinary_text_is_left_alone() -> None:
    text = "café ✓ 😀 👩‍💻 אבג \\e [bold]x[/bold] C:\\path 'q' \"d\""
    assert escape(text) == text
    assert escape(42) == "42"


@given(st.text())
def test_nothing_hidden_survives_and_escaping_twice_changes_nothing(text: str) -> None:
    once = escape(text)
    assert not HIDDEN.search(once)
    assert escape(once) == once
    assert not HIDDEN.search(escape(text, layout=True).replace("\n", "").replace("\t", ""))


@given(st.text(st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Zl", "Zp"))))
def test_visible_text_is_unchanged(text: str) -> None:
    assert escape(text) == text


def test_every_escaped_character_is_unprintable() -> None:
    """escape returns a printable string as it is: that is right only while Python calls every character it
    escapes unprintable (str.isprintable), which this checks over the whole of Unicode."""
    escaped = [c for c in map(chr, range(0x110000)) if HIDDEN.match(c)]
    assert escaped and not [c for c in escaped if c.isprintable()]
    assert all(escape(c) != c for c in escaped)
