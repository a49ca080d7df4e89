"""Text meant for a person's eyes — a terminal, a log file, a pull-request comment — with every character that
could hide or rewrite what is shown made visible instead of obeyed.

A value wb shows can come from anyone who writes to the workbench (a task that arrives by a merge, a tool's
output, a hook payload). An ANSI escape (`\\e[8m` hides the rest of a line), a carriage return (the line is
written over), a C1 control (`\\x9b` is a CSI on some terminals) or a bidi override (`\\u202e` shows the text
backwards) would make `wb task show` display one command while `wb task done` runs another. `escape` writes
each such character as its escape sequence, so it is shown, never obeyed:

- C0 controls and DEL: `\\e` (ESC), `\\r`, `\\n`, `\\t`, else `\\xNN`; C1 controls (U+0080–U+009F): `\\xNN`;
- bidi embeddings, overrides, isolates and marks, the line and paragraph separators, and the invisible
  characters that can join or split a word unseen (U+200B, U+2060–U+2064, U+FEFF, U+FFFE/U+FFFF): `\\uNNNN`;
  a lone surrogate: `\\uDNNN`.

One-line values (a title, a command, a table cell, an error line) escape `\\n` and `\\t` too, so one value
can neither fake a second line nor shift a column. `layout=True` keeps `\\n` and `\\t` for text that is laid
out as lines (the last lines of a failed command, a block of output already joined by wb); everything else
is escaped all the same. A backslash is left alone: the output is for reading, not for parsing back (JSON
output, for scripts, stays raw: JSON escapes what it must itself).
"""

from __future__ import annotations

import re

_NAMED = {"\x1b": "\\e", "\r": "\\r", "\n": "\\n", "\t": "\\t"}
_REST = ("\x7f-\x9f"  # DEL, C1 (with NEL)
         "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, embeddings, overrides, isolates
         "\u2028\u2029"  # line and paragraph separators
         "\u200b\u2060-\u2064\ufeff\ufffe\uffff"  # invisible: zero width space, word joiner…, BOM, non-characters
         "\ud800-\udfff")  # lone surrogates (bytes that were not UTF-8)
# compiled on first use (re's own cache): most text is printable and never needs them, and their character
# ranges cost a command that prints only such text most of a millisecond to compile (issue 33)
_ONE_LINE = f"[\x00-\x1f{_REST}]"  # every C0 control
_LAYOUT = f"[\x00-\x08\x0b-\x1f{_REST}]"  # C0 but \t and \n


def _visible(m: re.Match[str]) -> str:
    char = m.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: object, *, layout: bool = False) -> str:
    """`text` (made a string) with every control, escape, bidi and invisible character shown as its escape;
    `layout=True` keeps newlines and tabs."""
    value = text if isinstance(text, str) else str(text)
    if value.isprintable():  # nothing to escape: every character below is unprintable (tests/model/test_display)
        return value
    if layout and value.replace("\n", "").replace("\t", "").isprintable():  # a commit message: its lines kept
        return value
    return re.sub(_LAYOUT if layout else _ONE_LINE, _visible, value)
