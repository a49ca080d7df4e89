"""cli/output.py's JSON for scripts: a long list written one item per line by json's C encoder, made once
(issue 33), writes exactly what `json.JSONEncoder(ensure_ascii=False, default=str).encode` writes."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from workbench.cli import output

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=24)


@given(st.lists(VALUES, max_size=6))
def test_the_item_encoder_writes_what_encode_writes(items: list[object]) -> None:
    plain = json.JSONEncoder(ensure_ascii=False, default=str).encode
    encode = output.item_encoder()
    assert [encode(item) for item in items] == [plain(item) for item in items]


def test_values_json_cannot_hold_are_written_as_encode_writes_them(capsys) -> None:
    items = [{"path": Path("a/b"), "set": {1}, "nan": math.nan, "text": "é\u202e\n\"", "nested": [[{"x": 1.5}]]},
             "a string item", 3, None]
    plain = json.JSONEncoder(ensure_ascii=False, default=str).encode
    encode = output.item_encoder()
    assert [encode(i) for i in items] == [plain(i) for i in items]
    output.emit_json_items(items)
    out = capsys.readouterr().out
    assert out == "[\n  " + ",\n  ".join(plain(i) for i in items) + "\n]\n"
    assert out.count("\n") == len(items) + 2  # one item per line: a newline inside a value is escaped


def laid_out(headers: list[str], rows: list[list[str]]) -> str:
    """A table as `wb task list` lays it out: columns as wide as their widest cell, two spaces apart, each line's
    end stripped; a table with an unprintable character anywhere shows every cell escaped."""
    from workbench.model.display import escape

    if not "".join(headers + [cell for row in rows for cell in row]).isprintable():
        rows = [[escape(cell) for cell in row] for row in rows]
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=True)]
    return "".join("  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
                   for row in [headers, *rows])


CELLS = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) \
    | st.sampled_from(["", " ", "T-001", "é\u202e", "a\tb"])


@given(st.lists(st.lists(CELLS, min_size=3, max_size=3), max_size=5))
def test_a_table_lays_out_its_cells_a_column_at_a_time_as_a_row_at_a_time(rows: list[list[str]]) -> None:
    import io
    import sys

    headers = ["ID", "STATUS", "TITLE"]
    for columns in (False, True):
        out = io.StringIO()
        stdout, sys.stdout = sys.stdout, out
        try:
            if columns:
                output.table_columns(headers, [list(c) for c in zip(*rows, strict=True)] if rows else [[], [], []])
            else:
                output.table(headers, rows)
        finally:
            sys.stdout = stdout
        assert out.getvalue() == laid_out(headers, rows)
