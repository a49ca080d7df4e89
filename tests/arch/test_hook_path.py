"""A tool call's hooks cost almost nothing: `wb hook claude-code` for PreToolUse and PostToolUse imports no
typer, click, rich, jsonschema, ruamel, GitPython or YAML parser, runs no git (no subprocess), and does not
open the write path — it reads stdin, redacts, appends to the spool and answers. Checked on the modules the
real entry point leaves imported (deterministic; bench/run.py's `hooks` row measures the time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_git
from tests.integrations.hookfixtures import fixture, spool_lines

FORBIDDEN = ("typer", "click", "rich", "jsonschema", "ruamel", "yaml", "git", "subprocess",
             "workbench.store.transaction", "workbench.store.workbench", "workbench.api", "workbench.cli.app")

PROBE = """
import json, sys
from workbench.cli.main import main
code = main(["hook", "claude-code"])
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""


def modules_after(repo: Path, payload: dict, out: Path) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out)], cwd=repo, input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    result = json.loads(out.read_text())
    assert result["code"] == 0
    return result["modules"]


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"])
def test_a_tool_calls_hook_imports_none_of_the_heavy_parts(bench, repo: Path, tmp_path: Path, event: str) -> None:
    payload = fixture("claude-code", event, repo)
    if event == "PreToolUse":  # the guard's slowest case: a command that names .workbench/
        payload["tool_input"] = {"command": "cat .workbench/board.json | grep todo > /tmp/todo.txt"}
    modules_after(repo, fixture("claude-code", "UserPromptSubmit", repo), tmp_path / "warm.json")  # caches
    loaded = modules_after(repo, payload, tmp_path / "out.json")
    assert "workbench.integrations.hookfast" in loaded  # the fast entry answered it
    heavy = sorted(m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))
    assert heavy == []
    assert len(spool_lines(repo)) == 2  # it did its work: the event is in the spool
    assert run_git(repo, "status", "--porcelain") == ""
