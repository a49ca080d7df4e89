"""`wb migrate`: upgrade the workbench files written by an older wb; `--dry-run` shows what would change."""

from __future__ import annotations

import json
from typing import Any

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def migrate_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change, per file, and write nothing."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable report (see docs/migrations.md)."),
) -> int:
    """Upgrade .workbench/ to the formats this wb reads, record `migration.apply` and commit. Idempotent; re-run
    it to finish a migration that was interrupted. A file newer than this wb is refused (exit 5)."""
    from workbench.api import Bench

    bench = Bench.open(start_dir())
    with output.Progress("planning the migration" if dry_run else "migrating .workbench/") as progress:
        report = bench.migrate(dry_run=dry_run, progress=progress)
    if json_:
        output.emit_json(report.to_json())
        return 0
    if not report.changed:
        found = ", ".join(f"{file} {'absent' if v is None else v}" for file, v in report.versions.items())
        output.say(f"already current ({found}): nothing to migrate")
        return 0
    if report.dry_run:
        output.say("dry run: `wb migrate` would make these changes (nothing was written)"
                   + (" to finish an interrupted migration" if report.resumed else ""))
    elif report.resumed:
        output.say("finished an interrupted migration")
    else:
        output.say("migrated .workbench/")
    width = max(len(f["file"]) for f in report.files)
    for f in report.files:
        output.say(f"{f['file'].ljust(width)}  {_versions(f)}")
        for change in f["changes"]:
            output.say("  " + _change(change))
    if not report.dry_run:
        if report.commit:
            output.say(f"committed {report.commit[:12]}")
        for warning in report.warnings:
            output.warn(warning)
    return 0


def _versions(f: dict[str, Any]) -> str:
    if f["to"] is None:
        return "created"
    if f["from"] is None:
        return f"created (version {f['to']})"
    return f"{f['from']} → {f['to']}"


def _change(c: dict[str, Any]) -> str:
    op, path = c["op"], c["path"]
    if op == "add":
        return f"+ {path}: {_value(c['new'])}"
    if op == "remove":
        return f"- {path}: {_value(c['old'])}"
    if op == "move":
        return f"> {c['from']} → {path}: {_value(c['new'])}"
    if op == "append" and isinstance(c["new"], list):
        return f"+ {path}: {', '.join(c['new'])}"
    if op == "append":
        return f"+ {path}: {_value(' '.join(c['new'].split()))}"
    return f"~ {path}: {_value(c['old'])} → {_value(c['new'])}"


def _value(value: Any, width: int = 72) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"
