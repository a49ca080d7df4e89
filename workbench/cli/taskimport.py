"""`wb task import FILE`: many tasks in one validated commit, from a JSON task list or a Markdown checklist.
Registered on the `wb task` group by cli/app.py (GROUP_EXTENSIONS), beside cli/task.py's commands."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from workbench.cli import output
from workbench.cli.app import start_dir
from workbench.cli.task import ACTOR, JSON, app
from workbench.cli.writes import actor_of

HELP = (
    "Add many tasks in one validated transaction and one commit, from FILE (`-`: stdin).\n\n"
    "FILE is a JSON list of tasks in the board's task shape (only `title` is required; `kind`, `owner`, `status`, "
    "`acceptance`, `depends_on`, `description`, `reviews`, `scope`, `priority`, `labels`, `parent` and "
    "`assignee` as on the board; an object with the list "
    "under \"tasks\" works too), or a Markdown checklist:\n\n"
    "    - [ ] Write the parser\n"
    "      id: T-101\n"
    "      accept: pytest -q tests/test_parser.py\n"
    "      depends: T-004\n"
    "    - [ ] Document it\n"
    "      depends: T-101\n"
    "    - [-] Drop the old parser\n\n"
    "`- [ ]` is a task to do, `- \\[x]` one done already (it may have no acceptance commands: `wb task done` "
    "runs those), `- [-]` one cancelled. Indented under an item, one `key: value` a line: `id`, `accept` "
    "(repeatable), `depends` (ids, repeatable), `description`, `owner`, `kind`, `reviews`, `allow` and `forbid` "
    "(scope globs, repeatable), `priority` (0 highest … 4 lowest), `labels` (repeatable), `parent` and `assignee`. "
    "Blank lines, headings and prose at the left margin are skipped; a list item "
    "without a checkbox, a nested item or an unknown key refuses. The format comes from the suffix (.json; .md, "
    ".markdown, .txt), else from the first character (`[` or `{`: JSON), unless --format says.\n\n"
    "Ids are allocated as `wb task add` allocates them, in file order. An `id` the file gives is a name for "
    "`depends`/`reviews`/`parent` further down the file (a task depends only on tasks above it or on the board); any "
    "other id must be on the board. All or nothing: the first bad entry refuses the whole import (exit 5), "
    "naming its line (Markdown) or index (JSON), and nothing is written. --json prints the ids added.\n\n"
    "The file's acceptance commands are the file's, not yours: they wait for a person's `wb trust` before "
    "`wb task done` runs them (a person proven at the terminal trusts them by importing)."
)


@app.command("import", help=HELP)
def import_(
    file: str = typer.Argument(..., metavar="FILE", help="The JSON or Markdown file (`-`: read stdin)."),
    format_: str = typer.Option(None, "--format", metavar="FORMAT", help="json or markdown (default: from the "
                                                                         "suffix, else the first character)."),
    actor: str = ACTOR,
    json_: bool = JSON,
) -> int:
    from workbench.api import Bench
    from workbench.errors import UsageError

    if file == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(file).read_bytes()
        except OSError as err:
            raise UsageError(f"cannot read {file}: {err.strerror or err}") from None
    bench = Bench.open(start_dir())
    who = actor_of(actor)
    with output.Progress("importing tasks") as progress:
        added = bench.import_tasks(data, format=format_, name=file, actor=who, progress=progress)
    if json_:
        output.emit_json([t["id"] for t in added])
    elif not added:
        output.say(f"nothing to import: {'stdin' if file == '-' else file} holds no tasks")
    else:
        span = added[0]["id"] if len(added) == 1 else f"{added[0]['id']}…{added[-1]['id']}"
        output.say(f"imported {len(added)} task{'s' if len(added) != 1 else ''}: {span}")
    output.report_write(bench)
    return 0
