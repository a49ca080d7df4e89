"""A person's save of state.md or board.json while a wb write is in flight is never silently overwritten
(issue 11, item 11).

Before: a transaction loaded the documents, then replaced state.md and board.json with what it had made of
them, so a save landing between the load and the rename was gone — in no file and no event (13 of 60 in a race
with three agent writers). Now the transaction looks at both files again before it writes anything: if one
changed since its load it loads again, records the person's edit as `human.edit`, and applies its own events
after it. And just before each rename it looks once more: a save landing in that last moment is kept (the
file is left as the person saved it, and the next wb command records the edit).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import WB_ARGV, about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound, committed_notes, go, paused

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _save(path: Path, text: str) -> None:
    """Save as an editor does: a temp file beside it, renamed over it."""
    tmp = path.with_name(f".{path.name}.swp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _init(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    text = config.read_text()
    assert "human_guard_seconds: 5" in text
    # agents write right after a hand edit
    config.write_text(text.replace("human_guard_seconds: 5", "human_guard_seconds: 0"))
    run_git(repo, "commit", "-qam", "no guard window")


def _events(repo: Path, type_: str) -> list[dict]:
    lines = (repo / ".workbench" / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == type_]


@pytest.mark.parametrize("point", ["after_state_stat", "before_event_append", "before_rename:state.md"])
def test_a_save_of_state_md_during_a_note_is_kept_and_recorded(repo: Path, tmp_path: Path, point: str) -> None:
    _init(repo)
    assert run_wb(repo, "note", "before").returncode == 0
    proc, marker = paused(repo, tmp_path, point, "note", "in flight")
    state = repo / ".workbench" / "state.md"
    _save(state, state.read_text() + "\nA line the person typed.\n")
    done = go(proc, marker)
    assert done.returncode == 0, done.stderr  # the note is acknowledged
    assert run_wb(repo, "note", "after").returncode == 0
    text = state.read_text()
    assert "A line the person typed." in text, "the hand edit was overwritten"
    edits = _events(repo, "human.edit")
    assert edits and "A line the person typed." in edits[-1]["payload"]["body"], "the hand edit is not recorded"
    assert committed_notes(repo) == ["before", "in flight", "after"]
    assert run_wb(repo, "validate").returncode == 0
    replay = run_wb(repo, "replay", "--verify")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    if point != "before_rename:state.md":  # saved before wb wrote anything: both the edit and the note stay
        assert "in flight" in text


def test_a_save_based_on_a_read_older_than_wbs_last_write_keeps_both(repo: Path) -> None:
    """The racing test's third loss, made deterministic (found by logging every read of its editor): the
    person's editor read state.md (holding their first save), wb's next write recorded that save as a
    human.edit and wrote its own state.md, and then the editor saved its buffer with a second line over wb's
    file. That file's last_event is older than wb's write, so the next load took it for a snapshot behind the
    log and folded the log into it, and the recorded human.edit put the first save's decision log back over the
    second: save-two was in no file and no event. Now it is recorded, merged with what wb wrote since."""
    _init(repo)
    assert run_wb(repo, "note", "before").returncode == 0
    state = repo / ".workbench" / "state.md"
    _save(state, state.read_text() + "\nsave-one\n")
    buffer = state.read_text()  # the editor's buffer, read before wb's next write
    assert run_wb(repo, "note", "in flight").returncode == 0  # records save-one as a human.edit
    _save(state, buffer + "\nsave-two\n")  # the editor saves its buffer over wb's newer file
    assert run_wb(repo, "note", "after").returncode == 0
    text = state.read_text()
    for mark in ("save-one", "save-two", "in flight", "after"):
        assert mark in text, f"{mark} is not in the decision log"
    edits = _events(repo, "human.edit")
    assert len(edits) == 2 and "save-two" in edits[-1]["payload"]["body"], "the second save is not recorded"
    assert committed_notes(repo) == ["before", "in flight", "after"]
    assert run_wb(repo, "validate").returncode == 0
    replay = run_wb(repo, "replay", "--verify")
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_a_board_saved_from_a_read_older_than_wbs_last_write_keeps_both(repo: Path) -> None:
    """The same for board.json: the person's editor read the board, wb added a task, and the editor saved its
    buffer (a title changed) over wb's newer board. Their rename is recorded, and wb's task is still there."""
    _init(repo)
    assert run_wb(repo, "task", "add", "first").returncode == 0
    board_path = repo / ".workbench" / "board.json"
    buffer = json.loads(board_path.read_text())  # the editor's buffer
    assert run_wb(repo, "task", "add", "second").returncode == 0
    buffer["tasks"][0]["title"] = "first, renamed by hand"
    _save(board_path, json.dumps(buffer, indent=2) + "\n")  # saved over wb's newer board
    assert run_wb(repo, "task", "add", "third").returncode == 0
    titles = [t["title"] for t in json.loads(board_path.read_text())["tasks"]]
    assert titles == ["first, renamed by hand", "second", "third"], titles
    assert _events(repo, "human.edit"), "the hand edit is not recorded"
    assert run_wb(repo, "validate").returncode == 0
    replay = run_wb(repo, "replay", "--verify")
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_a_same_size_save_in_the_same_clock_tick_as_wbs_write_is_not_taken_for_wbs(repo: Path) -> None:
    """An editor's save right after wb's write can have the same size and, within one tick of the file system's
    clock, the same mtime: wb must still see that the file is not the one it wrote (the inode differs)."""
    _init(repo)
    assert run_wb(repo, "note", "a line to change").returncode == 0
    state = repo / ".workbench" / "state.md"
    st = state.stat()
    text = state.read_text()
    assert "a line to change" in text
    tmp = state.with_name(".state.md.swp")
    tmp.write_text(text.replace("a line to change", "a line I changed"))  # the same size
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same tick
    os.replace(tmp, state)
    assert state.stat().st_size == st.st_size and state.stat().st_mtime_ns == st.st_mtime_ns
    assert run_wb(repo, "note", "after").returncode == 0
    text = state.read_text()
    assert "a line I changed" in text and "after" in text, "the hand edit was overwritten"
    edits = _events(repo, "human.edit")
    assert edits and "a line I changed" in edits[-1]["payload"]["body"], "the hand edit is not recorded"


def test_a_save_of_board_json_during_a_task_add_is_kept_and_recorded(repo: Path, tmp_path: Path) -> None:
    _init(repo)
    assert run_wb(repo, "task", "add", "first").returncode == 0
    proc, marker = paused(repo, tmp_path, "before_event_append", "task", "add", "second")
    board_path = repo / ".workbench" / "board.json"
    board = json.loads(board_path.read_text())
    board["tasks"][0]["title"] = "first, renamed by hand"
    _save(board_path, json.dumps(board, indent=2) + "\n")
    done = go(proc, marker)
    assert done.returncode == 0, done.stderr
    titles = [t["title"] for t in json.loads(board_path.read_text())["tasks"]]
    assert titles == ["first, renamed by hand", "second"], titles
    assert _events(repo, "human.edit"), "the hand edit is not recorded"
    replay = run_wb(repo, "replay", "--verify")
    assert replay.returncode == 0, replay.stdout + replay.stderr


EDITOR = r"""
import os, sys, time
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
done = []
for i in range(n):
    with open(path) as fh:
        text = fh.read()
    mark = f"hand-edit-{i}"
    tmp = path + ".swp"
    with open(tmp, "w") as fh:
        fh.write(text + "\n" + mark + "\n")
    os.replace(tmp, path)
    done.append(mark)
    time.sleep(0.05)
open(out, "w").write("\n".join(done))
"""


# Lost 1 of 40 marks in about 1 run of 4 under load until the editor's reads were logged: its save from a
# buffer read before wb's write landed after wb's rename, and the next load folded the log over it
# (test_a_save_based_on_a_read_older_than_wbs_last_write_keeps_both pins that); 76 runs clean since, at load 9-11.
def test_hand_edits_racing_three_agent_writers(repo: Path, tmp_path: Path) -> None:
    """Three agents write notes while a person saves state.md again and again: every edit the person saved is
    in the final state.md or recorded as a human.edit — none is overwritten silently."""
    _init(repo)
    state = repo / ".workbench" / "state.md"
    writers = []
    for w in range(3):
        script = "; ".join(f"{' '.join(WB_ARGV)} note agent-{w}-{i}" for i in range(10))
        writers.append(subprocess.Popen(["bash", "-c", f"set -e; {script}"], cwd=repo, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=dict(os.environ, WB_LOCK_TIMEOUT="60")))
    marks_file = tmp_path / "marks"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(state), "40", str(marks_file)])
    assert editor.wait(timeout=240) == 0
    for proc in writers:
        _out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err.decode()
    assert run_wb(repo, "note", "last").returncode == 0  # records an edit saved after the last agent write
    marks = marks_file.read_text().splitlines()
    assert len(marks) == 40
    final = state.read_text()
    recorded = "\n".join(str(e["payload"].get("body", "")) for e in _events(repo, "human.edit"))
    silently_lost = [m for m in marks if m not in final and m not in recorded]
    assert not silently_lost, f"{len(silently_lost)} of {len(marks)} hand edits overwritten silently"
    assert run_wb(repo, "validate").returncode == 0
    acknowledged = [f"agent-{w}-{i}" for w in range(3) for i in range(10)] + ["last"]
    assert sorted(committed_notes(repo)) == sorted(acknowledged)


def test_the_users_git_restoring_state_md_during_the_rename_is_not_taken_for_a_hand_save(repo: Path,
                                                                                          tmp_path: Path) -> None:
    """`git checkout -- .workbench/state.md` in the last moment before wb's rename puts back what HEAD holds:
    that is git, not a person's edit, and wb writes its state.md as before (nothing recorded as human.edit)."""
    _init(repo)
    assert run_wb(repo, "note", "before").returncode == 0
    proc, marker = paused(repo, tmp_path, "before_rename:state.md", "note", "in flight")
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text() + "\nscratch\n")  # so that the checkout below changes the file
    run_git(repo, "checkout", "--", ".workbench/state.md")
    done = go(proc, marker)
    assert done.returncode == 0 and "not yet committed" not in done.stderr, done.stderr
    assert "in flight" in state.read_text()
    assert not _events(repo, "human.edit")
    assert_sound(repo, acknowledged=["before", "in flight"])


@pytest.mark.parametrize("point", ["after_state_write", "after_look:state.md"])
def test_a_save_in_the_moment_around_wbs_rename_of_state_md_is_kept(repo: Path, tmp_path: Path, point: str) -> None:
    """The racing test's two losses, made deterministic. `after_state_write`: a save landing after wb's rename of
    state.md but before wb notes the file's stat in its cache; the cache then held the stat of the person's
    file beside the hash of wb's, the next load took the person's file for wb's own (fresh by stat) and the
    next write wrote wb's body over their edit. `after_look:state.md`: a save landing between wb's last look
    at the file and its rename was replaced by wb's file and gone (the rename now swaps the two files and puts
    the person's back)."""
    _init(repo)
    assert run_wb(repo, "note", "before").returncode == 0
    state = repo / ".workbench" / "state.md"
    proc, marker = paused(repo, tmp_path, point, "note", "in flight")
    _save(state, state.read_text() + "\nA line the person typed.\n")
    done = go(proc, marker)
    assert done.returncode == 0, done.stderr
    assert run_wb(repo, "note", "after").returncode == 0
    recorded = "\n".join(str(e["payload"].get("body", "")) for e in _events(repo, "human.edit"))
    assert "A line the person typed." in state.read_text() or "A line the person typed." in recorded, \
        "the hand edit was overwritten silently"
