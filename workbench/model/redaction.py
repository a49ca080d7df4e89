"""Secrets kept out of the record: the values of the environment variables config.yaml `redact` names never
reach events, state.md, board.json, calls.jsonl or a commit message."""

from __future__ import annotations

import os
from typing import Any

REDACTED = "[redacted]"


def secret_values(config: dict[str, Any]) -> list[str]:
    """The values of the environment variables that config.yaml `redact` names, longest first."""
    names = config.get("redact") or []
    return sorted({os.environ[n] for n in names if isinstance(n, str) and os.environ.get(n)}, key=len, reverse=True)


def redact(value: Any, secrets: list[str]) -> Any:
    """`value` with every secret in its strings (keys too) replaced by [redacted]; the same object when none."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    return value
