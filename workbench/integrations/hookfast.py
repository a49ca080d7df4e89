"""`wb hook claude-code` and `wb hook codex`: one hook event in, one spool line out, the answer on stdout.

cli/main.py dispatches here before typer is imported. A tool call's hooks (PreToolUse, PostToolUse…) read
stdin, map the payload (agenthooks), decide a PreToolUse (hookguard), redact, append to the spool in the git
directory (store/spool.py) and answer — no typer, rich, jsonschema, YAML parser, git subprocess or even the
json package (model/cjson), and nothing
in the work tree is touched, so `git status` stays clean. SessionStart, Stop, PreCompact and SessionEnd then
fold the spool into the log and commit it (the full write path, paid once per turn).

A workbench kept in SQLite (docs/storage.md) is served the same way: the spool is the same file in the same git
directory (beside the database; `.workbench/.local/` for one kept without git), and the SQLite transaction folds
it in as the files one does. So a hook on SQLite costs what it costs on files — one append, no database
connection, schema or YAML parser; the database's path (guarded as .workbench/ is, wherever config.yaml puts it)
is cached beside the spool with the names config.yaml's `redact` lists, and a file tool's PreToolUse reads the
active task's scope from the database's snapshots.

Exit codes, as the clients read them (Claude Code's hooks reference; Codex CLI's hooks read them the same way):
0 is an answer (a PreToolUse denial is decision control on stdout, `hookSpecificOutput.permissionDecision:
"deny"`); 2 blocks the tool call, with stderr as the reason; any other code is a failed hook that the agent
goes past. So a wb problem is one line on stderr and exit 0 — never blocking the agent's work on its notebook
— except where letting the call through would let the guard be skipped: a PreToolUse that wb cannot read or
check (a malformed payload, wrong types, a bug) exits 2, and so does a payload too broken to name its event
(it may be a PreToolUse). A PreToolUse outside any workbench has nothing to guard: exit 0.
"""

from __future__ import annotations

import os
import sys

from workbench.errors import NotFound, WorkbenchError
from workbench.integrations import agenthooks
from workbench.model import cjson
from workbench.model.redaction import redact, redact_known, secret_values
from workbench.store.spool import Spool, find_root, git_dir_of, keep_dir_of

TYPE_CHECKING = False  # not typing's, nor pathlib: each would cost a hook a tenth of its time
if TYPE_CHECKING:
    from typing import Any


def main(client: str, chdir: str | None = None) -> int:
    state: dict[str, Any] = {}
    try:
        _run(client, chdir, state)
    except NotFound as err:  # not inside a repository: nothing of wb's to guard or record
        return _fail(client, state, str(err), outside=True)
    except WorkbenchError as err:
        return _fail(client, state, str(err))
    except Exception as err:  # a bug (RecursionError, SystemError… included): one line, never a traceback
        return _fail(client, state, f"internal error: {type(err).__name__}: {_short(err)}")
    return 0


def _fail(client: str, state: dict[str, Any], message: str, *, outside: bool = False) -> int:
    code = 0 if outside and state.get("event") else _failed(client, state)
    _complain(client, message + (" (the tool call is blocked: wb could not check it)" if code == 2 else ""))
    return code


def _failed(client: str, state: dict[str, Any]) -> int:
    """The exit code of a hook that could not do its work: 2 (block) for a PreToolUse, or for a payload that
    does not say which event it is; 0 for any other event (recording it is not worth stopping the agent)."""
    name = state.get("event")
    if name is None or name == "PreToolUse":
        return 2
    return 0


def _short(err: BaseException) -> str:
    text = str(err).replace("\n", " ")
    return text if len(text) <= 200 else text[:200] + "…"


def _run(client: str, chdir: str | None, state: dict[str, Any]) -> None:
    raw = sys.stdin.buffer.read()
    hook = agenthooks.parse_hook_payload(raw, shape=False)
    name = state["event"] = hook["hook_event_name"]
    agenthooks.check_shape(hook)
    why = None
    if name == "PreToolUse":  # before the workbench is found: a write to it is denied from anywhere
        from workbench.integrations import hookguard

        hookguard.guard_also(None)  # until the workbench is found (a process may serve more than one hook)
        why = hookguard.denial(hook)
    try:
        root, git_dir = _root(chdir, hook)
    except NotFound:
        if why:
            _deny(why)
            return
        raise
    if not os.path.isdir(os.path.join(root, ".workbench")):
        if why:
            _deny(why)
        _complain(client, f"no workbench in {root}: run `wb init` first")
        return
    config = os.path.join(root, ".workbench", "config.yaml")
    spool = Spool(git_dir or _git_dir(root))
    names, db = _config_facts(spool, root, config)  # cached beside the spool: config.yaml is parsed once
    if db is not None and name == "PreToolUse":  # the database is wb's, wherever it is: guarded as .workbench/ is
        from workbench.integrations import hookguard

        hookguard.guard_also(db)
        why = why or hookguard.denial(hook)
    type_, payload = agenthooks.hook_event(hook, client)
    answer: dict[str, Any] | None = None
    if name == "PreToolUse":
        from workbench.integrations import hookguard

        why = why or hookguard.out_of_scope(root, hook, db)
        if why:
            payload["denied"] = why
            answer = _denial(why)
    payload = redact(payload, secret_values({"redact": names}))
    if len(raw) > 2048:  # only then can a string or the payload be past the caps (model/clip.py)
        from workbench.model.clip import clip_payload

        payload = clip_payload(payload)
    if name == "SessionStart":
        for warning in agenthooks.sync_at_session_start(root):  # sync.on_session_start: the remote's state first
            _complain(client, f"warning: {warning}")
    context = agenthooks.session_context(root) if name == "SessionStart" else None  # before this session's events
    from workbench.model.ids import new_id, utc_now

    spool.append({"id": new_id(), "ts": utc_now(), "type": type_, "payload": payload})
    if name in agenthooks.TURN_BEGINS:
        spool.begin_turn({"agent": client, "agent_session": payload["agent_session"]})
    if name in agenthooks.FOLD_EVENTS:
        try:
            for warning in agenthooks.fold_spool(root, f"wb: {client} {agenthooks.FOLD_EVENTS[name]}",
                                                  handoff=name == "SessionEnd"):
                _complain(client, f"warning: {warning}")
        except WorkbenchError as err:  # busy, a refusal: the spool keeps the events for the next write
            _complain(client, str(err))
        else:
            if name in agenthooks.TURN_ENDS:
                spool.end_turn()
    if context is not None:
        answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    if name == "Stop":  # issue 22: with prime.stop_hook, ready work in the agent's epic keeps it going
        answer = agenthooks.stop_answer(root, hook)
    if answer is not None:
        sys.stdout.write(cjson.dumps(redact_known(answer)) + "\n")


def _denial(why: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": why}}


def _deny(why: str) -> None:
    sys.stdout.write(cjson.dumps(redact_known(_denial(why))) + "\n")


def _root(chdir: str | None, hook: dict[str, Any]) -> tuple[str, str | None]:
    """The work tree of -C, else of the agent's working directory (the payload's cwd), else of ours; outside
    any repository, the nearest workbench kept in SQLite without git (`wb init --no-git`, store/opening.py).
    With it, the directory that stands for its git directory (`.workbench/.local/`), or None: ask git's."""
    start = chdir
    cwd = hook.get("cwd")
    if start is None and isinstance(cwd, str) and cwd and os.path.isdir(cwd):
        start = cwd
    start = os.path.realpath(start or os.getcwd())
    root = find_root(start)
    if root is not None:
        return root, None
    from pathlib import Path

    from workbench.store import backend

    found = backend.find_nogit(Path(start))
    if found is None:
        raise NotFound(f"not inside a git repository: {start} (run `git init` first, or pass -C PATH)")
    return str(found), os.path.join(str(found), ".workbench", ".local")  # store/sqlitedb.NoGit.git_dir


def _git_dir(root: str) -> str:
    found = git_dir_of(root)
    if found is not None:
        return found
    from pathlib import Path

    from workbench.git.repo import GitRepo  # GIT_DIR and the like: git says (a subprocess, rarely)

    return str(GitRepo(Path(root)).git_dir)


def _config_facts(spool: Spool, root: str, config: str) -> tuple[list[str], str | None]:
    """(the variables config.yaml `redact` names, the SQLite database's path or None): from the cache beside the
    spool, or, when config.yaml changed since, from config.yaml itself (once; the cache is then renewed)."""
    facts = spool.config_facts(config)
    if facts is not None:
        return facts["names"], facts["db"]
    from pathlib import Path  # pathlib and typing cost a hook ~13 ms: only when config.yaml changed

    from workbench.store import backend
    from workbench.store.config import load_config

    loaded = load_config(Path(config))
    listed = loaded.get("redact") or []
    names = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    db = None
    if backend.kind_of(loaded) == "sqlite":
        named = loaded.get("sqlite_path")
        # store/sqlitedb.db_path: relative to the work tree's top (an absolute one stays itself), else the git
        # directory's wb/ (a linked worktree's: the common one's wb/worktrees/<key>/, store/spool.keep_dir_of;
        # `.workbench/.local/wb/` without git: the spool's own directory)
        db = (os.path.normpath(os.path.join(root, str(named))) if named else
              os.path.join(keep_dir_of(root, os.path.dirname(spool.dir)), "workbench.sqlite3"))
    spool.keep_config_facts(config, names, db)
    return names, db


def _complain(client: str, message: str) -> None:
    sys.stderr.write(f"wb: hook {client}: {redact_known(message)}\n")
