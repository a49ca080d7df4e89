"""Crash consistency of the write path (CONTRACT.md §3): a real `wb` process is SIGKILLed at each named fault
point of the transaction (WB_FAULT, see workbench/faults.py), then the workbench must load, validate and
replay; every acknowledged mutation is still there; the killed one is wholly there or wholly absent; and the
next mutation commits everything, leaving the user's own staged and unstaged changes exactly as they were.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import stored
from workbench.api import replay
from workbench.model import statefile
from workbench.store.workbench import Workbench

from .wbhelpers import (
    ACKED_NOTE,
    ACKED_TASKS,
    assert_ids_unique,
    assert_init_left_user_alone,
    assert_log_sound,
    board,
    commit_count,
    event_lines,
    git,
    head,
    make_repo,
    paths_changed_since,
    state_md,
    status_outside,
    status_workbench,
    wb,
    wb_ok,
    wb_parallel,
)

INFLIGHT_NOTE = "inflight note"
AFTER_TITLE = "after the crash"


# -- the fault points, in the order a transaction reaches them -------------------------------------------------
@dataclass(frozen=True)
class Point:
    label: str  # test id
    name: str  # WB_FAULT
    skip: int  # WB_FAULT_SKIP: hits to let pass (the .cache copy of board.json is the second rename of that name)
    board_only: bool  # reached only by a mutation that rewrites board.json


POINTS = [
    Point("after_state_stat", "after_state_stat", 0, False),  # in the load, before anything is written
    Point("before_event_append", "before_event_append", 0, False),
    Point("after_event_append", "after_event_append", 0, False),
    Point("before_rename:board.json", "before_rename:board.json", 0, True),
    Point("after_board_write", "after_board_write", 0, True),
    Point("before_rename:state.md", "before_rename:state.md", 0, False),
    Point("after_state_write", "after_state_write", 0, False),
    Point("before_rename:.cache/board.json", "before_rename:board.json", 1, True),
    Point("before_rename:.cache/state.json", "before_rename:state.json", 0, False),
    Point("before_git_listing", "before_git_listing", 0, False),
    Point("after_git_objects", "after_git_objects", 0, False),
    Point("before_git_ref", "before_git_ref", 0, False),
    Point("after_git_ref", "after_git_ref", 0, False),
    Point("index_locked", "index_locked", 0, False),  # committed; wb holds git's index.lock (git/indexfile.py)
    Point("before_index_rename", "before_index_rename", 0, False),  # the new index written, not yet renamed in
    Point("after_index_swap", "after_index_swap", 0, False),  # the new index in place, the old one at index.lock
    Point("after_git_commit", "after_git_commit", 0, False),
    Point("settle_dropped_last", "settle_dropped_last", 0, False),  # the committed batch before dropped, this one
    # not yet moved out of the pending journal (store/pending.py)
]
STAGE = {p.label: i for i, p in enumerate(POINTS)}


def reached(label: str, after: str) -> bool:
    """Whether a kill at `label` happens after the step that ends at fault point `after` has completed."""
    return STAGE[label] >= STAGE[after]


def test_every_write_path_fault_point_is_covered() -> None:
    """A fault point added to the transaction or the git recording later must join POINTS (and so the matrix)."""
    import workbench.git.indexfile
    import workbench.git.repo
    import workbench.git.sharedrefs
    import workbench.store.pending
    import workbench.store.snapshots
    import workbench.store.stages
    import workbench.store.workbench

    named = set()
    stages = [p for p in Path(workbench.store.stages.__file__).parent.glob("*.py") if not p.name.startswith("sqlite")]
    for path in [Path(m.__file__) for m in (workbench.store.workbench, workbench.store.snapshots, workbench.git.repo,
                                            workbench.git.sharedrefs, workbench.git.indexfile,
                                            workbench.store.pending)] + stages:
        named |= set(re.findall(r'faults\.point\("([^"]+)"\)', path.read_text()))
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    from faultrun import SCENARIO_POINTS  # a remote's push: killed by tests/sync (test_faultrun checks that)

    named -= set(SCENARIO_POINTS)
    assert named <= {p.name for p in POINTS}, f"fault points without a crash test: {named - {p.name for p in POINTS}}"


# -- the mutations killed in flight ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutation:
    argv: tuple[str, ...]
    event_type: str
    board: bool  # rewrites board.json

    def landed(self, view: dict[str, Any]) -> dict[str, Any]:
        """What `observe()` shows once this mutation is wholly there, from what it showed before."""
        v = copy.deepcopy(view)
        if self.event_type == "task.add":
            v["tasks"].append(["T-003", "inflight task", "todo"])
        elif self.event_type == "task.done":
            v["tasks"][0][2] = "done"
            v["active_task_id"] = None
            v["tasks_completed"] += 1
        elif self.event_type == "task.set":
            v["tasks"][1][1] = "renamed in flight"
        elif self.event_type == "note.add":
            v["notes"][INFLIGHT_NOTE] += 1
        elif self.event_type == "state.set":
            v["next_action"] = "inflight next action"
        return v


MUTATIONS = {
    "task-add": Mutation(("task", "add", "inflight task"), "task.add", True),
    "task-done": Mutation(("task", "done", "T-001"), "task.done", True),  # runs its acceptance command first
    "task-set": Mutation(("task", "set", "T-002", "title=renamed in flight"), "task.set", True),
    "note": Mutation(("note", INFLIGHT_NOTE), "note.add", False),
    "set": Mutation(("set", "next_action=inflight next action"), "state.set", False),
}

# the part of the matrix that runs by default; the rest is marked slow (CI runs both)
FAST_FOR_OTHER_COMMANDS = {"after_event_append", "after_board_write", "after_state_write", "after_git_ref"}


def _matrix() -> list[Any]:
    cases = []
    for command, mutation in MUTATIONS.items():
        for point in POINTS:
            if point.board_only and not mutation.board:
                continue  # a state-only mutation never reaches this point
            fast = command == "task-add" or point.label in FAST_FOR_OTHER_COMMANDS
            marks = () if fast else (pytest.mark.slow,)
            cases.append(pytest.param(command, point, id=f"{command}@{point.label}", marks=marks))
    return cases


def observe(board_doc: dict[str, Any], state: dict[str, Any], body: str) -> dict[str, Any]:
    """The facts the crash tests compare: the board in order, and the state fields the mutations touch."""
    return {
        "tasks": [[t["id"], t["title"], t["status"]] for t in board_doc["tasks"]],
        "active_task_id": state["active_task_id"],
        "next_action": state["next_action"],
        "tasks_completed": state["counters"]["tasks_completed"],
        "notes": {ACKED_NOTE: body.count(ACKED_NOTE), INFLIGHT_NOTE: body.count(INFLIGHT_NOTE)},
    }


def loaded_view(repo: Path) -> dict[str, Any]:
    """What wb itself loads (snapshots + the events after them), read in-process without writing."""
    loaded = Workbench(repo).load(detect_human=True)
    assert loaded.human_edits == [], f"a crash was taken for a hand edit: {loaded.human_edits}"
    return observe(loaded.docs.board, loaded.docs.state, loaded.docs.body)


def disk_view(repo: Path) -> dict[str, Any]:
    """What the snapshot files on disk say, with no replay."""
    parsed = statefile.parse(stored.snapshots(repo)[0])
    return observe(board(repo), parsed.data, parsed.body)


def snapshot_last_events(repo: Path) -> tuple[int, int]:
    """(state.md last_event, board.json last_event) as written on disk."""
    text = stored.state_text(repo)
    match = re.search(r"^last_event: (\d+)$", text, re.M)
    assert match, "state.md has no last_event"
    return int(match.group(1)), board(repo)["last_event"]


def assert_acked_present(view: dict[str, Any]) -> None:
    titles = {tid: title for tid, title, _status in view["tasks"]}
    assert titles.get("T-001") == ACKED_TASKS["T-001"]
    assert titles.get("T-002") in (ACKED_TASKS["T-002"], "renamed in flight")
    assert view["notes"][ACKED_NOTE] == 1


def assert_recovers(repo: Path, *, user_status: list[str], head0: str, expected: dict[str, Any],
                    events_before: int) -> list[dict[str, Any]]:
    """The next normal mutation succeeds, commits everything, and the workbench is whole and clean."""
    follow = wb_ok(repo, "task", "add", AFTER_TITLE)
    new_id = f"T-{len(expected['tasks']) + 1:03d}"
    assert follow.stdout.startswith(f"{new_id} added"), follow.stdout
    assert follow.stderr == "", f"the recovery mutation warned: {follow.stderr}"
    expected = copy.deepcopy(expected)
    expected["tasks"].append([new_id, AFTER_TITLE, "todo"])

    validate, verify = wb_parallel(repo, ["validate"], ["replay", "--verify"])
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert verify.returncode == 0, verify.stderr + verify.stdout

    events = assert_log_sound(repo)
    assert len(events) == events_before + 1
    assert events[-1]["type"] == "task.add" and events[-1]["payload"]["task"]["title"] == AFTER_TITLE
    assert not [e for e in events if e["type"] == "human.edit"], "recovery recorded a spurious human.edit"

    assert disk_view(repo) == expected
    assert_ids_unique(board(repo)["tasks"])

    # git: everything under .workbench/ committed, nothing else touched
    assert status_workbench(repo) == ""
    assert status_outside(repo) == user_status
    changed = paths_changed_since(repo, head0)
    assert changed and all(p.startswith(".workbench/") for p in changed), changed
    message = git(repo, "log", "-1", "--format=%B")
    assert AFTER_TITLE in message and f"Wb-Event: {events[-1]['seq']}" in message, message
    return events


@pytest.mark.parametrize(("command", "point"), _matrix())
def test_kill_at_fault_point(acked_repo: Path, command: str, point: Point) -> None:
    repo = acked_repo
    mutation = MUTATIONS[command]
    user_status = status_outside(repo)
    assert any(line.startswith("A  staged.txt") for line in user_status)  # the user's work is in play
    events0 = assert_log_sound(repo)
    n0 = len(events0)
    head0 = head(repo)
    commits0 = commit_count(repo)
    state_le0, board_le0 = snapshot_last_events(repo)
    before = loaded_view(repo)
    assert_acked_present(before)

    killed = wb(repo, *mutation.argv, WB_FAULT=point.name, WB_FAULT_SKIP=str(point.skip))
    assert killed.returncode == -9, f"not killed at {point.label}: exit {killed.returncode} {killed.stderr}"

    # -- where the kill happened: the durable steps before it are on disk, none after it ----------------------
    events, torn = event_lines(repo)
    assert torn == b"", "a kill between system calls must not tear the log"
    landed = reached(point.label, "after_event_append")
    assert len(events) == n0 + landed
    if landed:
        assert events[-1]["type"] == mutation.event_type
    board_written = mutation.board and reached(point.label, "after_board_write")
    state_written = reached(point.label, "after_state_write")
    assert snapshot_last_events(repo) == (n0 + 1 if state_written else state_le0,
                                          n0 + 1 if board_written else board_le0)
    committed = reached(point.label, "after_git_ref")
    assert (head(repo) != head0) == committed
    if committed:
        assert git(repo, "rev-parse", "HEAD^").strip() == head0
    assert commit_count(repo) == commits0 + committed
    assert status_outside(repo) == user_status

    # -- the workbench loads as it is: validate, status, replay; the in-flight mutation is all or nothing ------
    validate, status = wb_parallel(repo, ["validate"], ["status", "--json"])
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["unrecorded_human_edits"] == []
    assert data["last_event"]["seq"] == n0 + landed
    expected = mutation.landed(before) if landed else before
    assert data["board"]["total"] == len(expected["tasks"])
    view = loaded_view(repo)
    assert view == expected
    assert_acked_present(view)
    report = replay(Workbench(repo))
    assert report.mismatches == [], report.mismatches
    assert assert_log_sound(repo) == events

    # -- the next mutation commits it all ------------------------------------------------------------------
    assert_recovers(repo, user_status=user_status, head0=head0, expected=expected, events_before=n0 + landed)
    assert commit_count(repo) == commits0 + committed + 1


# -- two crashes in a row: the recovery itself is killed -------------------------------------------------------
@pytest.mark.parametrize(("first", "second"), [
    ("after_event_append", "after_board_write"),
    pytest.param("after_board_write", "before_rename:state.md", marks=pytest.mark.slow),
    pytest.param("after_state_write", "before_git_ref", marks=pytest.mark.slow),
    pytest.param("after_git_ref", "after_event_append", marks=pytest.mark.slow),
])
def test_recovery_killed_too(acked_repo: Path, first: str, second: str) -> None:
    repo = acked_repo
    user_status = status_outside(repo)
    n0 = len(assert_log_sound(repo))
    head0 = head(repo)
    before = loaded_view(repo)

    assert wb(repo, "task", "add", "inflight task", WB_FAULT=first).returncode == -9
    second_kill = wb(repo, "note", INFLIGHT_NOTE, WB_FAULT=second)
    assert second_kill.returncode == -9, second_kill.stderr

    expected = MUTATIONS["task-add"].landed(before)  # both kills come after the first event's append
    note_landed = reached(second, "after_event_append")
    if note_landed:
        expected = MUTATIONS["note"].landed(expected)
    validate = wb(repo, "validate")
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert loaded_view(repo) == expected
    assert_recovers(repo, user_status=user_status, head0=head0, expected=expected,
                    events_before=n0 + 1 + note_landed)


# -- a log write cut short (what a power cut can leave; SIGKILL between system calls cannot) --------------------
@pytest.mark.parametrize("damage", ["torn-line", "cut-short-batch"])
def test_torn_log_tail_is_ignored_then_repaired(acked_repo: Path, damage: str) -> None:
    """CONTRACT §2: a torn last line is ignored on read. `wb validate` reports it (exit 5, naming
    `wb doctor --fix`) rather than passing silently; everything else loads, and the next write drops it."""
    repo = acked_repo
    user_status = status_outside(repo)
    events = assert_log_sound(repo)
    head0 = head(repo)
    before = loaded_view(repo)
    last = events[-1]
    prev = hashlib.sha256((repo / ".workbench/events.jsonl").read_bytes().splitlines()[-1]).hexdigest()
    ghost = {"schema_version": 1, "seq": last["seq"] + 1, "id": "zz-ghost", "ts": last["ts"], "type": "note.add",
             "actor": "agent", "session": None, "payload": {"text": "ghost note never acknowledged"},
             "prev": prev}
    if damage == "cut-short-batch":
        ghost["more"] = 1  # the first line of a two-event batch whose second line never made it
        tail = json.dumps(ghost, separators=(",", ":")).encode() + b"\n"
    else:
        tail = json.dumps(ghost, separators=(",", ":")).encode()[:57]
    with open(repo / ".workbench/events.jsonl", "ab") as fh:
        fh.write(tail)

    validate = wb(repo, "validate")
    assert validate.returncode == 5
    assert "torn" in validate.stderr and "doctor" in validate.stderr, validate.stderr
    assert len(validate.stderr.strip().splitlines()) == 1, validate.stderr  # the only problem
    status = wb_ok(repo, "status", "--json")
    assert json.loads(status.stdout)["last_event"]["seq"] == last["seq"]
    assert loaded_view(repo) == before
    assert replay(Workbench(repo)).mismatches == []

    assert_recovers(repo, user_status=user_status, head0=head0, expected=before, events_before=len(events))
    assert "ghost" not in (repo / ".workbench/events.jsonl").read_text()
    assert "ghost" not in (repo / ".workbench/state.md").read_text()


# -- wb init killed halfway: running it again finishes it --------------------------------------------------------
INIT_POINTS = [
    "before_rename:.gitignore",
    "before_rename:config.yaml",
    "before_rename:calls.jsonl",  # before the init event is appended
    "before_rename:board.json",  # the init event is in the log, no snapshot yet
    "before_rename:state.md",
    "before_rename:state.json",  # state.md written, its .cache copy not
    "before_rename:.gitattributes",  # the workbench written, the git drivers not yet registered
    "after_git_objects",
    "before_git_ref",
    "after_git_ref",  # committed, the index not yet synced
]


FAST_INIT_POINTS = {"before_rename:calls.jsonl", "before_rename:board.json", "before_rename:.gitattributes",
                    "after_git_ref"}


@pytest.mark.parametrize("point", [
    pytest.param(p, marks=() if p in FAST_INIT_POINTS else (pytest.mark.slow,)) for p in INIT_POINTS
])
def test_init_killed_then_rerun(tmp_path: Path, point: str) -> None:
    repo = make_repo(tmp_path / "repo")
    user_status = status_outside(repo)
    head0 = head(repo)
    killed = wb(repo, "init", WB_FAULT=point)
    assert killed.returncode == -9, f"not killed at {point}: exit {killed.returncode} {killed.stderr}"
    # what may be left outside .workbench/ for a moment: init's .gitattributes, or its temp file mid-write
    assert all(line.endswith(".gitattributes") for line in set(status_outside(repo)) - set(user_status))

    wb_ok(repo, "init")
    validate, verify = wb_parallel(repo, ["validate"], ["replay", "--verify"])
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert verify.returncode == 0, verify.stderr + verify.stdout
    events = assert_log_sound(repo)
    assert [e["type"] for e in events] == ["workbench.init"]
    assert status_workbench(repo) == "", "wb init left .workbench/ uncommitted or the index out of step"
    assert_init_left_user_alone(user_status, status_outside(repo))
    user_status = status_outside(repo)
    assert all(p.startswith(".workbench/") for p in paths_changed_since(repo, head0))

    added = wb_ok(repo, "task", "add", "first after init")
    assert added.stdout.startswith("T-001 added")
    assert status_workbench(repo) == ""
    assert status_outside(repo) == user_status


# -- a hand edit pending when the mutation that records it is killed ---------------------------------------------
HAND_ACTION = "edited by hand"
HAND_TITLE = "retitled by hand"


def _edit_by_hand(repo: Path, file: str) -> None:
    if file == "state.md":
        state = repo / ".workbench" / "state.md"
        text, count = re.subn(r"^next_action: .*$", f"next_action: {HAND_ACTION}  # my own comment",
                              state.read_text(), flags=re.M)
        assert count == 1
        state.write_text(text)
    else:
        doc = board(repo)
        doc["tasks"][1]["title"] = HAND_TITLE
        (repo / ".workbench" / "board.json").write_text(json.dumps(doc, indent=1) + "\n")


HAND_EDIT_POINTS = [
    "before_event_append",  # nothing written: the edit is still unrecorded
    "after_event_append",  # human.edit + task.add in the log, neither snapshot rewritten
    "after_board_write",
    "after_state_write",  # snapshots written, the .cache/ not
    "after_git_ref",
]


@pytest.mark.parametrize(("point", "file"), [
    pytest.param(p, f, marks=() if p == "after_event_append" or (f == "state.md" and p == "after_board_write")
                 else (pytest.mark.slow,))
    for f in ("state.md", "board.json") for p in HAND_EDIT_POINTS
])
def test_kill_while_recording_a_hand_edit(acked_repo: Path, point: str, file: str) -> None:
    """The transaction that records a human's edit (as a human.edit event) is killed: afterwards the edit is
    recorded exactly once — never lost, never recorded twice — and a comment in state.md survives."""
    repo = acked_repo
    config = repo / ".workbench" / "config.yaml"
    config.write_text(re.sub(r"^human_guard_seconds: \d+", "human_guard_seconds: 0", config.read_text(), flags=re.M))
    # a hand edit of config.yaml is committed on its own before the write that finds it (issue 31): recorded by
    # a write of its own here, so that the killed write below is the one that records the edit of `file`
    wb_ok(repo, "set", "blockers=[]")
    _edit_by_hand(repo, file)
    user_status = status_outside(repo)
    head0 = head(repo)
    n0 = len(assert_log_sound(repo))
    status = wb_ok(repo, "status", "--json")
    assert json.loads(status.stdout)["unrecorded_human_edits"] == [file]

    killed = wb(repo, "task", "add", "inflight task", WB_FAULT=point)
    assert killed.returncode == -9, killed.stderr

    events = assert_log_sound(repo)
    recorded = [e for e in events if e["type"] == "human.edit"]
    detected = Workbench(repo).load(detect_human=True).human_edits
    assert len(recorded) + len(detected) == 1, f"the edit is recorded {len(recorded)}x and pending {len(detected)}x"
    status = wb_ok(repo, "status", "--json")
    assert json.loads(status.stdout)["unrecorded_human_edits"] == [e["file"] for e in detected]
    validate = wb(repo, "validate")
    assert validate.returncode == 0, validate.stderr + validate.stdout

    follow = wb_ok(repo, "task", "add", AFTER_TITLE)
    assert follow.stderr == "", follow.stderr
    validate, verify = wb_parallel(repo, ["validate"], ["replay", "--verify"])
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert verify.returncode == 0, verify.stderr + verify.stdout
    events = assert_log_sound(repo)
    edits = [e for e in events if e["type"] == "human.edit"]
    assert len(edits) == 1, f"the hand edit was recorded {len(edits)} times"
    assert edits[0]["actor"] == "human" and edits[0]["payload"]["file"] == file
    inflight = [e for e in events if e["type"] == "task.add" and e["payload"]["task"]["title"] == "inflight task"]
    assert len(inflight) == (0 if point == "before_event_append" else 1)
    configs = [e for e in events if e["type"] == "config.edit"]  # human_guard_seconds set by hand, above
    assert len(configs) == 1, f"the config.yaml edit was recorded {len(configs)} times"
    assert len(events) == n0 + 2 + len(inflight)
    tasks = board(repo)["tasks"]
    assert_ids_unique(tasks)
    if file == "state.md":
        assert edits[0]["payload"]["changes"] == {"next_action": HAND_ACTION}
        assert f"next_action: {HAND_ACTION}  # my own comment" in state_md(repo)
    else:
        assert [t["id"] for t in edits[0]["payload"]["upsert"]] == ["T-002"]
        assert tasks[1]["id"] == "T-002" and tasks[1]["title"] == HAND_TITLE
    assert status_workbench(repo) == ""
    assert status_outside(repo) == user_status
    assert all(p.startswith(".workbench/") for p in paths_changed_since(repo, head0))


# -- the SQLite backend (issue 24, store/sqlitedb.py): one database transaction per mutation ---------------------
# a kill before its COMMIT leaves the database as it was (SQLite rolls the open transaction back on the next
# open), a kill after it leaves the mutation wholly there; what was acknowledged before is there either way
SQLITE_POINTS = [
    Point("sqlite:before_event_append", "before_event_append", 0, False),  # validated, nothing inserted
    Point("sqlite_before_commit", "sqlite_before_commit", 0, False),  # events and snapshots inserted, no COMMIT
    Point("sqlite_after_commit", "sqlite_after_commit", 0, False),  # committed: acknowledged but for the exit
]


def test_every_sqlite_fault_point_is_covered() -> None:
    import workbench.store.sqlitedb
    import workbench.store.stages

    named = set()
    stages = list(Path(workbench.store.stages.__file__).parent.glob("sqlite_*.py"))
    for path in [Path(workbench.store.sqlitedb.__file__), *stages]:
        named |= set(re.findall(r'faults\.point\("([^"]+)"\)', path.read_text()))
    assert named == {p.name for p in SQLITE_POINTS}


@pytest.mark.parametrize("point", SQLITE_POINTS, ids=[p.label for p in SQLITE_POINTS])
def test_sqlite_kill_at_fault_point(tmp_path: Path, point: Point) -> None:
    work = tmp_path / "scratch"  # no git repository: `wb init --no-git --backend sqlite`
    work.mkdir()
    wb_ok(work, "init", "--no-git", "--backend", "sqlite")
    for title in ACKED_TASKS.values():
        wb_ok(work, "task", "add", title)
    wb_ok(work, "note", ACKED_NOTE)
    n0 = json.loads(wb_ok(work, "status", "--json").stdout)["last_event"]["seq"]

    killed = wb(work, "task", "add", INFLIGHT_NOTE, WB_FAULT=point.name)
    assert killed.returncode == -9, f"not killed at {point.label}: exit {killed.returncode} {killed.stderr}"

    landed = point.name == "sqlite_after_commit"
    validate = wb(work, "validate")
    assert validate.returncode == 0, validate.stderr + validate.stdout
    data = json.loads(wb_ok(work, "status", "--json").stdout)
    assert data["last_event"]["seq"] == n0 + landed
    tasks = json.loads(wb_ok(work, "task", "list", "--json").stdout)
    titles = [t["title"] for t in (tasks["tasks"] if isinstance(tasks, dict) else tasks)]
    assert titles == [*ACKED_TASKS.values(), *([INFLIGHT_NOTE] if landed else [])]
    assert wb(work, "replay", "--verify").returncode == 0
    # and the next mutation goes on from there, its seq right after what is in the database
    wb_ok(work, "task", "add", AFTER_TITLE)
    assert json.loads(wb_ok(work, "status", "--json").stdout)["last_event"]["seq"] == n0 + landed + 1
