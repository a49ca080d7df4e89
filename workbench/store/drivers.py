"""The git drivers wb registers in a repository: textconv for readable diffs and merge drivers for safe merges.

`.workbench/.gitattributes` names them (committed with the workbench); the repository's own git config says
which command runs them.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from workbench.git.repo import run_git
from workbench.model.layout import WB_DIR
from workbench.store.atomic import atomic_write

ATTRIBUTES = (
    "# wb: readable diffs and safe merges of the workbench (written by `wb init`)\n"
    "board.json diff=wb-board merge=wb-board\n"
    "events.jsonl diff=wb-events merge=wb-events\n"
    "state.md diff=wb-state merge=wb-state\n"
    "calls.jsonl merge=union\n"
)


def register_drivers(worktree: Path, wb_command: str) -> list[str]:
    """Register wb's textconv and merge drivers: .gitattributes lines and repo-local git config. Idempotent:
    returns what it changed (nothing on a second run)."""
    changed: list[str] = []
    attributes = worktree / WB_DIR / ".gitattributes"
    for stale in attributes.parent.glob(".tmp-*-.gitattributes"):  # an init killed mid-write (we hold the lock)
        stale.unlink(missing_ok=True)
    current = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    missing = [line for line in ATTRIBUTES.splitlines()[1:] if line not in current.splitlines()]
    if missing:
        text = current + ("\n" if current and not current.endswith("\n") else "")
        text += ATTRIBUTES if len(missing) == len(ATTRIBUTES.splitlines()) - 1 else "\n".join(missing) + "\n"
        atomic_write(attributes, text.encode("utf-8"))
        changed.append(".workbench/.gitattributes")
    wanted = {}
    for kind, name in (("board", "wb-board"), ("events", "wb-events"), ("state", "wb-state")):
        wanted[f"diff.{name}.textconv"] = f"{wb_command} textconv {kind}"
        wanted[f"diff.{name}.cachetextconv"] = "true"  # git log -p need not start wb for every old version
        wanted[f"merge.{name}.name"] = f"wb {kind} merge (by id; see docs/git.md)"
        wanted[f"merge.{name}.driver"] = f"{wb_command} merge-driver {kind} %O %A %B %P"
    for key, value in wanted.items():
        have = run_git(worktree, "config", "--local", "--get", key, check=False).stdout.decode().strip()
        if have != value:
            run_git(worktree, "config", "--local", key, value)
            changed.append(key)
    return changed


def wb_command() -> str:
    """How git should start this wb: the interpreter it runs in, so drivers work without wb on PATH."""
    return f"{shlex.quote(sys.executable)} -m workbench.cli.main"
