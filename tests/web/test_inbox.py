"""What waits for a person (issue 32): `wb status` lists it first and `--json` carries it as `inbox`, each item
with the exact command that answers it — a harness yield, commands pending `wb trust`, a task done without
proof, a stale note."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_git, run_wb
from workbench.ops.inbox import SHOWN, items

from .conftest import yielding_session


def status(repo: Path) -> dict[str, object]:
    proc = run_wb(repo, "status", "--json")
    assert proc.returncode == 0, proc.stderr
    data: dict[str, object] = json.loads(proc.stdout)
    return data


def test_nothing_waits_on_a_fresh_board(seeded: Path) -> None:
    assert status(seeded)["inbox"] == []
    assert "inbox" not in run_wb(seeded, "status").stdout


def test_a_yield_a_done_without_proof_and_a_stale_note_each_with_its_command(seeded: Path) -> None:
    (seeded / "config.py").write_text("x = 1\n")
    run_git(seeded, "add", "config.py")
    run_git(seeded, "commit", "-q", "-m", "config")
    assert run_wb(seeded, "note", "chose TOML", "--about", "config.py").returncode == 0
    (seeded / "config.py").write_text("x = 2\n")
    run_git(seeded, "commit", "-q", "-am", "change config")
    (seeded / "done.md").write_text("- [x] Done before wb knew of it\n")  # imported done: nothing proves it
    assert run_wb(seeded, "task", "import", "done.md").returncode == 0
    yielding_session(seeded)
    inbox = status(seeded)["inbox"]
    assert isinstance(inbox, list)
    by_kind = {item["kind"]: item for item in inbox}
    assert set(by_kind) == {"yield", "unproven", "stale"}, inbox
    assert by_kind["yield"]["command"].startswith("wb resume") and "report the numbers" in by_kind["yield"]["what"]
    assert by_kind["unproven"]["command"] == "wb task show T-004" and "no proof" in by_kind["unproven"]["what"]
    assert by_kind["stale"]["command"].startswith("wb verify M-") and "config.py" in by_kind["stale"]["what"]
    text = run_wb(seeded, "status").stdout.splitlines()
    assert [line.split()[0] for line in text[:3]] == ["inbox"] * 3, text
    assert any("wb task show T-004" in line for line in text[:3])


def test_items_of_trust_an_approval_and_many_unproven() -> None:
    payload = {"pending": {"kind": "approval", "reason": "approval: deploy", "command": "wb resume --approve"},
               "session": {"goal": "Ship it"},
               "untrusted": {"count": 4, "commands": ["a", "b", "c", "d"], "command": "wb trust"},
               "board": {"unproven": [{"id": f"T-{i:03}", "why": "forced"} for i in range(SHOWN + 5)]}}
    got = items(payload)
    assert got[0] == {"kind": "approval", "what": "session \u201cShip it\u201d waits: approval: deploy",
                      "command": "wb resume --approve"}
    assert got[1] == {"kind": "trust", "what": "4 commands from git not trusted yet: a, b, c and 1 more",
                      "command": "wb trust"}
    assert len([i for i in got if i["kind"] == "unproven"]) == SHOWN + 1
    assert got[-1]["what"] == "and 5 more done without proof"
