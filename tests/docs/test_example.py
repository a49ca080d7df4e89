""".workbench.example/ is a complete, valid workbench: it validates and replays, so it cannot rot."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import run_git, run_wb

EXAMPLE = Path(__file__).resolve().parents[2] / ".workbench.example"


def test_example_validates_and_replays(repo: Path) -> None:
    shutil.copytree(EXAMPLE, repo / ".workbench")
    run_git(repo, "add", ".workbench")
    run_git(repo, "commit", "-q", "-m", "the example workbench")
    validate = run_wb(repo, "validate")
    assert validate.returncode == 0, validate.stderr
    verify = run_wb(repo, "replay", "--verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    assert status["board"]["total"] == 3


def test_example_has_everything_the_docs_promise() -> None:
    board = json.loads((EXAMPLE / "board.json").read_text())
    assert {t["kind"] for t in board["tasks"]} == {"build", "review"}
    types = [json.loads(line)["type"] for line in (EXAMPLE / "events.jsonl").read_text().splitlines()]
    for needed in ("session.start", "plan.commit", "step.start", "step.end", "tool.call", "tool.result",
                   "approval.requested", "approval.granted", "session.complete", "note.add"):
        assert needed in types, needed
    state = (EXAMPLE / "state.md").read_text()
    assert "# Decision log" in state and "### " in state
    config = (EXAMPLE / "config.yaml").read_text()
    assert "tools:" in config and "hooks:" in config and "before_tool_call" in config
