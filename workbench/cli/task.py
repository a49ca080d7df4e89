"""`wb task …`: add, list, show, start, done, block and set tasks on the board, and pick the next one."""

from __future__ import annotations

from typing import Any

import typer

from workbench.cli import output, writes
from workbench.cli.app import start_dir
from workbench.cli.writes import TASK_LIST_KEYS, actor_of, parse_assignments

app = typer.Typer(help="Add, list, show, start, finish, block and edit tasks on the board.", no_args_is_help=True)


def _bench() -> Any:
    from workbench.api import Bench

    return Bench.open(start_dir())


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
    return writes.task_add(start_dir(), title, kind=kind, reviews=reviews, owner=owner, accept=accept,
                           depends_on=depends_on, description=description, actor=actor, json_=json_)


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
        if isinstance(value, list):  # each item shown on its own, so a comma inside one cannot fake two
            value = ", ".join(output.shown(v) for v in value) if value else "-"
        else:
            value = output.shown(value)
        output.say(f"{key:>14}  {value}")
    return 0


@app.command("start")
def start(task_id: str = typer.Argument(..., metavar="ID"), actor: str = ACTOR) -> int:
    """Mark a task in progress and make it the active task."""
    return writes.task_start(start_dir(), task_id, actor=actor)


@app.command("done")
def done(
    task_id: str = typer.Argument(..., metavar="ID"),
    force: bool = typer.Option(False, "--force", help="Mark done even if an acceptance command fails "
                                                      "(the override and the failures are recorded)."),
    actor: str = ACTOR,
) -> int:
    """Run the task's acceptance commands; mark it done only if every one exits 0."""
    return writes.task_done(start_dir(), task_id, force=force, actor=actor)


@app.command("block")
def block(
    task_id: str = typer.Argument(..., metavar="ID"),
    reason: str = typer.Option(..., "--reason", help="Why the task cannot go on (shown in wb status)."),
    actor: str = ACTOR,
) -> int:
    """Mark a task blocked, with the reason; it is listed among the blockers."""
    return writes.task_block(start_dir(), task_id, reason, actor=actor)


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
    changes = parse_assignments(assignments, TASK_LIST_KEYS)
    task = bench.set_task(task_id, changes, actor=actor_of(actor))
    if json_:
        output.emit_json(bench.show_task(task_id))
    elif bench.last.seqs:
        output.say(f"{task_id}: set {', '.join(sorted(changes))}")
    else:
        output.say(f"{task['id']}: nothing changed")
    output.report_write(bench)
    return 0


@app.command("next")
def next_(
    start: bool = typer.Option(False, "--start", help="Start it too (refused while another task is in progress)."),
    actor: str = ACTOR,
    json_: bool = JSON,
) -> int:
    """Pick the next task: the first ready one (todo, every dependency done, in board order)."""
    from workbench.errors import NotFound

    bench = _bench()
    picked = bench.next_task(start=start, actor=actor_of(actor))
    if json_:
        output.emit_json(picked)
        return 0
    task, active = picked["task"], picked["active"]
    if task is None:
        raise NotFound(picked["why"] + (f" ({active['id']} is in progress)" if active else ""))
    if picked["started"]:
        output.say(bench.last.summary)
        output.report_write(bench)
        return 0
    output.say(f"{task['id']} {task['title']}")
    if active:
        output.say(f"({active['id']} is in progress: finish it first with `wb task done {active['id']}`)")
    output.say(f"start it: wb task start {task['id']}   (or wb task next --start)")
    return 0
