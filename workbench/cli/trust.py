"""`wb trust` and `wb untrust`: review and trust the commands a workbench that came through git can run."""

from __future__ import annotations

from pathlib import Path

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def _run(value: object) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def trust_command(
    list_: bool = typer.Option(False, "--list", help="Show what is trusted on this clone and what is pending."),
    plan: list[Path] = typer.Option([], "--plan", metavar="FILE",
                                    help="Also review a plan file git tracks (for `wb run --plan FILE`)."),
    json_: bool = typer.Option(False, "--json", help="With --list: machine-readable output."),
) -> int:
    """Review the commands this workbench can run that are not trusted on this clone — config.yaml's tools,
    hooks and planner, the open tasks' acceptance, plan files git tracks — each shown exactly as it will run,
    and trust them once a person confirms on the terminal. What came through git (clone, pull, merge, wb sync)
    or by a hand edit runs only after this; what this clone's wb wrote (wb task add --accept) is trusted
    already. Trust is kept per command digest in the git directory, never in the tree."""
    from workbench.ops import trust
    from workbench.store import opening

    wb = opening.discover(start_dir())
    if list_ or json_:
        data = trust.listing(wb)
        if json_:
            output.emit_json(data)
            return 0
        output.say(f"trusted on this clone ({len(data['trusted'])}, kept in {output.shown(data['store'])}):")
        for r in data["trusted"]:
            where = f" [{', '.join(r.get('where') or [])}]" if r.get("where") else ""
            output.say(f"  {r['digest'][:12]}  {output.shown(r.get('kind'))} {output.shown(r.get('name') or '')}"
                        f"{output.shown(where)}: {output.shown(_run(r.get('run')))}")
        output.say(f"pending ({len(data['pending'])}): " + ("run `wb trust` to review them" if data["pending"]
                                                              else "none"))
        for p in data["pending"]:
            output.say(f"  {p['digest'][:12]}  {output.shown(p['label'])}: {output.shown(p['how'])}")
        if data["env"]:
            output.say("WB_TRUST_REPO_COMMANDS=1 is set: every command runs, trusted or not")
        return 0
    waiting = trust.pending(wb, plans=plan)
    if not waiting:
        output.say("nothing to trust: every command this workbench can run is trusted on this clone")
        return 0
    n = len(waiting)
    output.say(f"{n} command{'' if n == 1 else 's'} not trusted on this clone (they came through git, or by a "
               "hand edit). Each runs as you, with your files and credentials:")
    for cmd in waiting:
        output.say("")
        output.say(f"  {output.shown(cmd.label)}  ({output.shown(cmd.source)})")
        output.say(f"    {output.shown(cmd.how)}")
    output.say("")
    from workbench.ops.person import command_line, require_person

    require_person(f"trusting {n} command{'' if n == 1 else 's'} on this clone", command_line())
    added = trust.trust(wb, waiting)
    output.say(f"trusted {added} command{'' if added == 1 else 's'} on this clone")
    return 0


def untrust_command(
    names: list[str] = typer.Argument(None, metavar="[NAME]...",
                                      help="A tool's name, a hook's topic, planner, a task id, a plan file's path."),
    all_: bool = typer.Option(False, "--all", help="Forget every trusted command."),
) -> int:
    """Forget trusted commands on this clone: they are refused again until `wb trust`."""
    from workbench.errors import UsageError
    from workbench.ops import trust
    from workbench.store import opening

    if not names and not all_:
        raise UsageError("name what to untrust (a tool, a hook topic, planner, a task id, a plan file) or --all")
    wb = opening.discover(start_dir())
    gone = trust.untrust(wb, list(names or []), everything=all_)
    output.say(f"untrusted {gone} command{'' if gone == 1 else 's'} on this clone")
    return 0
