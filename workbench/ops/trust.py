"""`wb trust` / `wb untrust` as library functions: which of a workbench's commands this clone trusts, which wait
for a person's review, and the one-line notices `wb status` and `wb sync` give (store/trust.py keeps them)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from workbench.errors import NotFound
from workbench.store.trust import (
    Command,
    TrustStore,
    board_commands,
    config_commands,
    env_trusts,
    plan_command,
    setting_commands,
)
from workbench.store.workbench import Workbench

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def store_of(wb: Workbench) -> TrustStore:
    return TrustStore(wb.git.common_dir)


def commands(wb: Workbench, board: dict[str, Any] | None = None, plans: Iterable[Path] = ()) -> list[Command]:
    """Every command the workbench can run now: config.yaml's, the open tasks' acceptance, and the plan files
    named (those git tracks)."""
    if board is None:
        board = wb.load(detect_human=False).docs.board
    config = wb.config and wb.raw_config  # as written: the settings held back from wb.config included
    out = config_commands(config) + setting_commands(config) + board_commands(board)
    for path in plans:
        found = plan_command(wb.root, path)
        if found is None:
            raise NotFound(f"{path}: not a plan file git tracks in this work tree (a plan of your own needs no trust)")
        out.append(found)
    return out


def pending(wb: Workbench, board: dict[str, Any] | None = None, plans: Iterable[Path] = ()) -> list[Command]:
    """The commands not trusted on this clone (whatever WB_TRUST_REPO_COMMANDS says: this is what a person
    reviews)."""
    return store_of(wb).untrusted(commands(wb, board, plans))


def trust(wb: Workbench, cmds: list[Command]) -> int:
    """Record a person's trust of `cmds` (the caller has shown them and had a person confirm)."""
    return store_of(wb).add(cmds, by="person")


def untrust(wb: Workbench, names: list[str], everything: bool = False) -> int:
    """Forget trusted commands: all of them, or those named (a tool's name, a hook's topic, `planner`, a task
    id whose acceptance it is, a plan file's path). Returns how many were forgotten."""
    store = store_of(wb)
    records = store.records()
    if everything:
        return store.remove(records)
    gone: list[str] = []
    for name in names:
        hits = [d for d, r in records.items() if name == r.get("name") or name in (r.get("where") or [])]
        if not hits:
            raise NotFound(f"nothing trusted is named {name!r} (see `wb trust --list`)")
        gone += hits
    return store.remove(gone)


def listing(wb: Workbench) -> dict[str, Any]:
    """`wb trust --list --json`: what is trusted, and what is pending (in use here and not trusted)."""
    store = store_of(wb)
    records = store.records()
    waiting = store.untrusted(commands(wb))
    return {
        "store": str(store.path),
        "env": env_trusts(),  # WB_TRUST_REPO_COMMANDS=1: every command runs, trusted or not
        "trusted": [{"digest": d, **{k: v for k, v in r.items() if k != "digest"}} for d, r in sorted(records.items())],
        "pending": [{**c.record(), "label": c.label, "how": c.how} for c in waiting],
    }


def status_line(wb: Workbench, board: dict[str, Any]) -> dict[str, Any] | None:
    """For `wb status`: how many commands wait for `wb trust` (None when none does, or the environment trusts
    every command)."""
    if env_trusts():
        return None
    try:
        waiting = pending(wb, board)
    except OSError:
        return None
    if not waiting:
        return None
    return {"count": len(waiting), "commands": [c.label for c in waiting], "command": "wb trust"}


def digests(wb: Workbench) -> set[str]:
    """The digests of the untrusted commands now (before a sync, to tell what the sync brought)."""
    if env_trusts():
        return set()
    try:
        return {c.digest for c in pending(wb)}
    except Exception:  # noqa: BLE001 - a workbench that does not load yet: the sync says what is wrong
        return set()


def sync_notice(wb: Workbench, before: set[str]) -> str | None:
    """After a sync: one line when it brought commands this clone does not trust (the sync itself ran none)."""
    new = digests(wb) - before
    if not new or env_trusts():
        return None
    return f"{len(new)} command(s) came with the sync and are not trusted: review them with `wb trust`"
