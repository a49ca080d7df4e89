"""The wb section of AGENTS.md (`wb init --agents-md`): the one file outside `.workbench/` wb writes, and only
when asked."""

from __future__ import annotations

from pathlib import Path

from workbench.errors import Refused

AGENTS_BEGIN = "<!-- wb:begin -->"
AGENTS_END = "<!-- wb:end -->"
AGENTS_SECTION = f"""{AGENTS_BEGIN}
## Working state: wb

This repository keeps the coding agent's working state in `.workbench/`, through `wb`.

- Start each session with `wb status --json`: the active task, the next action, blockers, and any harness
  session waiting for you (with the command that resumes it).
- Record your work through wb as you go: `wb task add "TITLE" --accept "CMD"`, `wb task start T-001`,
  `wb task done T-001` (runs the acceptance commands), `wb task block T-001 --reason "..."`,
  `wb note "what you decided and why"`, and `wb set next_action="..."` before you stop.
- Do not edit files under `.workbench/` by hand: each wb command validates, logs and commits its change.
{AGENTS_END}
"""


def write_agents_md(root: Path) -> str:
    """Add the wb section to AGENTS.md at the repository root, or bring it up to date between its markers.
    Returns "created", "added", "updated" or "unchanged". Never touches text outside the markers."""
    from workbench.store.atomic import atomic_write

    path = root / "AGENTS.md"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        atomic_write(path, AGENTS_SECTION.encode())
        return "created"
    begin, end = text.find(AGENTS_BEGIN), text.find(AGENTS_END)
    if begin == -1 and end == -1:
        sep = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        atomic_write(path, (text + sep + AGENTS_SECTION).encode())
        return "added"
    if begin == -1 or end == -1 or end < begin or text.count(AGENTS_BEGIN) > 1:
        raise Refused(f"AGENTS.md: the wb markers are damaged (one {AGENTS_BEGIN} then one {AGENTS_END} "
                      "expected); fix or remove them, then rerun `wb init --agents-md`")
    stop = end + len(AGENTS_END)
    if text[stop:stop + 1] == "\n":
        stop += 1
    new = text[:begin] + AGENTS_SECTION + text[stop:]
    if new == text:
        return "unchanged"
    atomic_write(path, new.encode())
    return "updated"
