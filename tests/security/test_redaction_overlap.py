"""Overlapping secrets (issue 14.1): with `redact: [DB_USER, DATABASE_URL]`, DB_USER=app and
DATABASE_URL=postgres://app:Hunter2Pass@db, replacing the short value first turns the URL into
`postgres://[redacted]:Hunter2Pass@db` and the password reaches the record. Through the real paths a user
takes: a tool's stdout and stderr in `wb run` (inline, and large enough to be an artifact), and a Claude Code
PostToolUse payload fed to `wb hook claude-code` on stdin."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests import stored
from tests.integrations.test_hook import payloads

from .helpers import PY, WB_ARGV, config_yaml, init_workbench, plan, run_git, wb_ok

USER = "app"
PASSWORD = "Hunter2Pass"
URL = f"postgres://{USER}:{PASSWORD}@db.internal:5432/prod"
ENV = {"DB_USER": USER, "DATABASE_URL": URL, "CI": "1"}
CONFIG_ORDER = ["DB_USER", "DATABASE_URL"]  # the short one first, as a user writes them

SAY = "import os, sys; u = os.environ['DATABASE_URL']; print('connect', u); sys.stderr.write('retry ' + u)"
SAY_A_LOT = "import os; print(('connect ' + os.environ['DATABASE_URL'] + ' ') * 400)"


def _recorded(repo: Path) -> dict[str, str]:
    out = stored.recorded_text(repo)
    out["git log -p"] = run_git(repo, "log", "-p", "--all", "--format=%H%n%B", "--no-textconv")
    return out


def _leaks(repo: Path) -> list[str]:
    return [where for where, text in _recorded(repo).items() if PASSWORD in text or URL in text]


def test_a_url_holding_a_shorter_secret_never_reaches_the_record_through_a_tool(repo: Path) -> None:
    init_workbench(repo, config_yaml(
        tools={"say": {"argv": [PY, "-c", SAY], "mode": "safe_readonly"},
               "lots": {"argv": [PY, "-c", SAY_A_LOT], "mode": "safe_readonly"}},
        redact=CONFIG_ORDER))
    name = plan(repo, [{"description": "connect", "tool": "say"}, {"description": "connect a lot", "tool": "lots"}])
    wb_ok(repo, "run", "migrate the database", "--plan", name, env=ENV)

    assert not _leaks(repo), f"the password reached {_leaks(repo)}"
    recorded = _recorded(repo)
    assert "postgres://[redacted]" not in recorded[".workbench/events.jsonl"]  # the URL went whole
    assert "connect [redacted]" in recorded[".workbench/events.jsonl"]
    assert "connect [redacted]" in recorded[".workbench/calls.jsonl"]
    assert any("connect [redacted]" in text for where, text in recorded.items() if "/artifacts/" in where)
    wb_ok(repo, "validate", env=ENV)
    wb_ok(repo, "replay", "--verify", env=ENV)


def test_a_url_holding_a_shorter_secret_never_reaches_the_record_through_a_hook(repo: Path) -> None:
    init_workbench(repo, config_yaml(redact=CONFIG_ORDER))
    shape = payloads(repo)["PostToolUse"]
    shape["tool_input"] = {"command": f"psql {URL} -c 'select 1'"}
    shape["tool_response"] = {"stdout": f"connected to {URL}\n", "stderr": f"warning: {URL} is plain text",
                              "interrupted": False, "isImage": False}
    for event in (shape, {**payloads(repo)["Stop"], "reason": URL}):
        proc = subprocess.run([*WB_ARGV, "hook", "claude-code"], cwd=repo, input=json.dumps(event),
                              capture_output=True, text=True, timeout=60, env={**_env(), **ENV})
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr

    assert not _leaks(repo), f"the password reached {_leaks(repo)}"
    log = _recorded(repo)[".workbench/events.jsonl"]
    assert "connected to [redacted]" in log and "postgres://[redacted]" not in log
    wb_ok(repo, "validate", env=ENV)


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
