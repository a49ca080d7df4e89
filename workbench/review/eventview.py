"""One line of what an event says, for `wb log` and git's textconv of events.jsonl.

No typer here: textconv runs on a fast path."""

from __future__ import annotations

import json
from typing import Any


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters: whole when it fits, else cut at a word boundary with an ellipsis
    (issue 31: `…are templ…` reads as a typo); a single word longer than the width is cut where it must be."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    if not text[width - 1].isspace():
        words = head.rsplit(None, 1)
        if len(words) == 2 and len(words[0]) >= width // 2:  # a word boundary not too far back
            head = words[0]
    return head.rstrip() + "…"


def summarize(payload: dict[str, Any]) -> str:
    """One line of what an event says, from the payload keys people look for first."""
    if "task" in payload and isinstance(payload["task"], dict):
        return f"{payload['task'].get('id')} {payload['task'].get('title', '')}"
    parts = _config_edit(payload) + _refused(payload)
    for key in ("id", "step", "from", "to", "status", "tool", "args", "reason", "text", "goal", "changes", "file",
                "forced", "error", "summary", "limit"):
        if key in payload and payload[key] not in (None, "", {}, []):
            value = payload[key]
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(text if key in ("id", "step", "text", "goal") else f"{key}={text}")
    if isinstance(payload.get("yield"), dict):
        parts.append(f"waits: {payload['yield'].get('reason', '')}")
    line = " ".join(parts)
    return cut(line, 110)


def _config_edit(payload: dict[str, Any]) -> list[str]:
    """config.edit: `tools +lint +fmt -old ~pytest`, and the same for hooks and top-level keys."""
    from workbench.store.configedit import describe

    return describe(payload)


def _refused(payload: dict[str, Any]) -> list[str]:
    """agent.edit_refused (and an agent.edit's own refusals): `refused T-001.acceptance, T-001.scope`."""
    refused = payload.get("refused")
    if not isinstance(refused, list) or not refused:
        return []
    names = [f"{r.get('task')}.{r.get('field') or r.get('status') and 'status' or 'removed'}" for r in refused
             if isinstance(r, dict)]
    return ["refused " + ", ".join(names)] if names else []


PROOFS = {"tty-code": "proven at a terminal", "web-token": "proven by the page's one-time token"}


def who_shown(event: dict[str, Any]) -> str:
    """`human (proven at a terminal)`, `agent (mcp)`, `human (terminal)`: the actor and how wb knows; an event
    from before provenance was recorded (no `via`) shows its actor alone, and wb's own bookkeeping is `wb`."""
    actor = str(event.get("actor", "?"))
    proof = event.get("proof")
    if proof:
        return f"{actor} ({PROOFS.get(str(proof), str(proof))})"
    via = event.get("via")
    if not via or via == "wb" or actor == "wb":
        return actor
    return f"{actor} ({via})"
