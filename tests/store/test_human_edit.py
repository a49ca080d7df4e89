"""Human edits of state.md and board.json (CONTRACT §2, §6): comments, key order and untouched values
survive wb's writes byte for byte; the edit is recorded as a `human.edit` event; a broken file is refused
with its line number and nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import about_files
from workbench.api import Bench
from workbench.errors import Refused

pytestmark = about_files  # state.md and board.json edited by hand (on SQLite: through the verbs and wb set only)


def no_guard(repo: Path) -> None:
    """Turn off the human-edit guard window, so that a write right after a hand edit is allowed."""
    config = repo / ".workbench" / "config.yaml"
    text = config.read_text()
    assert "human_guard_seconds: 5" in text
    config.write_text(text.replace("human_guard_seconds: 5", "human_guard_seconds: 0"))


def hand_edit_frontmatter(state: Path) -> list[str]:
    """Add a comment line and move `blockers` above `status` in the frontmatter; return the new lines."""
    lines = state.read_text().split("\n")
    blockers = next(i for i, line in enumerate(lines) if line.startswith("blockers:"))
    moved = lines.pop(blockers)
    status = next(i for i, line in enumerate(lines) if line.startswith("status:"))
    lines.insert(status, moved)
    lines.insert(status, "# Kept by a human: blockers first, I read them before anything else.")
    lines = [line + "   # my inline note" if line.startswith("touched_files:") else line for line in lines]
    state.write_text("\n".join(lines))
    return lines


def test_comment_and_key_order_survive_and_the_edit_is_recorded(bench, repo, wb, git):
    no_guard(repo)
    bench.add_task("A task")  # state.md has been rewritten by a transaction once
    state = repo / ".workbench" / "state.md"
    before = hand_edit_frontmatter(state)

    r = wb(repo, "set", "next_action=Ship the parser")
    assert r.returncode == 0, r.stderr

    after = state.read_text().split("\n")
    at = after.index("next_action_set:")  # issue 22: when it was set by hand, a new key at the end
    added, after = after[at:at + 6], after[:at] + after[at + 6:]
    assert all(line.startswith("  ") for line in added[1:]) and after[at] == "---"
    assert len(after) == len(before)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert sorted(b.split(":", 1)[0] for b, _a in changed) == ["last_event", "next_action", "updated_at"]
    for b, a in changed:
        assert a.split(":", 1)[0] == b.split(":", 1)[0]
    assert "next_action: Ship the parser" in after or "next_action: 'Ship the parser'" in after

    events = json.loads(wb(repo, "log", "--json").stdout)
    edits = [e for e in events if e["type"] == "human.edit"]
    assert len(edits) == 1
    assert edits[0]["actor"] == "human"
    assert edits[0]["payload"]["file"] == "state.md"
    assert events[-1]["type"] == "state.set"
    assert events[-1]["payload"]["changes"] == {"next_action": "Ship the parser"}
    assert ".workbench/" not in git(repo, "status", "--porcelain")
    assert wb(repo, "replay", "--verify").returncode == 0


def test_hand_edit_right_after_init_is_recorded(repo, wb):
    assert wb(repo, "init").returncode == 0
    no_guard(repo)
    state = repo / ".workbench" / "state.md"
    text = state.read_text()
    state.write_text(text.replace("assumptions: []", "assumptions: [the API is stable]  # said the human"))

    r = wb(repo, "set", "next_action=go")
    assert r.returncode == 0, r.stderr
    assert "assumptions: [the API is stable]  # said the human" in state.read_text()
    edit = json.loads(wb(repo, "log", "--json", "--type", "human.edit").stdout)
    assert [e["payload"]["changes"] for e in edit] == [{"assumptions": ["the API is stable"]}]
    r = wb(repo, "replay", "--verify")
    assert r.returncode == 0, r.stdout + r.stderr


def test_hand_edited_values_are_replayable(bench, repo):
    no_guard(repo)
    bench.add_task("A task")
    state = repo / ".workbench" / "state.md"
    lines = state.read_text().split("\n")
    i = next(i for i, line in enumerate(lines) if line.startswith("next_action:"))
    lines[i:i + 1] = ["# was: " + lines[i], "next_action: 'by hand'"]
    body_before = "\n".join(lines).split("---\n", 2)[2]
    state.write_text("\n".join(lines) + "\nA paragraph the human wrote.\n")

    b = Bench.open(repo)
    assert b.status()["unrecorded_human_edits"] == ["state.md"]
    b.note("an agent note after the edit")
    assert b.status()["next_action"] == "by hand"
    edits = b.log(type="human.edit")
    assert len(edits) == 1
    assert edits[0]["payload"]["changes"] == {"next_action": "by hand"}
    assert "A paragraph the human wrote." in edits[0]["payload"]["body"]
    text = state.read_text()
    assert text.split("---\n", 2)[2].startswith(body_before.rstrip("\n"))
    assert "A paragraph the human wrote." in text and "an agent note after the edit" in text
    assert text.index("A paragraph the human wrote.") < text.index("an agent note after the edit")
    assert "# was: " in text
    assert b.replay().mismatches == []


def test_hand_edit_of_the_board_is_recorded(bench, repo):
    no_guard(repo)
    bench.add_task("First")
    bench.add_task("Second")
    board_path = repo / ".workbench" / "board.json"
    board = json.loads(board_path.read_text())
    board["tasks"].reverse()
    board["tasks"][0]["title"] = "Second, renamed by hand"
    board_path.write_text(json.dumps(board, indent=2) + "\n")

    b = Bench.open(repo)
    b.start_task("T-001")
    edits = b.log(type="human.edit")
    assert len(edits) == 1 and edits[0]["payload"]["file"] == "board.json"
    assert [t["id"] for t in edits[0]["payload"]["upsert"]] == ["T-002"]
    tasks = b.list_tasks()
    assert [t["id"] for t in tasks] == ["T-002", "T-001"]
    assert tasks[0]["title"] == "Second, renamed by hand"
    assert tasks[1]["status"] == "in_progress"
    assert b.replay().mismatches == []
    assert b.validate() == []


def broken_line(state: Path) -> int:
    """Break the YAML on the next_action line; return that line's number (1-based, in the file)."""
    lines = state.read_text().split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith("next_action:"))
    lines[index] = "next_action: a: b: c"
    state.write_text("\n".join(lines))
    return index + 1


def test_broken_yaml_is_refused_with_its_line_and_nothing_changes(bench, repo, wb, git, wb_hashes, error_line):
    no_guard(repo)
    bench.add_task("A task")
    line = broken_line(repo / ".workbench" / "state.md")
    files = wb_hashes(repo)
    head = git(repo, "rev-parse", "HEAD").strip()

    r = wb(repo, "set", "next_action=fixed")
    assert r.returncode == 5
    message = error_line(r.stderr)
    assert message.startswith(f"wb: state.md:{line}: ")
    assert "YAML" in message
    assert wb_hashes(repo) == files
    assert git(repo, "rev-parse", "HEAD").strip() == head

    r = wb(repo, "validate")
    assert r.returncode == 5
    assert f"state.md:{line}:" in r.stderr
    r = wb(repo, "status")
    assert r.returncode == 5
    assert error_line(r.stderr).startswith(f"wb: state.md:{line}: ")


def test_broken_board_json_is_refused_with_its_line(bench, repo, wb_hashes):
    no_guard(repo)
    bench.add_task("A task")
    board = repo / ".workbench" / "board.json"
    lines = board.read_text().split("\n")
    lines[3] = lines[3] + ","  # a trailing comma inside the object
    board.write_text("\n".join(lines))
    files = wb_hashes(repo)
    with pytest.raises(Refused, match=r"^board\.json:\d+: broken JSON"):
        Bench.open(repo).note("refused")
    assert wb_hashes(repo) == files


def test_hand_edit_that_breaks_the_schema_is_refused(bench, repo, wb, wb_hashes, error_line):
    no_guard(repo)
    bench.add_task("A task")
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("blockers: []", "blockers:"))  # null where a list belongs
    files = wb_hashes(repo)
    r = wb(repo, "note", "refused")
    assert r.returncode == 5
    assert error_line(r.stderr) == "wb: state.md: blockers: null is not of type array"
    assert wb_hashes(repo) == files
