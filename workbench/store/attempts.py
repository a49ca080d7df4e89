"""Attempts a write refused after running something: a `wb task done` whose acceptance failed.

A refused write changes nothing in `.workbench/` and makes no commit, so the failure itself is kept in this
worktree's git directory (`.git/wb/attempts.jsonl`), where no checkout takes it and `git status` never shows
it: the handoff packet lists it among the session's failed attempts (issue 16 §3). One JSON line each,
appended whole; already redacted by the caller. Only the last MAX are read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from workbench.model.jsonl import loads_record, split_lines

MAX = 200


class Attempts:
    def __init__(self, git_dir: Path) -> None:
        self.path = git_dir / "wb" / "attempts.jsonl"

    def record(self, attempt: dict[str, Any]) -> None:
        """Append one attempt. Best effort: a record that cannot be written never hides the refusal itself."""
        line = json.dumps(attempt, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode() + b"\n"
        try:
            self.path.parent.mkdir(exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError:
            pass

    def read(self) -> list[dict[str, Any]]:
        """The last MAX attempts, oldest first (a torn or damaged line is skipped)."""
        try:
            raw = self.path.read_bytes()
        except OSError:
            return []
        out = [r for r in (loads_record(line) for line in split_lines(raw)[0]) if r is not None]
        return out[-MAX:]
