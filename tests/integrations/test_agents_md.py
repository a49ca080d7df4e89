"""`wb init --agents-md`: one wb section in AGENTS.md, between markers, updated in place, never committed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_git, run_wb
from tests.integrations.hookfixtures import tree_status
from workbench.integrations.agents_md import AGENTS_BEGIN, AGENTS_END, AGENTS_SECTION


def test_twice_gives_one_section_and_it_is_not_committed(repo: Path) -> None:
    first = run_wb(repo, "init", "--agents-md")
    assert first.returncode == 0, first.stderr
    assert "AGENTS.md: wb section created (not committed" in first.stdout
    text = (repo / "AGENTS.md").read_text()
    assert text == AGENTS_SECTION and "wb status --json" in text and "wb task add" in text and "wb note" in text

    second = run_wb(repo, "init", "--agents-md")
    assert second.returncode == 0 and "AGENTS.md: wb section already up to date" in second.stdout
    assert (repo / "AGENTS.md").read_text().count(AGENTS_BEGIN) == 1
    assert tree_status(repo).splitlines() == ["?? AGENTS.md"]  # on SQLite, outside the untracked .workbench/
    assert "AGENTS.md" not in run_git(repo, "log", "--name-only", "--format=")


def test_existing_text_is_kept_and_an_old_section_is_replaced(repo: Path) -> None:
    mine = "# Agents\n\nUse tabs.\n"
    (repo / "AGENTS.md").write_text(mine)
    assert run_wb(repo, "init", "--agents-md").returncode == 0
    assert (repo / "AGENTS.md").read_text() == mine + "\n" + AGENTS_SECTION

    outdated = f"{mine}\n{AGENTS_BEGIN}\nold wb advice\n{AGENTS_END}\n\n## Style\nShort lines.\n"
    (repo / "AGENTS.md").write_text(outdated)
    out = json.loads(run_wb(repo, "init", "--agents-md", "--json").stdout)
    assert out["agents_md"] == "updated"
    assert (repo / "AGENTS.md").read_text() == f"{mine}\n{AGENTS_SECTION}\n## Style\nShort lines.\n"
    assert json.loads(run_wb(repo, "init", "--agents-md", "--json").stdout)["agents_md"] == "unchanged"


def test_damaged_markers_are_refused_and_left_alone(repo: Path) -> None:
    broken = f"# Agents\n{AGENTS_BEGIN}\nno end marker\n"
    (repo / "AGENTS.md").write_text(broken)
    proc = run_wb(repo, "init", "--agents-md")
    assert proc.returncode == 5 and "AGENTS.md: the wb markers are damaged" in proc.stderr
    assert (repo / "AGENTS.md").read_text() == broken


def test_without_the_flag_nothing_is_written_outside_the_workbench(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    assert not (repo / "AGENTS.md").exists()
    outside = [line for line in run_git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
               if ".workbench/" not in line]
    assert outside == []


# -- issue 13 §7: the file's line endings, CLAUDE.md, what the section tells an agent ------------------------
def test_a_crlf_file_stays_crlf_and_only_the_section_changes(repo: Path) -> None:
    mine = b"# Agents\r\n\r\nUse tabs.\r\n"
    (repo / "AGENTS.md").write_bytes(mine)
    assert run_wb(repo, "init", "--agents-md").returncode == 0
    data = (repo / "AGENTS.md").read_bytes()
    assert data.startswith(mine) and data == mine + b"\r\n" + AGENTS_SECTION.replace("\n", "\r\n").encode()
    assert b"\n" not in data.replace(b"\r\n", b"")  # not one bare LF

    old = f"\r\n{AGENTS_BEGIN}\r\nold wb advice\r\n{AGENTS_END}\r\n\r\n## Style\r\nShort lines.\r\n"
    outdated = mine + old.encode()
    (repo / "AGENTS.md").write_bytes(outdated)
    out = json.loads(run_wb(repo, "init", "--agents-md", "--json").stdout)
    assert out["agents_md"] == "updated"
    data = (repo / "AGENTS.md").read_bytes()
    assert data == (mine + b"\r\n" + AGENTS_SECTION.replace("\n", "\r\n").encode()
                    + b"\r\n## Style\r\nShort lines.\r\n")
    assert json.loads(run_wb(repo, "init", "--agents-md", "--json").stdout)["agents_md"] == "unchanged"


def test_the_section_says_how_to_pick_a_task_the_mcp_tools_and_what_to_do_without_wb() -> None:
    assert "wb task next" in AGENTS_SECTION and "wb task next --start" in AGENTS_SECTION
    assert "wb mcp" in AGENTS_SECTION and "`task_update`" in AGENTS_SECTION
    assert "If `wb` is not found" in AGENTS_SECTION and "python -m workbench.cli.main" in AGENTS_SECTION
    assert all(len(line) <= 120 for line in AGENTS_SECTION.splitlines())


def test_a_claude_md_without_the_import_is_named_and_left_alone(repo: Path) -> None:
    claude = b"# Project memory\r\n\r\nRun make before committing.\r\n"
    (repo / "CLAUDE.md").write_bytes(claude)
    first = run_wb(repo, "init", "--agents-md")
    assert first.returncode == 0, first.stderr
    assert ("CLAUDE.md does not import AGENTS.md, so Claude Code will not read the wb section: add the line "
            "@AGENTS.md to it, or run `wb init --agents-md --claude-md`") in first.stdout
    assert (repo / "CLAUDE.md").read_bytes() == claude  # advice only
    out = json.loads(run_wb(repo, "init", "--agents-md", "--json").stdout)
    assert out["claude_md"] == {"state": "no_import", "file": "CLAUDE.md", "changed": None}

    added = run_wb(repo, "init", "--agents-md", "--claude-md")
    assert added.returncode == 0, added.stderr
    assert "CLAUDE.md: added the line @AGENTS.md, so Claude Code reads the wb section" in added.stdout
    assert (repo / "CLAUDE.md").read_bytes() == claude + b"\r\n@AGENTS.md\r\n"  # its own line endings
    again = run_wb(repo, "init", "--agents-md", "--claude-md")
    assert "CLAUDE.md" not in again.stdout and (repo / "CLAUDE.md").read_bytes() == claude + b"\r\n@AGENTS.md\r\n"
    assert json.loads(run_wb(repo, "init", "--agents-md", "--json").stdout)["claude_md"]["state"] == "imports"
    assert "CLAUDE.md" not in run_git(repo, "log", "--name-only", "--format=")  # never committed


def test_no_claude_md_no_advice_and_the_flag_creates_the_import(repo: Path) -> None:
    plain = run_wb(repo, "init", "--agents-md")
    assert "CLAUDE.md" not in plain.stdout and not (repo / "CLAUDE.md").exists()
    made = run_wb(repo, "init", "--claude-md")  # implies --agents-md
    assert made.returncode == 0, made.stderr
    assert (repo / "CLAUDE.md").read_text() == "@AGENTS.md\n" and (repo / "AGENTS.md").exists()
    assert "CLAUDE.md: created with the line @AGENTS.md" in made.stdout


def test_an_import_in_dot_claude_counts(repo: Path) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "CLAUDE.md").write_text("Notes.\n@./AGENTS.md\n")
    out = json.loads(run_wb(repo, "init", "--agents-md", "--json").stdout)
    assert out["claude_md"] == {"state": "imports", "file": ".claude/CLAUDE.md", "changed": None}
