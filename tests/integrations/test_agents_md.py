"""`wb init --agents-md`: one wb section in AGENTS.md, between markers, updated in place, never committed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_git, run_wb
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
    assert run_git(repo, "status", "--porcelain").splitlines() == ["?? AGENTS.md"]
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
