"""model/clip.loads_any_depth: JSON nested deeper than Python's parser goes is read with its deep part clipped
(a hostile hook payload), and JSON that json.loads reads is read exactly as json.loads reads it."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.model.clip import CLIP_DEPTH, loads_any_depth

values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                      max_leaves=20)


def depth(value: object) -> int:
    d = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list) and item:
            d = max(d, level)
            stack += [(v, level + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return d


@given(values)
def test_what_json_reads_is_read_the_same(value: object) -> None:
    text = json.dumps(value)
    assert loads_any_depth(text) == json.loads(text)


@given(st.integers(min_value=3000, max_value=6000), st.sampled_from(['"x"', '"a \\" ] } [ {"', "[1,2]", "{}"]),
       st.sampled_from(["[", '{"k":']))
def test_a_value_too_deep_for_python_is_clipped_below_the_limit(levels: int, leaf: str, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    text = opener * levels + leaf + closer * levels
    with pytest.raises(RecursionError):
        json.loads(text)
    value = loads_any_depth(text)
    assert depth(value) <= CLIP_DEPTH + 1
    node = value
    for _ in range(CLIP_DEPTH):
        node = node[0] if isinstance(node, list) else node["k"]
    assert node["truncated"] is True  # the head, size and digest of what was cut, as clip() gives them
    cut = text[CLIP_DEPTH * len(opener):len(text) - CLIP_DEPTH]
    assert node["bytes"] == len(cut.encode()) and node["sha256"] == hashlib.sha256(cut.encode()).hexdigest()


def test_brackets_that_never_close_are_not_json() -> None:
    with pytest.raises(ValueError):
        loads_any_depth("[" * 5000)
