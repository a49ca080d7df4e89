"""model/cjson parses and writes exactly as the json package does (the hook path uses it instead)."""

from __future__ import annotations

import json
import math

import pytest

from workbench.model import cjson

VALUES = [
    {}, [], "", 0, -1, 1.5, 1e100, -0.0, True, False, None, "é ✓ \u2028 \x00 \"q\" \\ /",
    {"session_id": "8c35", "tool_input": {"command": "pytest -q", "timeout": 120000}, "n": [1, 2.25, None]},
    {"nested": [[[{"a": {"b": [True, False]}}]]], "k": {"1": 1}}, "\ud83d\ude00 emoji",
]
TEXTS = ['{"a": 1}', ' \n{"a" : [1, 2, {"b": null}]}\t\r\n', "[]", '"x"', "3", "-2.5e-3", "NaN", "[Infinity]",
         '{"a": "\\u00e9\\ud83d\\ude00"}', '{"a": 1, "a": 2}']
BAD = ["", " ", "not json", "{", '{"a": 1} x', "[1,]", "'single'", '{"a": "\x01"}', "\ufeff{}", "[1] [2]"]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_writes_the_bytes_json_writes(value: object) -> None:
    assert cjson.dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert cjson.loads(cjson.dumps(value)) == value


@pytest.mark.parametrize("text", TEXTS)
def test_loads_reads_what_json_reads(text: str) -> None:
    got, want = cjson.loads(text), json.loads(text)
    if isinstance(want, float) and math.isnan(want):
        assert math.isnan(got)
    else:
        assert json.dumps(got) == json.dumps(want)


@pytest.mark.parametrize("text", BAD)
def test_loads_refuses_what_json_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError) as err:
        cjson.loads(text)
    assert getattr(err.value, "msg", str(err.value))


def test_what_json_cannot_write_is_refused_alike() -> None:
    for bad in ({"s": {1, 2}}, object()):
        with pytest.raises(TypeError):
            cjson.dumps(bad)
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        cjson.dumps(loop)
