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
