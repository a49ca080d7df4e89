"""The common write commands without typer: `wb task add|start|done|block`, `wb note` and `wb set`.

An agent runs these many times a session, so main.py answers them without importing typer and click (half of
what such a command would import): it parses argv against `FAST` below and calls the bodies here. The typer
commands (cli/task.py, cli/note.py, cli/set_state.py) declare the same parameters, keep their help texts and
call the same bodies; tests/cli/test_startup.py checks that `FAST` says exactly what they declare. Anything the
fast parser is not sure of (help, an unknown or malformed option, a missing or extra argument) goes to typer,
so every error message stays typer's own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from workbench.cli import output
from workbench.errors import UsageError

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class Params:
    """A command's parameters as click sees them: positional arguments in order, each (name, nargs) with
    nargs 1 or -1 (one or more); options {flag: (name, kind)} with kind `value`, `multi` (repeatable), `flag`
    or `count` (a whole number from 1); and the options that are required. (A plain class: a NamedTuple
    compiles its annotations.)"""

    __slots__ = ("arguments", "options", "required")

    def __init__(self, arguments: tuple[tuple[str, int], ...], options: dict[str, tuple[str, str]],
                 required: tuple[str, ...] = ()) -> None:
        self.arguments = arguments
        self.options = options
        self.required = required


ACTOR = {"--actor": ("actor", "value")}
JSON = {"--json": ("json_", "flag")}
# the scope contract of a task (issue 16)
SCOPE = {"--allow": ("allow", "multi"), "--forbid": ("forbid", "multi"), "--approval": ("approval", "multi"),
         "--outside": ("outside", "value")}
# issue 22: what `wb task add` gives a task beside its title
TASK_EXTRA = {"--priority": ("priority", "value"), "--label": ("label", "multi"), "--parent": ("parent", "value"),
              "--assignee": ("assignee", "value")}

# issue 22: the paths a note or an added assumption is about
ABOUT = {"--about": ("about", "multi")}

# (command path) -> its parameters and the body that runs it
FAST: dict[tuple[str, ...], tuple[Params, str]] = {
    ("task", "add"): (Params((("title", 1),), {
        "--kind": ("kind", "value"), "--reviews": ("reviews", "value"), "--owner": ("owner", "value"),
        "--accept": ("accept", "multi"), "--depends-on": ("depends_on", "multi"),
        "--description": ("description", "value"), **SCOPE, **TASK_EXTRA, **ACTOR, **JSON}), "task_add"),
    ("task", "start"): (Params((("task_id", 1),), {"--force": ("force", "flag"), **ACTOR}), "task_start"),
    ("task", "done"): (Params((("task_id", 1),), {"--force": ("force", "flag"), **ACTOR}), "task_done"),
    ("task", "block"): (Params((("task_id", 1),), {"--reason": ("reason", "value"), **ACTOR}, ("reason",)),
                        "task_block"),
    ("note",): (Params((("text", -1),), {**ACTOR, **ABOUT}), "note"),
    ("set",): (Params((("assignments", -1),), {**ACTOR, **JSON, **ABOUT}), "set_state"),
    # a read, not a write, but run as often (issue 33): a 2,000-task list spent half its time importing typer
    ("task", "list"): (Params((), {
        "--status": ("status", "value"), "--ready": ("ready", "flag"), "--blocked": ("blocked", "flag"),
        "--label": ("label", "value"), "--priority": ("priority", "value"), "--parent": ("parent", "value"),
        "--assignee": ("assignee", "value"), "--search": ("search", "value"), "--tree": ("tree", "flag"),
        "--limit": ("limit", "count"), "--all": ("all_", "flag"), **JSON}), "task_list"),
}


def parse(params: Params, args: list[str]) -> dict[str, Any] | None:
    """`args` (after the command's name) as click would bind them, or None when typer should say what is
    wrong (or show the help). Like click: options and arguments may interleave, `--opt=value` and `--opt
    value` both work, a repeated option's last value wins, `--` ends the options and a lone `-` is an argument."""
    values: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positional.extend(args[i:])
            break
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        flag, eq, inline = arg.partition("=")
        if flag not in params.options:
            return None  # --help, -h, a short option, an unknown or abbreviated option: typer's to answer
        name, kind = params.options[flag]
        if kind == "flag":
            if eq:
                return None
            values[name] = True
            continue
        if eq:
            value = inline
        elif i < len(args) and not args[i].startswith("-"):
            value = args[i]
            i += 1
        else:
            return None  # no value, or one that looks like an option: let click decide
        if kind == "count":  # a whole number from 1, as typer's `int, min=1`: anything else is click's to refuse
            if not (value.isascii() and value.isdigit() and int(value) >= 1):
                return None
            values[name] = int(value)
        elif kind == "multi":
            values.setdefault(name, []).append(value)
        else:
            values[name] = value
    if any(name not in values for name in params.required):
        return None
    for name, nargs in params.arguments:
        if nargs == 1:
            if not positional:
                return None
            values[name] = positional.pop(0)
        else:
            if not positional:
                return None
            values[name], positional = positional, []
    if positional:
        return None  # an extra argument
    return values  # an option not given takes the body's default, which is typer's


def run(path: tuple[str, ...], args: list[str], chdir: Path | None) -> int | None:
    """Run `wb PATH… ARGS` if it is one of FAST and its arguments parse; None leaves it to typer."""
    params, body = FAST[path]
    values = parse(params, args)
    if values is None:
        return None
    code: int = globals()[body](chdir, **values)
    return code


# -- the bodies -------------------------------------------------------------------------------------------


def actor_of(value: str | None) -> str:
    """--actor. Without it: `human` for a person at a terminal, `agent` for a program (ops/person.terminal_who).
    `--actor agent` is taken as said; `--actor human` only from a person who confirms on /dev/tty: an agent
    that claims it is refused (exit 5), told to ask a person."""
    from workbench.model import provenance
    from workbench.model.provenance import Who

    who = provenance.current()
    if value is None:
        return who.actor
    if value not in ("agent", "human"):
        raise UsageError(f"--actor must be agent or human, not {value!r}")
    if value == "agent":
        provenance.establish(Who("agent", who.via, who.tty))
        return value
    from workbench.ops.person import command_line, require_person

    require_person("a write as human", command_line(drop=("--actor", "human")))
    return value


def parse_assignments(pairs: list[str], list_keys: tuple[str, ...]) -> dict[str, Any]:
    """KEY=VALUE pairs. List fields take a JSON array or one item; `null` and empty clear nullable fields."""
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"expected KEY=VALUE, got {pair!r}")
        if key in list_keys:
            if value == "null":
                changes[key] = None  # the schema refuses it: a list field is never null
            elif value.startswith("["):
                try:
                    changes[key] = json.loads(value)
                except (ValueError, RecursionError):
                    raise UsageError(f"{key}: not a JSON array: {value}") from None
            else:
                changes[key] = [value] if value else []
        elif value == "null":
            changes[key] = None
        else:
            changes[key] = value
    return changes


STATE_LIST_KEYS = ("touched_files", "assumptions", "blockers")
TASK_LIST_KEYS = ("acceptance", "depends_on", "labels")


def task_list(chdir: Path | None, status: str | None = None, ready: bool = False, blocked: bool = False,
              label: str | None = None, priority: str | None = None, parent: str | None = None,
              assignee: str | None = None, search: str | None = None, tree: bool = False, limit: int | None = None,
              all_: bool = False, json_: bool = False) -> int:
    from workbench.cli import task_list

    return task_list.run(chdir, status=status, ready=ready, blocked=blocked, label=label, priority=priority,
                         parent=parent, assignee=assignee, search=search, tree=tree, limit=limit, all_=all_,
                         json_=json_)


def _bench(chdir: Path | None) -> Any:
    from workbench.api.bench import Bench

    return Bench.open(chdir)


def _task_verbs(chdir: Path | None) -> Any:
    """The workbench opened with the task verbs alone (api/tasks.py, what `Bench` inherits them from): `wb task
    add` imports no other family of verbs (issue 33)."""
    from workbench.api.tasks import TaskVerbs

    return TaskVerbs.open(chdir)


def task_add(chdir: Path | None, title: str, kind: str = "build", reviews: str | None = None,
             owner: str | None = None, accept: list[str] | None = None, depends_on: list[str] | None = None,
             description: str | None = None, actor: str | None = None, json_: bool = False,
             allow: list[str] | None = None, forbid: list[str] | None = None, approval: list[str] | None = None,
             outside: str | None = None, priority: str | None = None, label: list[str] | None = None,
             parent: str | None = None, assignee: str | None = None) -> int:
    from workbench.cli.values import priority_of
    from workbench.model.scope import merged

    bench = _task_verbs(chdir)
    task = bench.add_task(title, kind=kind, owner=owner, acceptance=accept or [],
                          depends_on=depends_on or [], description=description, reviews=reviews,
                          actor=actor_of(actor),
                          scope=merged(None, allow=allow, forbid=forbid, approvals=approval, outside=outside),
                          priority=priority_of(priority), labels=label or None, parent=parent, assignee=assignee)
    if json_:
        output.emit_json(task)
    else:
        output.say(f"{task['id']} added: {output.shown(task['title'])}")
    output.report_write(bench)
    return 0


def task_start(chdir: Path | None, task_id: str, actor: str | None = None, force: bool = False) -> int:
    bench = _bench(chdir)
    if bench.show_task(task_id).get("status") == "in_progress":
        output.say(f"{task_id} is already in progress: nothing to do")
        return 0
    bench.start_task(task_id, actor=actor_of(actor), force=force)
    output.say(output.shown(bench.last.summary))
    output.report_write(bench)
    return 0


def task_done(chdir: Path | None, task_id: str, force: bool = False, actor: str | None = None) -> int:
    bench = _bench(chdir)

    def report(stage: str, result: dict[str, Any]) -> None:
        # say what runs before it runs, every character shown: what you see is what runs. On a terminal, as
        # progress on stderr; without one, on stdout before the outcome, so the error stays one line on stderr
        if not sys.stderr.isatty():
            if stage == "start":
                sys.stdout.write(f"$ {output.shown(result['cmd'])}\n")
                sys.stdout.flush()
            return
        if stage == "start":
            sys.stderr.write(f"$ {output.shown(result['cmd'])}\n")
        elif result["exit"] != 0:
            sys.stderr.write(f"  {result['outcome']}; the end of its output:\n")
            for line in (result.get("output_tail") or "").rstrip().splitlines()[-15:]:
                sys.stderr.write(f"  | {output.shown(line)}\n")
        sys.stderr.flush()

    bench.done_task(task_id, force=force, actor=actor_of(actor), report=report)
    output.say(output.shown(bench.last.summary))
    output.report_write(bench)
    return 0


def task_block(chdir: Path | None, task_id: str, reason: str, actor: str | None = None) -> int:
    bench = _bench(chdir)
    bench.block_task(task_id, reason, actor=actor_of(actor))
    output.say(output.shown(bench.last.summary))
    output.report_write(bench)
    return 0


def _about(bench: Any, chdir: Path | None, about: list[str] | None) -> list[str] | None:
    """--about as typed (relative to the directory wb runs in, -C's if given) as work-tree paths (issue 22)."""
    if not about:
        return None
    from workbench.ops.memory import paths_about

    return paths_about(bench.root, Path(chdir or Path.cwd()).resolve(), about)


def note(chdir: Path | None, text: list[str], actor: str | None = None, about: list[str] | None = None) -> int:
    body = sys.stdin.read() if text == ["-"] else " ".join(text)
    bench = _bench(chdir)
    paths = _about(bench, chdir, about)
    bench.note(body, actor=actor_of(actor), about=paths)
    seq = bench.last.seqs[-1]
    output.say(f"noted (event {seq})" + (f"; remembered as M-{seq}: wb status says when a commit changes "
                                         f"{', '.join(paths)}" if paths else ""))
    output.report_write(bench)
    return 0


def split_appends(pairs: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """`KEY+=VALUE` pairs (append one item to a list field) apart from the `KEY=VALUE` ones."""
    plain: list[str] = []
    add: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("+=")
        if sep and key and "=" not in key:
            add.setdefault(key, []).append(value)
        else:
            plain.append(pair)
    return plain, add


def set_state(chdir: Path | None, assignments: list[str], actor: str | None = None, json_: bool = False,
              about: list[str] | None = None) -> int:
    plain, add = split_appends(assignments)
    changes = parse_assignments(plain, STATE_LIST_KEYS)
    if changes.get("active_task_id") == "":
        changes["active_task_id"] = None
    bench = _bench(chdir)
    state = bench.set_state(changes, actor=actor_of(actor), add=add, about=_about(bench, chdir, about))
    if json_:
        output.emit_json(state)
    elif bench.last.seqs:
        output.say(f"set {', '.join(sorted({*changes, *add}))} (event {bench.last.seqs[-1]})")
    else:
        output.say("nothing changed")
    output.report_write(bench)
    return 0


def verify(chdir: Path | None, items: list[str], actor: str | None = None, json_: bool = False) -> int:
    bench = _bench(chdir)
    confirmed = bench.verify(items, actor=actor_of(actor))
    if json_:
        output.emit_json(confirmed)
    else:
        for item in confirmed:
            at = f" at {str(item['commit'])[:12]}" if item.get("commit") else ""
            output.say(f"{item['id']} confirmed{at}: {output.shown(item['text'])}")
    output.report_write(bench)
    return 0
