"""`wb init`: create `.workbench/` in a git work tree. Idempotent, and resumable after a crash halfway."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.errors import Refused
from workbench.git.repo import find_worktree
from workbench.model.layout import GITIGNORE, GITIGNORE_REF
from workbench.store.config import CONFIG_DEFAULTS
from workbench.store.drivers import register_drivers
from workbench.store.transaction import LastWrite
from workbench.store.workbench import Workbench

CONFIG_TEMPLATE = """\
# wb settings. Edit freely: your comments survive. Reference: docs/files.md#configyaml
schema_version: 1
git:
  commit: every          # every: one commit per mutation | off: write the files, never commit
  ref: null              # a branch to record state on instead of the checked-out one (e.g. wb-state)
lock_timeout: {lock_timeout:<11g}# seconds to wait for another wb process before giving up (exit 6)
human_guard_seconds: 5   # after a hand edit of a workbench file, agent writes to it are refused this long
acceptance_timeout: 600  # seconds each acceptance command of `wb task done` may run
budget: {max_turns: 20, max_tool_calls: 50, max_wall_seconds: 1800}
approvals: human         # human: a person at a terminal approves confirm_once/mutating tools | any: anyone (CI)
tools: {}
hooks: {}
redact: []               # names of environment variables whose values never reach events or commits
""".replace("{lock_timeout:<11g}", f"{CONFIG_DEFAULTS['lock_timeout']:<11g}")  # the one figure: store/config.py


NEXT_ACTION = "Add the first task: wb task add TITLE"




def refuse_submodule_not_checked_out(start: Path, root: Path) -> None:
    """`start` inside a submodule whose files are not checked out (a clone made without
    `--recurse-submodules`): git finds the superproject there, and `wb init` would make the superproject's
    workbench from a directory that belongs to another repository. Refused, naming the command that checks the
    submodule out (a checked-out submodule is its own repository: find_worktree stops at it)."""
    from workbench.git.repo import run_git

    try:
        rel = start.resolve().relative_to(root)
    except ValueError:
        return
    if rel == Path("."):
        return
    ancestors = [rel, *[p for p in rel.parents if p != Path(".")]]
    out = run_git(root, "ls-files", "--stage", "--", *(p.as_posix() for p in ancestors), check=False).stdout
    for line in out.decode(errors="replace").splitlines():
        meta, _, path = line.partition("\t")
        if meta.startswith("160000 ") and Path(path) in ancestors:
            raise Refused(f"{path} is a submodule of {root} that is not checked out: run `git -C {root} "
                          f"submodule update --init {path}`, then wb init in it (or wb init in {root} for the "
                          "superproject's workbench)")


def init(start: Path, ref: str | None = None) -> tuple[Workbench, bool, LastWrite]:
    """Create `.workbench/` in the worktree holding `start` (idempotent). Returns (workbench, created, what was
    committed).

    What is missing is made by one transaction (`create`): config.yaml, .gitignore, artifacts/.gitkeep and
    calls.jsonl, the `workbench.init` event when the log is empty, and state.md and board.json folded from the
    log (a crash between init's append and its snapshots leaves a log without them). Then the drivers are
    registered and everything is committed under the one commit policy, whose gate refuses a file that fails
    validation: `wb init` on a workbench a person broke says so, and commits nothing."""

    root = find_worktree(start)
    refuse_submodule_not_checked_out(start, root)
    wb = Workbench(root)
    if ref:
        wb.git.refuse_checked_out(ref)  # before anything is written: state never goes onto a branch in use
    p = wb.paths
    complete = all(f.exists() for f in (p.config, p.state, p.board, p.events, p.calls, p.wb / ".gitignore",
                                        p.artifacts / ".gitkeep"))
    if not complete and not ref:  # wb commits to the branch: with none checked out, it would write nothing
        busy = wb.git.operation_in_progress()
        if busy or wb.git.symbolic_head() is None:
            why = f"a {busy} is in progress" if busy else "HEAD is detached"
            raise Refused(f"not creating a workbench: {why}, and wb commits its state to the branch you are on: "
                          + ("finish it first" if busy else "switch to a branch first (`git switch main`, or "
                             "`git switch -c NAME`)") + ", or keep the state on its own branch: `wb init --ref "
                          "wb-state`")
    if not p.config.exists() and not p.events.exists():
        left_out = wb.git.workbench_left_out()  # never an empty workbench over the branch's real one
        if left_out:
            raise Refused(f"not creating a workbench: {left_out}")
    if p.wb.is_dir() and wb.log.tail().seq == 0 and (p.state.exists() or p.board.exists()):
        # a state or board without a log: an older workbench. Never overwrite it with an empty one.
        raise Refused(".workbench/ holds state.md or board.json but no event log (a wb 0.0.x workbench?): "
                      "run `wb migrate`")
    created = False
    if complete:
        with wb.lock():
            registered = register_drivers(root, wb.git.common_dir)
    else:
        if ref and not p.config.exists():  # the state goes to its own branch: the work tree is wb's to write now,
            wb.config["git"]["ref"] = ref  # on a detached HEAD too (the defaults are read before config.yaml is)
        with wb.transaction(actor="wb", commit=False, create=True) as tx:
            template = CONFIG_TEMPLATE.replace("  ref: null", f"  ref: {ref}", 1) if ref else CONFIG_TEMPLATE
            tx.create_file("config.yaml", template.encode())
            tx.create_file(".gitignore", (GITIGNORE_REF if ref else GITIGNORE).encode())
            tx.create_file("artifacts/.gitkeep", b"")
            tx.create_file("calls.jsonl", b"")
            if tx.base_seq == 0:
                tx.emit("workbench.init", {"next_action": NEXT_ACTION}, actor="wb")
            created = bool(tx.events or tx.rebuilt)
            registered = register_drivers(root, wb.git.common_dir)
    wb.reload_config()  # read again: the lock read it before config.yaml existed
    outcome = wb.checkpoint("wb: init" if created or not complete else "wb: commit pending workbench changes")
    last = LastWrite(commit=outcome.sha, warnings=([outcome.skipped] if outcome.skipped else []) + outcome.warnings)
    if registered and not created:
        last.warnings.append("registered wb's git diff and merge drivers: " + ", ".join(registered))
    return wb, created or bool(registered and not complete), last


def init_sqlite(start: Path, *, no_git: bool = False, db: str | None = None) -> tuple[Workbench, bool, LastWrite]:
    """`wb init --backend sqlite`: config.yaml in `.workbench/` naming the SQLite backend, and the database
    (store/sqlitedb.py) with the `workbench.init` event and both snapshots, made by one `create` transaction.
    `no_git`: `start` is the top (no repository needed), the database is `.workbench/workbench.sqlite3`. `db`:
    the database's path instead of `<git dir>/wb/workbench.sqlite3`. Idempotent; a workbench kept in files
    here is refused (`wb export` / `wb import` move it)."""
    from workbench.store import backend, sqlitedb
    from workbench.store.config import parse_config

    root = start.resolve() if no_git else find_worktree(start)
    if not no_git:
        refuse_submodule_not_checked_out(start, root)
    config_path = root / ".workbench" / "config.yaml"
    if config_path.exists() and not backend.is_sqlite_config(config_path):
        raise Refused(f"a workbench kept in files is already in {root}: `wb export FILE` it, then `wb import "
                      "FILE --backend sqlite` in an empty directory or repository")
    if (root / ".workbench" / "events.jsonl").exists():
        raise Refused(f"{root}/.workbench holds an event log: it is a files workbench; `wb export` moves it")
    if config_path.exists():
        text = config_path.read_bytes()
    else:
        path = db or (sqlitedb.NO_GIT_PATH if no_git else None)
        if path is not None and (not path.strip() or "\n" in path):
            raise Refused(f"--db: {path!r} is not a path")
        text = (CONFIG_TEMPLATE + "storage: sqlite\n" + (f"sqlite_path: {json.dumps(path)}\n" if path else "")).encode()
        from workbench.store import trust

        outside = trust.outside_path(path)
        if outside is not None and not no_git:  # given on the command line: the person's own choice
            trust.remember(root, [outside])
    wb = sqlitedb.SqliteWorkbench(root, parse_config(text), create=True)
    with wb.transaction(actor="wb", create=True) as tx:
        tx.create_file("config.yaml", text)
        tx.create_file(".gitignore", sqlitedb.GITIGNORE)
        if tx.base_seq == 0:
            tx.emit("workbench.init", {"next_action": NEXT_ACTION}, actor="wb")
        created = bool(tx.events)
    wb.reload_config()
    if not wb.has_git:  # `--no-git`, or the database in .workbench/ where no commit may take it
        return wb, created, LastWrite()
    from workbench.store.commit import commit_sqlite_files

    files: Workbench = wb  # as a Workbench: its SqliteLock is no StageWorkbench lock, and the commit takes none
    with wb.lock():  # the files wb wrote are committed, as on files: `git status` is clean after wb init
        outcome = commit_sqlite_files(files, "wb: init (SQLite)")
    return wb, created, LastWrite(commit=outcome.sha, warnings=([outcome.skipped] if outcome.skipped else [])
                                  + outcome.warnings)


# --- the agent's own settings (`wb init --claude-code`, `wb init --codex`) ----------------------------------------
#
# Files outside .workbench/, written only when the user asks with the flag, merged into what is there (the user's
# other settings and hooks stay), never committed (the user reviews and commits them). Every hook names wb by an
# absolute path, so a shell without wb on PATH still runs it, and wraps it so that a wb that cannot run at all
# (a removed virtual environment: exit 126, 127, a Python that fails to start) blocks rather than lets the
# agent go on unrecorded and unguarded: the clients read only exit 2 as "block" (Claude Code's hooks reference,
# Codex's hooks docs); any other code is a failed hook the agent goes past.

CLAUDE_CODE_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                      "Notification", "Stop", "SubagentStop", "PreCompact", "SessionEnd")
CODEX_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop")
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})  # the ones a matcher selects
# where exit 2 would mean "do not stop" (the agent would go on and on) or does nothing: a failed hook, shown
NOT_BLOCKING = frozenset({"Stop", "SubagentStop", "PreCompact", "SessionEnd", "Notification"})
CLAUDE_SETTINGS = ".claude/settings.json"
CLAUDE_MCP = ".mcp.json"
CODEX_HOOKS = ".codex/hooks.json"
CODEX_CONFIG = ".codex/config.toml"
HOOK_TIMEOUT = 30


def wb_executable() -> str:
    """wb's absolute path: the `wb` script beside this Python, else the one on PATH, else this Python running
    the module (`python -m workbench.cli.main`)."""
    import os
    import shlex
    import shutil
    import sys

    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "wb")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return shlex.quote(beside)
    found = shutil.which("wb")
    if found:
        return shlex.quote(os.path.realpath(found))
    return f"{shlex.quote(os.path.abspath(sys.executable))} -m workbench.cli.main"


def hook_command(wb: str, client: str, event: str) -> str:
    """The portable sh command a client runs for `event`: wb's own exit code when wb ran (2: wb blocked the
    call), and when wb could not run, one line on stderr and exit 2 (exit 1 where 2 would keep the agent going)."""
    import shlex

    what = {"PreToolUse": "this tool call is blocked", "UserPromptSubmit": "this prompt is blocked"}.get(
        event, "nothing was recorded")
    code = 1 if event in NOT_BLOCKING else 2
    exe = shlex.quote(shlex.split(wb)[0])
    return (f'if [ -x {exe} ]; then {wb} hook {client}; else (exit 127); fi; c=$?; '
            f'[ "$c" -eq 0 ] || [ "$c" -eq 2 ] || {{ echo "wb is not runnable (exit $c): {what}; reinstall wb, '
            f'or run wb init --{client} again" >&2; exit {code}; }}; exit "$c"')


def _is_wb_hook(entry: object, client: str) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("command"), str) and \
        f" hook {client}" in entry["command"]


def merge_hooks(settings: dict, client: str, events: tuple[str, ...], wb: str, *, matcher: str | None) -> dict:
    """`settings` with wb's hook for each event: an entry of wb's already there is brought up to date in place,
    else a matcher group is added; every other hook and setting is left as it was."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise Refused(f"its \"hooks\" is {type(hooks).__name__}, not an object: fix it by hand first")
    for event in events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise Refused(f"its hooks.{event} is not a list: fix it by hand first")
        ours: dict = {"type": "command", "command": hook_command(wb, client, event), "timeout": HOOK_TIMEOUT}
        found = False
        for group in groups:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if _is_wb_hook(entry, client):
                    if not found:
                        entry.update(ours)
                    found = True
        if not found:
            group = {"matcher": matcher, "hooks": [ours]} if matcher and event in TOOL_EVENTS else {"hooks": [ours]}
            groups.append(group)
    return settings


def _read_json(path: Path) -> dict:
    import json

    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, UnicodeDecodeError) as err:
        raise Refused(f"{path.name} is not JSON ({err}): fix it by hand, then run this again; nothing "
                      "written") from None
    if not isinstance(data, dict):
        raise Refused(f"{path.name} holds {type(data).__name__}, not an object: nothing written")
    return data


def _write_if_changed(path: Path, text: str) -> str:
    """'created', 'updated' or 'unchanged'."""
    from workbench.store.atomic import atomic_write

    old = path.read_bytes() if path.exists() else None
    if old == text.encode():
        return "unchanged"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode())
    return "created" if old is None else "updated"


def _json_text(data: dict) -> str:
    import json

    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _json_file(root: Path, rel: str, change: Any) -> str:
    path = root / rel
    try:
        data = _read_json(path)
        before = _json_text(data) if data else None
        data = change(data)
    except Refused as err:
        raise Refused(f"{rel}: {err}") from None
    text = _json_text(data)
    if before == text and path.exists():
        return "unchanged"  # the same settings, maybe written by hand in another layout: left as they are
    return _write_if_changed(path, text)


def _mcp_server(servers_key: str, wb: str) -> Any:
    import shlex

    argv = shlex.split(wb)

    def change(data: dict) -> dict:
        servers = data.setdefault(servers_key, {})
        if not isinstance(servers, dict):
            raise Refused(f"its \"{servers_key}\" is not an object: fix it by hand first")
        entry = servers.setdefault("wb", {})
        if not isinstance(entry, dict):
            raise Refused(f"its {servers_key}.wb is not an object: fix it by hand first")
        entry.update({"command": argv[0], "args": [*argv[1:], "mcp"]})
        return data
    return change


def wire_claude_code(root: Path, wb: str | None = None) -> dict[str, str]:
    """Claude Code's hooks in `.claude/settings.json` and wb's MCP server in `.mcp.json`, merged.
    Returns {file: created|updated|unchanged}."""
    wb = wb or wb_executable()
    return {
        CLAUDE_SETTINGS: _json_file(root, CLAUDE_SETTINGS,
                                    lambda d: merge_hooks(d, "claude-code", CLAUDE_CODE_EVENTS, wb, matcher="*")),
        CLAUDE_MCP: _json_file(root, CLAUDE_MCP, _mcp_server("mcpServers", wb)),
    }


CODEX_PASSED_ENV = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def wire_codex(root: Path, wb: str | None = None) -> dict[str, str]:
    """Codex's hooks in `.codex/hooks.json` and wb's MCP server in `.codex/config.toml` (`[mcp_servers.wb]`,
    appended when missing: the rest of the file is left byte for byte). Returns {file: what happened}."""
    import shlex
    import tomllib

    wb = wb or wb_executable()
    done = {CODEX_HOOKS: _json_file(root, CODEX_HOOKS,
                                    lambda d: merge_hooks(d, "codex", CODEX_EVENTS, wb, matcher=None))}
    path = root / CODEX_CONFIG
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise Refused(f"{CODEX_CONFIG} is not TOML ({err}): fix it by hand, then run this again") from None
    servers = config.get("mcp_servers")
    if isinstance(servers, dict) and "wb" in servers:
        done[CODEX_CONFIG] = "unchanged"  # the user's own entry for wb: theirs to change
        return done
    argv = shlex.split(wb)
    args = ", ".join(_toml_string(a) for a in [*argv[1:], "mcp"])
    # Codex starts MCP servers with a default environment: a git identity set only in the environment would
    # not reach `wb mcp`, whose writes then wait uncommitted
    passed = ", ".join(_toml_string(v) for v in CODEX_PASSED_ENV)
    section = f"[mcp_servers.wb]\ncommand = {_toml_string(argv[0])}\nargs = [{args}]\nenv_vars = [{passed}]\n"
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    done[CODEX_CONFIG] = _write_if_changed(path, text + sep + section)
    return done


def _toml_string(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)  # a TOML basic string is a JSON string for what we write


def wired_clients(root: Path, *, mcp: bool = False) -> dict[str, str]:
    """{client: the file} for each client whose project settings name wb's hooks (with `mcp`, or wb's MCP
    server): for `wb doctor`."""
    found: dict[str, str] = {}
    for client, rels in (("claude-code", (CLAUDE_SETTINGS, ".claude/settings.local.json", CLAUDE_MCP)),
                         ("codex", (CODEX_HOOKS, CODEX_CONFIG))):
        for rel in rels:
            try:
                text = (root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if f"hook {client}" in text or (mcp and '"mcp"' in text and "wb" in text):
                found[client] = rel
                break
    return found


def other_wiring(root: Path, client: str) -> list[str]:
    """The other settings files that also run wb's hooks for `client` (yours, or your home's): with both,
    each event would run wb twice and be recorded twice."""
    import os

    home = Path(os.path.expanduser("~"))
    codex_home = Path(os.environ.get("CODEX_HOME") or home / ".codex")
    files = {"claude-code": [root / ".claude" / "settings.local.json", home / ".claude" / "settings.json"],
             "codex": [codex_home / "hooks.json", codex_home / "config.toml"]}[client]
    found = []
    for path in files:
        try:
            if path.resolve() != (root / (CLAUDE_SETTINGS if client == "claude-code" else CODEX_HOOKS)).resolve() \
                    and f"hook {client}" in path.read_text(encoding="utf-8", errors="replace"):
                found.append(str(path))
        except OSError:
            continue
    return found
