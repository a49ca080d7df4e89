"""`wb init`: create .workbench/ in this git repository and commit it. Idempotent."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def init_command(
    json_: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ref: str = typer.Option(None, "--ref", metavar="BRANCH",
                            help="Record state on BRANCH (config git.ref) instead of the checked-out branch; "
                                 "your branches never track .workbench/."),
    agents_md: bool = typer.Option(False, "--agents-md", help="Also add (or update) the wb section of AGENTS.md "
                                                              "at the repository root; it is not committed."),
    claude_md: bool = typer.Option(False, "--claude-md", help="Also make CLAUDE.md import AGENTS.md (the line "
                                                              "@AGENTS.md; implies --agents-md; not committed)."),
    claude_code: bool = typer.Option(False, "--claude-code", help="Also wire Claude Code: wb's hooks in "
                                     ".claude/settings.json and its MCP server in .mcp.json, merged into what is "
                                     "there (not committed)."),
    codex: bool = typer.Option(False, "--codex", help="Also wire Codex CLI: wb's hooks in .codex/hooks.json and "
                               "its MCP server in .codex/config.toml, merged (not committed; Codex runs them once "
                               "you trust them)."),
    backend: str = typer.Option(None, "--backend", metavar="files|sqlite",
                                help="Where to keep the workbench: files (committed to git; the default, or "
                                     "WB_DEFAULT_BACKEND's) or sqlite (one database; docs/storage.md)."),
    no_git: bool = typer.Option(False, "--no-git", help="With --backend sqlite: no git repository needed (a CI "
                                                        "runner, a scratch directory); the database is in "
                                                        ".workbench/."),
    db: str = typer.Option(None, "--db", metavar="PATH", help="With --backend sqlite: the database file, instead "
                                                             "of <git dir>/wb/workbench.sqlite3."),
) -> int:
    """Create .workbench/ (state, board, event log, config) and commit it. A second run changes nothing."""
    from pathlib import Path

    from workbench.api import init
    from workbench.errors import UsageError

    if ref is not None:
        import re

        if not re.match(r"^[A-Za-z0-9._/-]+$", ref) or ref.startswith(("-", "/")) or ".." in ref:
            raise UsageError(f"--ref: {ref!r} is not a branch name")
    if backend is not None and backend not in ("files", "sqlite"):
        raise UsageError(f"--backend: {backend!r} is not files or sqlite")
    bench, created, last = init(start_dir() or Path.cwd(), ref, backend=backend, no_git=no_git, db=db)
    agents = None
    claude: dict[str, str | None] = {}
    if agents_md or claude_md:  # the files outside .workbench/ wb writes, and only when asked
        from workbench.integrations import agents_md as section

        agents = section.write_agents_md(bench.root)
        state, name = section.claude_md(bench.root)
        claude = {"state": state, "file": name,
                  "changed": section.import_agents_md(bench.root) if claude_md else None}
    wired: dict[str, dict[str, str]] = {}
    if claude_code or codex:  # the agent's own settings, outside .workbench/: only when asked
        from workbench.ops import init as wiring

        if claude_code:
            wired["claude-code"] = wiring.wire_claude_code(bench.root)
        if codex:
            wired["codex"] = wiring.wire_codex(bench.root)
    if json_:
        extra: dict[str, object] = {"agents_md": agents, "claude_md": claude} if agents else {}
        if wired:
            extra["agents"] = wired
        output.emit_json({"workbench": str(bench.root), "created": created, "commit": last.commit,
                          "joined": bench.joined, "warnings": last.warnings, **extra})
    elif bench.joined:  # a fresh clone took up the state branch that exists: not "nothing changed"
        output.say(f"Took up the workbench recorded on {bench.joined}: {bench.wb.log.tail().seq} event(s); this "
                   f"clone records its state there too (git.ref: {bench.joined}; `wb sync` shares it)")
    elif created:
        output.say(f"Initialized a workbench in {bench.root / '.workbench'}"
                   + (f" (commit {last.commit[:10]})" if last.commit else ""))
        output.say("Next: wb task add TITLE   ·   wb status")
    elif last.commit:
        output.say(f"Workbench already initialized; committed pending workbench changes ({last.commit[:10]})")
    else:
        output.say("Workbench already initialized; nothing changed")
    if agents and not json_:
        output.say(f"AGENTS.md: wb section {agents} (not committed: it is outside .workbench/; commit it yourself)"
                   if agents != "unchanged" else "AGENTS.md: wb section already up to date")
        name = claude["file"] or "CLAUDE.md"
        if claude["changed"] in ("added", "created"):
            output.say(f"{name}: {'added' if claude['changed'] == 'added' else 'created with'} the line "
                       "@AGENTS.md, so Claude Code reads the wb section (not committed)")
        elif claude["state"] == "no_import":  # Claude Code reads CLAUDE.md, and only what it imports
            output.say(f"{name} does not import AGENTS.md, so Claude Code will not read the wb section: add the "
                       "line @AGENTS.md to it, or run `wb init --agents-md --claude-md`")
    if wired and not json_:
        for files in wired.values():
            for name, what in files.items():
                output.say(f"{name}: {what}" + ("" if what == "unchanged" else
                                                " (not committed: it is outside .workbench/; review and commit it)"))
        for client in wired:
            for other in wiring.other_wiring(bench.root, client):
                output.warn(f"{other} runs wb's {client} hooks too: remove them there, or each event is "
                            "recorded twice")
        if "codex" in wired:
            output.say("Codex runs project hooks only once you trust them: run `codex` in this repository and "
                       "trust the project and its hooks when it asks (or review them with /hooks)")
    for w in last.warnings:
        output.warn(w)
    return 0
