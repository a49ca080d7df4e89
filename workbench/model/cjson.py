"""`json.loads` and compact `json.dumps(..., ensure_ascii=False)`, through the standard library's own C codec
(`_json`) without importing the `json` package: its import, with the regular expressions it compiles, is a
fifth of what an agent's hook costs (integrations/hookfast.py runs per tool call). Same parser, same output
bytes as `json` (tests/model/test_cjson.py compares them); where `_json` is missing, `json` itself.
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - an interpreter without the C accelerator
    _json = None  # type: ignore[assignment]

TYPE_CHECKING = False  # not typing's: this module is on every hook's path
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"


class _Context:
    """What `_json.make_scanner` reads off a decoder: json.JSONDecoder()'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def _not_serializable(o: object) -> Any:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


if _json is not None:
    _scan = _json.make_scanner(_Context())  # type: ignore[arg-type]  # it reads these attributes only


def loads(text: str) -> Any:
    """As `json.loads(text)`: ValueError (a json.JSONDecodeError, with its `msg`) for what is not JSON."""
    if _json is None:  # pragma: no cover
        import json

        return json.loads(text)
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:  # nothing a value could start with at that index
        import json

        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    rest = len(text) - len(text[end:].lstrip(_WHITESPACE))
    if rest != len(text):
        import json

        raise json.JSONDecodeError("Extra data", text, rest)
    return value


def dumps(value: Any) -> str:
    """As `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    encode = _json.make_encoder({}, _not_serializable, _json.encode_basestring, None, ":", ",", False, False, True)
    return "".join(encode(value, 0))
