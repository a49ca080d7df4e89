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
ALLOW = typer.Option(None, "--allow", metavar="GLOB", help="A path the task may change, gitignore-style "
                                                           "(repeatable; none: anywhere).")
FORBID = typer.Option(None, "--forbid", metavar="GLOB", help="A path the task must not change (repeatable); "
                                                             "`done` refuses when it did.")
APPROVAL = typer.Option(None, "--approval", metavar="TEXT", help="An action outside the scope that needs a "
                                                                 "person (repeatable).")
OUTSIDE = typer.Option(None, "--outside", metavar="LEVEL", help="A change outside --allow: warn (default) or "
                                                                "block.")


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
    allow: list[str] = ALLOW,
    forbid: list[str] = FORBID,
    approval: list[str] = APPROVAL,
    outside: str = OUTSIDE,
    priority: str = typer.Option(None, "--priority", metavar="0-4", help="0 highest … 4 lowest (default 2); "
                                                                        "`wb task next` takes the highest first."),
    label: list[str] = typer.Option(None, "--label", metavar="LABEL", help="A short label (repeatable)."),
    parent: str = typer.Option(None, "--parent", metavar="ID", help="The epic this task belongs to (a parent is "
                                                                    "done only once its children are)."),
    assignee: str = typer.Option(None, "--assignee", metavar="NAME", help="Who the task is for (beside claims)."),
    actor: str = ACTOR,
    json_: bool = JSON,
) -> int:
    """Add a task to the board and print its new id."""
    return writes.task_add(start_dir(), title, kind=kind, reviews=reviews, owner=owner, accept=accept,
                           depends_on=depends_on, description=description, actor=actor, json_=json_,
                           allow=allow, forbid=forbid, approval=approval, outside=outside, priority=priority,
                           label=label, parent=parent, assignee=assignee)


@app.command("list")
def list_(
    status: str = typer.Option(None, "--status", help="Only tasks with this status."),
    ready: bool = typer.Option(False, "--ready", help="Only tasks ready to start: todo, every dependency done."),
    blocked: bool = typer.Option(False, "--blocked", help="Only blocked tasks and todo ones waiting on a "
                                                          "dependency."),
    label: str = typer.Option(None, "--label", metavar="LABEL", help="Only tasks with this label."),
    priority: str = typer.Option(None, "--priority", metavar="0-4", help="Only tasks of this priority."),
    parent: str = typer.Option(None, "--parent", metavar="ID", help="Only the children of this task."),
    assignee: str = typer.Option(None, "--assignee", metavar="NAME", help="Only tasks assigned to NAME."),
    search: str = typer.Option(None, "--search", metavar="TEXT", help="Only tasks whose title, description, "
                                                                      "labels or comments hold TEXT (any case)."),
    tree: bool = typer.Option(False, "--tree", help="Children under their parent, indented."),
    limit: int = typer.Option(None, "--limit", metavar="N", min=1, help="At most N tasks (a line says how many "
                                                                       "more)."),
    all_: bool = typer.Option(False, "--all", help="The archived tasks too (the oldest finished ones, moved off "
                                                   "the board into .workbench/archive/), after the board's."),
    json_: bool = JSON,
) -> int:
    """List the tasks on the board (and, with --all, those in its archive), with what each waits on."""
    return writes.task_list(start_dir(), status=status, ready=ready, blocked=blocked, label=label, priority=priority,
                            parent=parent, assignee=assignee, search=search, tree=tree, limit=limit, all_=all_,
                            json_=json_)


@app.command("show")
def show(task_id: str = typer.Argument(..., metavar="ID"), json_: bool = JSON) -> int:
    """Show one task with all its fields."""
    task = _bench().show_task(task_id)
    if json_:
        output.emit_json(task)
        return 0
    for key, value in task.items():
        if key in ("scope", "proof", "comments"):
            continue
        if isinstance(value, list):  # each item shown on its own, so a comma inside one cannot fake two
            value = ", ".join(output.shown(v) for v in value) if value else "-"
        else:
            value = output.shown(value)
        output.say(f"{key:>14}  {value}")
    for line in proof_lines(task):
        output.say(output.shown(line))
    for comment in task.get("comments") or []:  # issue 22
        output.say(output.shown(f"{'comment':>14}  {comment['ts']} {comment['actor']}: {comment['text']}"))
    return 0


@app.command("edit")
def edit(task_id: str = typer.Argument(..., metavar="ID"), actor: str = ACTOR) -> int:
    """Edit a task's fields in $EDITOR (as JSON). Checked on save like `wb task set`; a bad value is refused
    naming file, path and rule, and your text is kept under the git dir (the path is printed) and reopened by
    the next `wb task edit ID`: nothing is lost."""
    import json
    import os
    import shlex
    import subprocess

    from workbench.api import SETTABLE_TASK_KEYS
    from workbench.errors import UsageError, WorkbenchError

    bench = _bench()
    task = bench.show_task(task_id)
    shown = {k: task[k] for k in SETTABLE_TASK_KEYS if k in task}
    defaults = {"priority": 2, "labels": [], "parent": None, "assignee": None}
    for key, value in defaults.items():
        shown.setdefault(key, value)
    kept = bench.wb.git.git_dir / "wb" / "edit" / f"{task_id}.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    reopened = kept.exists()
    if reopened:
        output.say(f"reopening your last edit of {task_id}, kept in {kept}")
    else:
        kept.write_text(json.dumps(shown, indent=2, ensure_ascii=False) + "\n")
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    if subprocess.run([*shlex.split(editor), str(kept)]).returncode != 0:
        raise UsageError(f"{editor} exited non-zero; nothing changed (your text is kept in {kept})")
    text = kept.read_text()
    try:
        try:
            edited = json.loads(text)
        except ValueError as err:
            raise UsageError(f"{kept}: line {getattr(err, 'lineno', '?')}: not JSON ({err})") from None
        if not isinstance(edited, dict):
            raise UsageError(f"{kept}: (top level): a JSON object of the task's fields")
        changes = {k: v for k, v in edited.items()
                   if v != shown.get(k) and not (k not in task and v == defaults.get(k, object()))}
        changes.update({k: None for k in shown if k not in edited})
        if changes:
            bench.set_task(task_id, changes, actor=actor_of(actor))
    except WorkbenchError as err:
        err.message = f"{err.message}; your edit is kept in {kept} (`wb task edit {task_id}` reopens it)"
        raise
    kept.unlink()
    output.say(f"{task_id}: set {', '.join(sorted(changes))}" if changes else f"{task_id}: nothing changed")
    output.report_write(bench)
    return 0


@app.command("comment")
def comment(
    task_id: str = typer.Argument(..., metavar="ID"),
    text: str = typer.Argument(..., help="The comment (recorded as an event; `wb task show` lists them)."),
    actor: str = ACTOR,
) -> int:
    """Add a comment to a task."""
    bench = _bench()
    bench.comment_task(task_id, text, actor=actor_of(actor))
    output.say(f"{task_id}: comment added")
    output.report_write(bench)
    return 0


@app.command("delete")
def delete(task_id: str = typer.Argument(..., metavar="ID"), actor: str = ACTOR) -> int:
    """Take a cancelled task off the board (it moves to the archive: `wb task show` and `list --all` still find
    it). Only a cancelled task: cancel it first with `wb task set ID status=cancelled`."""
    bench = _bench()
    file = bench.delete_task(task_id, actor=actor_of(actor))
    output.say(f"{task_id} deleted from the board (kept in .workbench/{file})")
    output.report_write(bench)
    return 0


def proof_lines(task: dict[str, Any]) -> list[str]:
    """The scope contract and the proof of done, as `wb task show` prints them (issue 16)."""
    lines = []
    scope = task.get("scope") or {}
    for key in ("allowed", "forbidden", "approvals_required"):
        if scope.get(key):
            lines.append(f"{key:>14}  {', '.join(scope[key])}")
    if scope.get("outside") or scope.get("severity"):
        families = ", ".join(f"{f['glob']}={f['level']}" for f in scope.get("severity") or [])
        lines.append(f"{'outside':>14}  {scope.get('outside', 'warn')}" + (f" ({families})" if families else ""))
    proof = task.get("proof")
    if proof:
        lines.append(f"{'proof':>14}  event {proof['event']} at HEAD {str(proof.get('head') or '-')[:12]}"
                     + ("  FORCED: done although a check failed or the scope refused" if proof.get("forced") else ""))
        for check in proof.get("checks", []):
            lines.append(f"{'':>14}  exit {check['exit']:<3} {check.get('seconds', 0):>7.2f}s  "
                         f"{str(check.get('sha256', ''))[:12]:<12}  $ {check['cmd']}")
        for finding in proof.get("scope_findings", []):
            level = finding.get("severity") or "forbidden"
            lines.append(f"{'scope':>14}  {level}: {finding['path']}"
                         + (f" ({finding['glob']})" if finding.get("glob") else ""))
        if proof.get("override"):
            lines.append(f"{'override':>14}  {proof['override']}")
    elif task.get("forced_done"):
        lines.append(f"{'proof':>14}  FORCED done (no proof recorded)")
    return lines


@app.command("start")
def start(
    task_id: str = typer.Argument(..., metavar="ID"),
    force: bool = typer.Option(False, "--force", help="Start it although a dependency is not done (or was "
                                                      "cancelled; recorded). Person-only: asks for a code on the "
                                                      "terminal."),
    actor: str = ACTOR,
) -> int:
    """Mark a task in progress and make it the active task. Refused while a dependency is not done."""
    return writes.task_start(start_dir(), task_id, actor=actor, force=force)


@app.command("done")
def done(
    task_id: str = typer.Argument(..., metavar="ID"),
    force: bool = typer.Option(False, "--force", help="Mark done even if an acceptance command fails, the scope "
                                                      "refuses or a dependency is not done (recorded). "
                                                      "Person-only: asks for a code on the terminal."),
    actor: str = ACTOR,
) -> int:
    """Check what the task changed against its scope, run its acceptance commands; mark it done only if the
    scope holds and every command exits 0. The proof (each command's exit, duration, output digest) is
    recorded."""
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
    assignments: list[str] = typer.Argument(None, metavar="KEY=VALUE...",
                                            help="title, description, owner, status, reviews, acceptance, "
                                                 "depends_on, priority, labels, parent, assignee (lists: a "
                                                 "JSON array or one item; null clears)."),
    allow: list[str] = ALLOW,
    forbid: list[str] = FORBID,
    override: str = typer.Option(None, "--override", metavar="REASON",
                                 help="Why a person changes a started task's acceptance or scope (recorded; "
                                      "the change itself needs a person at a terminal)."),
    actor: str = ACTOR,
    json_: bool = JSON,
) -> int:
    """Change fields of a task (the board's schema refuses bad values). scope takes a JSON object."""
    import json

    from workbench.errors import UsageError
    from workbench.model.scope import merged

    bench = _bench()
    changes = parse_assignments(assignments or [], TASK_LIST_KEYS)
    if changes.get("priority") is not None:
        from workbench.cli.values import priority_of

        changes["priority"] = priority_of(changes["priority"])
    if not changes and not (allow or forbid):
        raise UsageError("nothing to set: give KEY=VALUE pairs (or --allow/--forbid GLOB)")
    if isinstance(changes.get("scope"), str):
        try:
            changes["scope"] = json.loads(changes["scope"])
        except ValueError:
            raise UsageError(f"scope: not a JSON object: {changes['scope']}") from None
    if allow or forbid:
        base = changes.get("scope", bench.show_task(task_id).get("scope"))
        changes["scope"] = merged(base, allow=allow, forbid=forbid)
    task = bench.set_task(task_id, changes, actor=actor_of(actor), override=override)
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
    claim: bool = typer.Option(False, "--claim", help="Claim it across clones instead: the first ready task no "
                                                      "other agent holds (see `wb task claim`)."),
    agent: str = typer.Option(None, "--agent", metavar="NAME", help="With --claim: who claims (default: "
                                                                    "$WB_AGENT, else user@host)."),
    actor: str = ACTOR,
    json_: bool = JSON,
) -> int:
    """Pick the next task: the first ready one (todo, every dependency done, in board order)."""
    from workbench.errors import NotFound, UsageError

    bench = _bench()
    if claim:
        if start:
            raise UsageError("--claim and --start: claim it first, then `wb task start ID` once it is yours")
        won = bench.claim_next(agent=agent)
        if json_:
            output.emit_json(won)
            return 0
        if won is None:
            raise NotFound("no task is ready to claim: every ready task is held by another agent, or none is ready")
        output.say(f"{won['id']} claimed by {won['agent']} until {won['until']}")
        return 0
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
