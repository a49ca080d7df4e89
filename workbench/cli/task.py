"""`wb task …`: add, list, show, start, done, block and set tasks on the board."""

from __future__ import annotations

import sys
from typing import Any

import typer

from workbench.cli import output
from workbench.cli.app import start_dir
from workbench.cli.set_state import parse_assignments

app = typer.Typer(help="Add, list, show, start, finish, block and edit tasks on the board.", no_args_is_help=True)


def _bench() -> Any:
    from workbench.api import Bench

    return Bench.open(start_dir())


def actor_of(value: str | None) -> str:
    from workbench.cli.note import actor_of as check

    return check(value)


ACTOR = typer.Option(None, "--actor", help="Who does it: agent or human (default: human on a terminal, agent "
                                           "otherwise).")
JSON = typer.Option(False, "--json", help="Machine-readable output (see docs/json.md).")


@app.command("add")
def add(
    title: str = typer.Argument(..., help="What the task is, in one line."),
    kind: str = typer.Option("build", "--kind", help="build, or review (then --reviews is required)."),
    reviews: str = typer.Option(None, "--reviews", metavar="ID", help="The task a review task reviews."),
    owner: str = typer.Option(None, "--owner", help="builder, reviewer or human (default by kind)."),
    accept: list[str] = typer.Option(None, "--accept", metavar="CMD",
                                     help="An acceptance command (repeatable); `done` runs each."),
    depends_on: list[str] = typer.Option(None, "--depends-on", metavar="ID", help="A prerequisite (repeatable)."),
    description: str = typer.Option(None, "--description", help="Longer text."),
    actor: str = ACTOR,
    json_: bool = JSON,
) -> int:
    """Add a task to the board and print its new id."""
    bench = _bench()
    task = bench.add_task(title, kind=kind, owner=owner, acceptance=accept or [], depends_on=depends_on or [],
                          description=description, reviews=reviews, actor=actor_of(actor))
    if json_:
        output.emit_json(task)
    else:
        output.say(f"{task['id']} added: {task['title']}")
    output.report_write(bench)
    return 0


@app.command("list")
def list_(
    status: str = typer.Option(None, "--status", help="Only tasks with this status."),
    json_: bool = JSON,
) -> int:
    """List the tasks on the board."""
    tasks = _bench().list_tasks(status)
    if json_:
        output.emit_json(tasks)
        return 0
    if not tasks:
        output.say("no tasks" + (f" with status {status}" if status else "") + " (add one: wb task add TITLE)")
        return 0
    rows = [[t["id"], t["status"], t["kind"], t["owner"], t["title"]] for t in tasks]
    output.table(["ID", "STATUS", "KIND", "OWNER", "TITLE"], rows)
    return 0


@app.command("show")
def show(task_id: str = typer.Argument(..., metavar="ID"), json_: bool = JSON) -> int:
    """Show one task with all its fields."""
    task = _bench().show_task(task_id)
    if json_:
        output.emit_json(task)
        return 0
    for key, value in task.items():
        if isinstance(value, list):
            value = ", ".join(value) if value else "-"
        output.say(f"{key:>14}  {value}")
    return 0


@app.command("start")
def start(task_id: str = typer.Argument(..., metavar="ID"), actor: str = ACTOR) -> int:
    """Mark a task in progress and make it the active task."""
    bench = _bench()
    if bench.show_task(task_id).get("status") == "in_progress":
        output.say(f"{task_id} is already in progress: nothing to do")
        return 0
    bench.start_task(task_id, actor=actor_of(actor))
    output.say(bench.last.summary)
    output.report_write(bench)
    return 0


@app.command("done")
def done(
    task_id: str = typer.Argument(..., metavar="ID"),
    force: bool = typer.Option(False, "--force", help="Mark done even if an acceptance command fails "
                                                      "(the override and the failures are recorded)."),
    actor: str = ACTOR,
) -> int:
    """Run the task's acceptance commands; mark it done only if every one exits 0."""
    bench = _bench()

    def report(stage: str, result: dict[str, Any]) -> None:
        # progress, on a terminal's stderr: stdout stays the one-line outcome, and without a terminal the error
        # stays one line (it names the failure's last line)
        if not sys.stderr.isatty():
            return
        if stage == "start":  # say what runs before it runs: a long test suite is not a hang
            sys.stderr.write(f"$ {result['cmd']}\n")
        elif result["exit"] != 0:
            sys.stderr.write(f"  {result['outcome']}; the end of its output:\n")
            for line in (result.get("output_tail") or "").rstrip().splitlines()[-15:]:
                sys.stderr.write(f"  | {line}\n")
        sys.stderr.flush()

    bench.done_task(task_id, force=force, actor=actor_of(actor), report=report)
    output.say(bench.last.summary)
    output.report_write(bench)
    return 0


@app.command("block")
def block(
    task_id: str = typer.Argument(..., metavar="ID"),
    reason: str = typer.Option(..., "--reason", help="Why the task cannot go on (shown in wb status)."),
    actor: str = ACTOR,
) -> int:
    """Mark a task blocked, with the reason; it is listed among the blockers."""
    bench = _bench()
    bench.block_task(task_id, reason, actor=actor_of(actor))
    output.say(bench.last.summary)
    output.report_write(bench)
    return 0


@app.command("set")
def set_(
    task_id: str = typer.Argument(..., metavar="ID"),
    assignments: list[str] = typer.Argument(..., metavar="KEY=VALUE...",
                                            help="title, description, owner, status, reviews, acceptance, "
                                                 "depends_on (lists: a JSON array or one item)."),
    actor: str = ACTOR,
    json_: bool = JSON,
) -> int:
    """Change fields of a task (the board's schema refuses bad values)."""
    bench = _bench()
    changes = parse_assignments(assignments, ("acceptance", "depends_on"))
    task = bench.set_task(task_id, changes, actor=actor_of(actor))
    if json_:
        output.emit_json(bench.show_task(task_id))
    elif bench.last.seqs:
        output.say(f"{task_id}: set {', '.join(sorted(changes))}")
    else:
        output.say(f"{task['id']}: nothing changed")
    output.report_write(bench)
    return 0
