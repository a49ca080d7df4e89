"""JSON Schemas: where they live, the compiled validators of the write path, one-line error messages, and
the schema_version gate (which versions of a file this wb reads).

Only this module touches jsonschema. The write path calls `check()`, which runs validators compiled ahead
of time (workbench/_validators, see tools/gen_validators.py); when one refuses, jsonschema — the authority —
renders the message `FILE: JSON.PATH: what is wrong`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from workbench.errors import Refused, SchemaRefused

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

KINDS = ("state", "board", "event", "call", "config", "plan", "handoff")  # handoff: issue 16


def schema_dir() -> Path:
    package = Path(__file__).resolve().parent.parent  # workbench/
    installed = package / "schemas"  # a wheel carries them inside the package
    if installed.is_dir():
        return installed
    return package.parent / "schemas"  # a source checkout / editable install


@cache
def load_schema(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((schema_dir() / f"{kind}.schema.json").read_text(encoding="utf-8"))
    return data


@cache
def _compiled(kind: str) -> Any:
    import importlib  # here: a reader that checks nothing (`wb task list`) imports none of it

    return importlib.import_module(f"workbench._validators.{kind}").validate


@cache
def _validator(kind: str) -> Any:
    import jsonschema

    schema = load_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check_version(file: str, found: Any, known: int) -> None:
    """Refuse a file whose schema_version this wb does not read: older ones `wb migrate` upgrades first."""
    if found is None:  # no schema_version at all: a file from wb 0.0.x, which `wb migrate` reads as version 0
        raise Refused(f"{file}: no schema_version (a wb 0.0.x file, version 0; this wb reads {known}); "
                      "run `wb migrate`")
    if not isinstance(found, int) or isinstance(found, bool):
        return  # the schema check names the problem
    if found > known:
        raise Refused(f"{file}: schema_version {found} is newer than this wb understands ({known}); upgrade wb")
    if found < known:
        raise Refused(f"{file}: schema_version {found} is older than this wb's {known}; run `wb migrate`")


@cache
def _quick(kind: str) -> Any:
    """A quick yes for the usual document of `kind` (None: none), never a no: model/eventcheck.py."""
    if kind == "event":
        from workbench.model.eventcheck import surely_valid

        return surely_valid
    return None


def is_valid(kind: str, doc: Any) -> bool:
    quick = _quick(kind)
    if quick is not None and quick(doc):  # the usual event, at a fraction of the compiled validator's time
        return True
    try:
        _compiled(kind)(doc)
    except ValueError:
        return False
    return True


def check(kind: str, doc: Any, file: str) -> None:
    """Raise SchemaRefused naming file, JSON path and rule when `doc` breaks the `kind` schema."""
    if is_valid(kind, doc):
        return
    errors = list(iter_errors(kind, doc, file))
    if errors:
        raise errors[0]
    # The compiled validator and jsonschema disagree: trust the stricter answer, and say so.
    raise SchemaRefused(file, "", "refused by the compiled validator but not by jsonschema (a wb bug)")


def errors(kind: str, doc: Any, file: str) -> list[SchemaRefused]:
    """`iter_errors`, asked only when the compiled validator refuses `doc` (as `check` asks): a whole log is
    checked at the compiled validators' speed, and a refusal still reads as jsonschema words it (issue 33:
    SQLite's validate and doctor ran jsonschema on each of 50,000 events, 4x the files backend's time)."""
    return [] if is_valid(kind, doc) else list(iter_errors(kind, doc, file))


def iter_errors(kind: str, doc: Any, file: str) -> Iterator[SchemaRefused]:
    """Every violation, most relevant first, each as a SchemaRefused."""
    from jsonschema.exceptions import relevance

    validator = _validator(kind)
    for error in sorted(validator.iter_errors(doc), key=relevance):
        error = _descend(error)
        yield SchemaRefused(file, json_path(error.absolute_path), describe(error))


def _descend(error: Any) -> Any:
    """For a failed oneOf/anyOf, report the branch the document meant rather than "not valid under any".

    Tagged variants (build/review tasks) are told apart by their `kind` const; a nullable value by its
    non-null branch.
    """
    from jsonschema.exceptions import relevance

    while error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict[Any, list[Any]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        meant = [
            subs
            for subs in branches.values()
            if not any(s.validator == "const" and list(s.relative_path) == ["kind"] for s in subs)
            and not any(s.validator == "type" and s.validator_value == "null" for s in subs)
        ]
        if len(meant) != 1:
            return error
        error = sorted(meant[0], key=relevance)[0]
    return error


def json_path(parts: Any) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _j(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(error: Any) -> str:
    v, val, inst = error.validator, error.validator_value, error.instance
    if v == "enum":
        return f"{_j(inst)} is not one of {', '.join(_j(x) for x in val)}"
    if v == "const":
        return f"{_j(inst)} must be {_j(val)}"
    if v == "type":
        types = " or ".join(val) if isinstance(val, list) else val
        return f"{_j(inst)} is not of type {types}"
    if v == "required":
        missing = [k for k in val if isinstance(inst, dict) and k not in inst]
        return f"missing required key {', '.join(repr(k) for k in missing)}"
    if v == "additionalProperties":
        extra = sorted(k for k in inst if k not in error.schema.get("properties", {}))
        return f"unknown key {', '.join(repr(k) for k in extra)} (not allowed by the schema)"
    if v == "pattern":
        return f"{_j(inst)} does not match {val}"
    if v in ("minimum", "exclusiveMinimum"):
        return f"{_j(inst)} is below the {v} {val}"
    if v == "maxLength" and isinstance(inst, str):  # one cap per free-text field (issue 30): say it in words
        return (f"{len(inst):,} characters, over the cap of {val:,}; nothing was written: keep long text in a "
                "file of the repository and give its path")
    if v in ("minLength", "maxLength", "minItems"):
        return f"{_j(inst)} breaks {v} {val}"
    return f"{error.message} ({v})"
