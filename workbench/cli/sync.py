"""`wb sync [REMOTE]`: share the workbench through a git remote (docs/sync.md)."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def sync_command(
    remote: str = typer.Argument(None, metavar="[REMOTE]",
                                 help="The remote (default: the state branch's upstream, else origin)."),
    push_branch: bool = typer.Option(False, "--push-branch",
                                     help="State on your own branch: push that branch (fast-forward only)."),
    json_: bool = typer.Option(False, "--json", help="Machine-readable output (see docs/sync.md)."),
) -> int:
    """Fetch, merge the remote's workbench state by wb's rules, commit, push; with state on its own ref
    (`wb init --ref wb-state`) it never touches your branches. A fresh clone takes up the remote's state."""
    from pathlib import Path

    from workbench.api import Bench, join

    start = start_dir() or Path.cwd()
    joined = False
    try:
        bench = Bench.open(start)
    except Exception:  # noqa: BLE001 - no workbench here yet: a fresh clone joins the remote's state branch
        joined = join(start, "wb-state", remote)
        if not joined:
            raise
        from workbench.api import init

        bench = init(start, "wb-state")[0]
    report = bench.sync(remote, push_branch=push_branch)
    report["joined"] = report["joined"] or joined
    if json_:
        output.emit_json(report)
        return 0
    where = report["remote"] or "the remote"
    if report["joined"]:
        output.say(f"joined {where}'s workbench ({report['ref']})")
    if report["up_to_date"]:
        output.say(f"up to date with {where} ({report['ref']})")
    else:
        parts = []
        if report["taken"]:
            parts.append(f"took {report['taken']} event(s)")
        if report["merged"]:
            parts.append("merged")
        if report["pushed"]:
            parts.append(f"pushed to {where}")
        output.say("synced: " + ", ".join(parts or ["nothing to do"]) + f" ({report['ref']}"
                   + (f" at {report['local'][:10]}" if report["local"] else "") + ")")
    for old, new in sorted(report["renumbered"].items()):
        output.warn(f"{old} was taken on {where}: your task is now {new} (`wb task show {old}` says so)")
    for w in report["warnings"]:
        output.warn(w)
    return 0
