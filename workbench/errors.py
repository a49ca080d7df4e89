"""The one error hierarchy. Library code raises these; only the CLI entry point turns them into exit codes."""

from __future__ import annotations


class WorkbenchError(Exception):
    """An error meant for the user: one line, with what to do next."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(WorkbenchError):
    exit_code = 2


class NotFound(WorkbenchError):
    """A workbench, task or repository that the command needs does not exist."""

    exit_code = 1


class Refused(WorkbenchError):
    """A write or a load refused on purpose: validation, schema version, a rule of the board."""

    exit_code = 5


class SchemaRefused(Refused):
    """A document broke its JSON Schema. Carries the file, the JSON path and the rule."""

    def __init__(self, file: str, path: str, rule: str) -> None:
        self.file = file
        self.path = path
        self.rule = rule
        where = f"{file}: {path}" if path else file
        super().__init__(f"{where}: {rule}")


class Busy(WorkbenchError):
    """Another process holds the workbench, or a human edit is being protected."""

    exit_code = 6


class GitError(WorkbenchError):
    exit_code = 1


class Untrusted(WorkbenchError):
    """A command the workbench would run (a config.yaml tool, hook or planner, a task's acceptance, a plan file
    git tracks) is not trusted on this clone: it came through git, or by a hand edit. Refused before anything
    runs (exit 5); the message names `wb trust`, which a person runs to review and trust it."""

    exit_code = 5

    def __init__(self, label: str, count: int = 1, plan: str | None = None) -> None:
        self.label = label
        self.count = count
        more = f"; {count - 1} more command(s) are not trusted either" if count > 1 else ""
        how = f"`wb trust --plan {plan}`" if plan else "`wb trust`"
        super().__init__(f"{label} is not trusted on this clone (it came through git, or by a hand edit{more}): "
                         f"review and trust it with {how}")


class PersonRequired(Refused):
    """A person-only action asked for by someone wb cannot prove is a person (exit 5). The message tells the
    agent to ask a person and names the command the person runs; it never names a way around the proof."""

    def __init__(self, action: str, command: str, why: str = "") -> None:
        self.action = action
        self.command = command
        because = f" ({why})" if why else ""
        super().__init__(f"{action} needs a person{because}: ask a person to run: {command}")
