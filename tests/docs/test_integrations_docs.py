"""docs/integrations.md cannot rot: its settings parse and name what wb really serves and declares."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "integrations.md").read_text()


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, flags=re.S)


def test_the_claude_code_settings_hook_every_event_wb_records() -> None:
    from workbench.integrations.agenthooks import CLAUDE_CODE_EVENTS

    settings = [json.loads(b) for b in blocks("json") if '"hooks"' in b]
    assert len(settings) == 2  # Claude Code's, then Codex's
    hooks = settings[0]["hooks"]
    assert set(hooks) == set(CLAUDE_CODE_EVENTS)
    for groups in hooks.values():
        assert [h["command"] for g in groups for h in g["hooks"]] == ["wb hook claude-code"]
    codex = settings[1]["hooks"]
    assert set(codex) <= set(CLAUDE_CODE_EVENTS)
    for groups in codex.values():
        assert [h["command"] for g in groups for h in g["hooks"]] == ["wb hook codex"]


def test_the_mcp_settings_start_wb_mcp() -> None:
    # issue 31: a client starts wb from its own environment, so every entry names wb by its absolute path
    wb = "/home/dev/.venvs/wb/bin/wb"
    cursor = [json.loads(b) for b in blocks("json") if "mcpServers" in b]
    assert cursor and all(c["mcpServers"]["wb"] == {"command": wb, "args": ["mcp"]} for c in cursor)
    from workbench.ops.init import CODEX_PASSED_ENV

    codex = [tomllib.loads(b) for b in blocks("toml")]  # as `wb init --codex` writes it
    assert codex == [{"mcp_servers": {"wb": {"command": wb, "args": ["mcp"], "env_vars": list(CODEX_PASSED_ENV)}}}]
    assert 'claude mcp add wb -- "$(command -v wb)" mcp' in DOC


def test_the_tool_table_is_the_servers_tool_list() -> None:
    pytest.importorskip("mcp")
    from workbench.integrations.mcp import TOOLS

    documented = re.findall(r"^\| `(\w+)` \|", DOC.split("## `wb mcp`")[1].split("###")[0], flags=re.M)
    assert documented == list(TOOLS)


def test_the_pre_commit_snippet_names_the_declared_hook() -> None:
    yaml = pytest.importorskip("yaml")
    declared = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    config = yaml.safe_load(next(b for b in blocks("yaml") if "repos:" in b))
    assert {h["id"] for r in config["repos"] for h in r["hooks"]} <= declared
    assert "- run: wb validate" in DOC


def test_the_event_table_is_what_the_hook_records() -> None:
    from workbench.integrations.agenthooks import CLAUDE_CODE_EVENTS

    rows = dict(re.findall(r"^\| `(\w+)` \| `(agent\.\w+)` \|", DOC, flags=re.M))
    assert rows == CLAUDE_CODE_EVENTS
