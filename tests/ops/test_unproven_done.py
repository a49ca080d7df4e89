"""Issue 30.4: a task marked done without its acceptance having passed — forced, or by a hand edit, an import of
a `- [x]` line, a merge — is flagged wherever done tasks are shown (status, prime, the handoff, `wb task list`,
`wb diff` in every format, `wb board` and the web page), never indistinguishable from a proven done. Before,
a hand edit's done showed as a plain `done` everywhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import stored
from tests.conftest import call_wb, run_git


def out(repo: Path, *args: str) -> str:
    proc = call_wb(repo, *args)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


@pytest.mark.parametrize("how", ["import of a done line", "hand edit"])
def test_a_done_without_proof_is_flagged_in_every_view(bench: Any, repo: Path, how: str) -> None:
    out(repo, "task", "add", "Proven", "--accept", "true")
    out(repo, "task", "done", "T-001")
    if how == "import of a done line":
        (repo / "more.md").write_text("- [x] Claimed done\n")
        out(repo, "task", "import", "more.md")
    else:
        if not stored.FILES:
            pytest.skip("a hand edit of board.json is the files backend's")
        out(repo, "task", "add", "Claimed done")
        board = repo / ".workbench" / "board.json"
        data = json.loads(board.read_text())
        data["tasks"][1]["status"] = "done"
        board.write_text(json.dumps(data, indent=2))
        out(repo, "note", "the hand edit is recorded by this write")
    status = json.loads(out(repo, "status", "--json"))
    assert status["board"]["unproven"] == [{"id": "T-002", "why": "no proof"}]
    assert "T-002 done (no proof)" in out(repo, "status") and "T-001 done" not in out(repo, "status")
    assert "Done without proof (1): T-002 (no proof)." in out(repo, "prime")
    listing = out(repo, "task", "list", "--all")
    assert "done (no proof)" in next(line for line in listing.splitlines() if line.startswith("T-002"))
    assert "(no proof)" not in next(line for line in listing.splitlines() if line.startswith("T-001"))
    out(repo, "handoff")
    handoff = json.loads((repo / ".workbench" / "handoff.json").read_text()) if stored.FILES else \
        json.loads(out(repo, "handoff", "--json"))
    assert handoff["unproven"] == [{"id": "T-002", "why": "no proof"}]
    board = json.loads(out(repo, "board", "--json"))
    cards = {c["id"]: c for col in board["columns"] for c in col["tasks"]}
    assert cards["T-002"]["unproven"] == "no proof" and cards["T-001"]["unproven"] is None
    from workbench.api import Bench
    from workbench.web import views

    page = views.board(Bench.open(repo))
    web_cards = {c["id"]: c for col in page["columns"] for c in col["tasks"]}
    assert "no proof" in web_cards["T-002"]["marks"] and "no proof" not in web_cards["T-001"]["marks"]


def test_the_diff_of_a_hand_edited_done_says_no_proof(bench: Any, repo: Path) -> None:
    if not stored.FILES:
        pytest.skip("a hand edit of board.json between two commits is the files backend's")
    out(repo, "task", "add", "Claimed done")
    base = run_git(repo, "rev-parse", "HEAD").strip()
    board = repo / ".workbench" / "board.json"
    data = json.loads(board.read_text())
    data["tasks"][0]["status"] = "done"
    board.write_text(json.dumps(data, indent=2))
    out(repo, "note", "records the edit")
    assert "[done: no proof]" in out(repo, "diff", base, "HEAD")
    assert json.loads(out(repo, "diff", base, "HEAD", "--format", "json"))["board"]["changed"][0]["unproven"] \
        == "no proof"
    assert "**(no proof)**" in out(repo, "diff", base, "HEAD", "--format", "markdown")
    assert "(no proof)" in out(repo, "diff", base, "HEAD", "--format", "html")
