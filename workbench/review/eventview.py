"""One line of what an event says, for `wb log` and git's textconv of events.jsonl.

No typer here: textconv runs on a fast path."""

from __future__ import annotations

import json
from typing import Any


def summarize(payload: dict[str, Any]) -> str:
    """One line of what an event says, from the payload keys people look for first."""
    if "task" in payload and isinstance(payload["task"], dict):
        return f"{payload['task'].get('id')} {payload['task'].get('title', '')}"
    parts = []
    for key in ("id", "step", "from", "to", "status", "tool", "args", "reason", "text", "goal", "changes", "file",
                "forced", "error", "summary", "limit"):
        if key in payload and payload[key] not in (None, "", {}, []):
            value = payload[key]
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(text if key in ("id", "step", "text", "goal") else f"{key}={text}")
    if isinstance(payload.get("yield"), dict):
        parts.append(f"waits: {payload['yield'].get('reason', '')}")
    line = " ".join(parts)
    return line if len(line) <= 110 else line[:109] + "…"
