"""`wb hook claude-code` and `wb hook codex`: one hook event in, one spool line out, the answer on stdout.

cli/main.py dispatches here before typer is imported. A tool call's hooks (PreToolUse, PostToolUse…) read
stdin, map the payload (agenthooks), decide a PreToolUse (hookguard), redact, append to the spool in the git
directory (store/spool.py) and answer — no typer, rich, jsonschema, YAML parser, git subprocess or even the
json package (model/cjson), and nothing
in the work tree is touched, so `git status` stays clean. SessionStart, Stop, PreCompact and SessionEnd then
fold the spool into the log and commit it (the full write path, paid once per turn).

Always exits 0: a wb problem is one line on stderr and never blocks the agent (Claude Code reads exit 2 as
"block this tool call", or "do not stop", and other codes as a failed hook shown to the user). A denial is
Claude Code's decision control on stdout (`hookSpecificOutput.permissionDecision: "deny"`), exit 0.
"""

from __future__ import annotations

import os
import sys

from workbench.errors import NotFound, WorkbenchError
from workbench.integrations import agenthooks
from workbench.model import cjson
from workbench.model.redaction import redact, redact_known, secret_values
from workbench.store.spool import Spool, find_root, git_dir_of

TYPE_CHECKING = False  # not typing's, nor pathlib: each would cost a hook a tenth of its time
if TYPE_CHECKING:
    from typing import Any


def main(client: str, chdir: str | None = None) -> int:
    try:
        _run(client, chdir)
    except WorkbenchError as err:
        _complain(client, str(err))
    except Exception as err:  # a bug, still never the agent's problem
        _complain(client, f"internal error: {type(err).__name__}: {err}")
    return 0


def _run(client: str, chdir: str | None) -> None:
    raw = sys.stdin.buffer.read()
    hook = agenthooks.parse_hook_payload(raw)
    root = _root(chdir, hook)
    if not os.path.isdir(os.path.join(root, ".workbench")):
        _complain(client, f"no workbench in {root}: run `wb init` first")
        return
    spool = Spool(_git_dir(root))
    name = hook["hook_event_name"]
    type_, payload = agenthooks.hook_event(hook, client)
    answer: dict[str, Any] | None = None
    if name == "PreToolUse":
        from workbench.integrations import hookguard

        why = hookguard.denial(hook) or hookguard.out_of_scope(root, hook)
        if why:
            payload["denied"] = why
            answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": why}}
    payload = redact(payload, _secrets(spool, root))
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
    if answer is not None:
        sys.stdout.write(cjson.dumps(redact_known(answer)) + "\n")


def _root(chdir: str | None, hook: dict[str, Any]) -> str:
    """The work tree of -C, else of the agent's working directory (the payload's cwd), else of ours."""
    start = chdir
    cwd = hook.get("cwd")
    if start is None and isinstance(cwd, str) and cwd and os.path.isdir(cwd):
        start = cwd
    start = os.path.realpath(start or os.getcwd())
    root = find_root(start)
    if root is None:
        raise NotFound(f"not inside a git repository: {start} (run `git init` first, or pass -C PATH)")
    return root


def _git_dir(root: str) -> str:
    found = git_dir_of(root)
    if found is not None:
        return found
    from pathlib import Path

    from workbench.git.repo import GitRepo  # GIT_DIR and the like: git says (a subprocess, rarely)

    return str(GitRepo(Path(root)).git_dir)


def _secrets(spool: Spool, root: str) -> list[str]:
    """The values of the variables config.yaml `redact` names: from the names cached beside the spool, or, when
    config.yaml changed since, from config.yaml itself (once; the cache is then renewed)."""
    config = os.path.join(root, ".workbench", "config.yaml")
    names = spool.redact_names(config)
    if names is None:
        from pathlib import Path

        from workbench.store.config import load_config

        listed = load_config(Path(config)).get("redact") or []
        names = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
        spool.keep_redact_names(config, names)
    return secret_values({"redact": names})


def _complain(client: str, message: str) -> None:
    sys.stderr.write(f"wb: hook {client}: {redact_known(message)}\n")
