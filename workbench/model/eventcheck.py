"""A quick yes for the usual event: the shape wb writes, checked by a few type tests and the schema's own
patterns in one expression, where the compiled validator (workbench/_validators/event.py) copies the key set
and walks it key by key — most of a first `wb validate`'s time after the parse at 50,000 events (issue 33).

It only ever says yes for an event the schema accepts (each test implies the schema's rule for that key); for
anything else — a float seq, a missing key, a wrong pattern — it says "ask", and the compiled validator decides,
so the verdict is the compiled validator's every time. tests/model/test_eventcheck.py holds it to that."""

from __future__ import annotations

from workbench._validators.event import REGEX_PATTERNS

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

_REQUIRED = frozenset(("schema_version", "seq", "id", "ts", "type", "actor", "session", "payload", "prev"))
_ALLOWED = _REQUIRED | {"via", "tty", "proof", "trust", "more"}
_ACTORS = frozenset(("agent", "human", "wb"))
_VIAS = frozenset(("terminal", "script", "mcp", "hook", "api", "edit", "git", "wb", "web"))
_PROOFS = frozenset(("tty-code", "web-token"))
_ID = REGEX_PATTERNS["^[0-9A-HJKMNP-TV-Z]{26}$"].search
_TS = REGEX_PATTERNS["^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$"].search
_TYPE = REGEX_PATTERNS["^[a-z]+(\\.[a-z_]+)+$"].search
_HASH = REGEX_PATTERNS["^[0-9a-f]{64}$"].search


_SHAPES: set[tuple[str, ...]] = set()  # key sequences seen to hold every required key and no other
_TYPES: set[str] = set()  # types seen to match the schema's pattern
_KEEP = 256  # at most this many of each: a log of odd shapes only costs the checks again


def surely_valid(event: Any) -> bool:
    """True only for an event the event schema accepts; False means "not decided here", not "invalid"."""
    if type(event) is not dict:
        return False
    shape = tuple(event)
    if shape not in _SHAPES:
        if not (_REQUIRED.issubset(shape) and _ALLOWED.issuperset(shape)):
            return False
        if len(_SHAPES) < _KEEP:
            _SHAPES.add(shape)
    kind = event["type"]
    if type(kind) is not str:
        return False
    if kind not in _TYPES:
        if not _TYPE(kind):
            return False
        if len(_TYPES) < _KEEP:
            _TYPES.add(kind)
    seq, id_, ts = event["seq"], event["id"], event["ts"]
    actor, session, prev = event["actor"], event["session"], event["prev"]
    version = event["schema_version"]
    if not (type(version) is int and version == 1 and type(seq) is int and seq >= 1
            and type(id_) is str and _ID(id_) and type(ts) is str and _TS(ts)
            and type(actor) is str and actor in _ACTORS
            and (session is None or type(session) is str) and type(event["payload"]) is dict
            and (prev is None or (type(prev) is str and _HASH(prev)))):
        return False
    if len(shape) == len(_REQUIRED):
        return True
    via, tty, proof = event.get("via", "wb"), event.get("tty", False), event.get("proof", "tty-code")
    trust, more = event.get("trust", "env"), event.get("more", 1)
    return (type(via) is str and via in _VIAS and type(tty) is bool and type(proof) is str and proof in _PROOFS
            and type(trust) is str and trust == "env" and type(more) is int and more >= 1)
