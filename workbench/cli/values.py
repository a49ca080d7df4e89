"""Values as a person types them on the command line, parsed one way for every command that takes them: the
typer commands, main.py's fast path (cli/writes.py) and `wb task list` (cli/task_list.py) all import from here,
a module that imports nothing of theirs."""

from __future__ import annotations

from workbench.errors import UsageError


def priority_of(value: str | int | None) -> int | None:
    """A priority as typed (`--priority 1`, `priority=1`): 0 (highest) … 4; a UsageError for anything else."""
    if value is None or isinstance(value, int):
        return value
    if value.strip() not in ("0", "1", "2", "3", "4"):
        raise UsageError(f"priority {value!r}: one of 0 (highest), 1, 2 (the default), 3, 4")
    return int(value)
