"""The fault-injection driver (tools/faultrun.py), CI-sized, and the holes it found kept closed.

The long run (1,000+ kills) is one command in docs/reliability.md; here a few seeded schedules of real `wb`
processes are SIGKILLed at named fault points and at random moments, and must show 0 violations.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .wbhelpers import assert_log_sound, make_repo, status_outside, status_workbench, wb, wb_ok

ROOT = Path(__file__).resolve().parents[2]
FAULTRUN = ROOT / "tools" / "faultrun.py"
SUMMARY = re.compile(r"^faultrun: schedules=(\d+) kills=(\d+) violations=(\d+) repairs=(\d+) seconds=(\d+)$", re.M)

sys.path.insert(0, str(ROOT / "tools"))
import faultrun  # noqa: E402


def run_faultrun(*args: str, timeout: float) -> tuple[subprocess.CompletedProcess[str], dict[str, int]]:
    proc = subprocess.run([sys.executable, str(FAULTRUN), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    match = SUMMARY.search(proc.stdout)
    assert match, f"no summary line (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    names = ("schedules", "kills", "violations", "repairs", "seconds")
    return proc, dict(zip(names, map(int, match.groups()), strict=True))


def test_every_named_fault_point_is_driven() -> None:
    """A fault point added to workbench/ later must join faultrun's lists (and so the schedules)."""
    missing = faultrun.named_points() - faultrun.COVERED
    assert not missing, f"fault points faultrun never kills at: {sorted(missing)}"
    for point, test_file in faultrun.SCENARIO_POINTS.items():  # killed there by a scenario test instead
        assert f'"{point}"' in (ROOT / test_file).read_text(), f"{test_file} does not kill at {point}"


def test_faultrun_ci_sized(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc, figures = run_faultrun("--schedules", "4", "--seed", "11", "--quick", "--jobs", "2",
                                 "--workdir", str(tmp_path), "--report", str(report), timeout=300)
    assert figures["violations"] == 0, proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert figures["schedules"] == 4
    assert figures["kills"] >= 4, "the schedules killed (almost) nothing"
    data = json.loads(report.read_text())
    assert data["kills"] == figures["kills"] and data["violation_lines"] == []
    assert proc.stdout.strip().splitlines()[-1].startswith("faultrun: schedules=4 ")


@pytest.mark.slow
def test_faultrun_longer(tmp_path: Path) -> None:
    proc, figures = run_faultrun("--schedules", "24", "--seed", "12", "--jobs", "2", "--workdir", str(tmp_path),
                                 timeout=1800)
    assert figures["violations"] == 0, proc.stdout
    assert figures["kills"] >= 60


def test_a_violation_names_its_seed_and_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The driver's own check: a schedule that sees a violation prints it with the seed that replays it, and
    the run exits 1 (here the model is made to expect a task that was never acknowledged)."""
    original = faultrun.Op.landed

    def wrong(self: faultrun.Op, view: faultrun.View) -> faultrun.View:
        v = original(self, view)
        if self.kind == "task_add":
            v["tasks"].append(["T-999", "never acknowledged", "todo"])
        return v

    monkeypatch.setattr(faultrun.Op, "landed", wrong)
    code = faultrun.main(["--only-seed", "13000000", "--quick", "--workdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "VIOLATION seed=13000000 schedule=0 " in out and "--only-seed 13000000" in out
    assert re.search(r"^faultrun: schedules=1 kills=\d+ violations=[1-9]\d* ", out, re.M), out


# -- the holes faultrun found, each kept closed by a deterministic test -------------------------------------------
def test_doctor_fix_after_a_kill_past_the_ref(tmp_path: Path) -> None:
    """Killed after the branch moved but before git's index was synced: `wb doctor` reports .workbench/ as
    uncommitted, and `--fix` (which syncs the index; there is nothing left to commit) says fixed, exits 0."""
    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    user = status_outside(repo)
    killed = wb(repo, "task", "add", "killed past the ref", WB_FAULT="after_git_ref")
    assert killed.returncode == -9
    assert status_workbench(repo) != ""
    listed = wb(repo, "doctor", "--json")  # healthy: the next write commits it (issue 29); listed all the same
    assert listed.returncode == 0 and [(f["code"], f["waits"]) for f in json.loads(listed.stdout)["findings"]] \
        == [("uncommitted", True)], listed.stdout
    fix = wb(repo, "doctor", "--fix", "--json")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    findings = json.loads(fix.stdout)["findings"]
    assert [f["code"] for f in findings] == ["uncommitted"] and findings[0]["fixed"], findings
    assert status_workbench(repo) == ""
    assert status_outside(repo) == user
    assert wb(repo, "doctor").returncode == 0


PLAN = {"steps": [{"description": "think one"}, {"description": "think two"}]}


def test_resume_after_a_pause_cut_short(tmp_path: Path) -> None:
    """Killed between a budget pause's transition to IDLE and the session.pause event that records its yield:
    `wb resume --extend` used to answer "paused" for ever, writing and committing nothing. Now it records the
    pause it finds cut short and continues it."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    reference = make_repo(tmp_path / "reference")
    wb_ok(reference, "init")
    n0 = len(assert_log_sound(reference))
    paused = wb(reference, "run", "goal", "--plan", str(plan), "--max-turns", "1")
    assert paused.returncode == 4, paused.stderr
    events = assert_log_sound(reference)[n0:]
    # each harness event is one transaction: one hit of after_event_append each
    skip = next(i for i, e in enumerate(events)
                if e["type"] == "harness.transition" and e["payload"]["to"] == "IDLE")
    assert events[skip + 1]["type"] == "session.pause"

    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    killed = wb(repo, "run", "goal", "--plan", str(plan), "--max-turns", "1",
                WB_FAULT="after_event_append", WB_FAULT_SKIP=str(skip))
    assert killed.returncode == -9
    last = assert_log_sound(repo)[-1]
    assert last["type"] == "harness.transition" and last["payload"]["to"] == "IDLE"
    status = json.loads(wb_ok(repo, "status", "--json").stdout)
    assert status["session"]["harness_state"] == "IDLE" and status["pending"] is None

    resumed = wb(repo, "resume", "--extend", "turns=5")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.stdout.startswith("DONE (goal_met)")
    types = [e["type"] for e in assert_log_sound(repo)]
    assert types.count("session.pause") == 1 and types[-1] == "session.complete"
    assert wb(repo, "replay", "--verify").returncode == 0
    assert status_workbench(repo) == ""


def _declare_bump(repo: Path) -> None:
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("tools: {}\n", faultrun.tools_yaml()))
    wb_ok(repo, "doctor", "--fix")  # commits the hand-edited config.yaml


@pytest.mark.parametrize("order", ["tool-then-think", "think-then-tool"])
def test_resume_after_a_tool_step_ended_but_not_left(tmp_path: Path, order: str) -> None:
    """Killed after a tool step's step.end (which moves step_index on) and before the move out of AWAITING_TOOL:
    `wb resume` used to treat the *next* step as the awaited tool call (a bogus `tool_result_required:None` for
    a step with no tool, a tool run without its step.start, or an IndexError after the last step). Now it
    finishes the cut-short move to REFLECTING and goes on with the next step."""
    counter = tmp_path / "counter"
    bump = {"description": "bump", "tool": "bump", "args": {"file": str(counter), "tag": "once"}}
    think = {"description": "think"}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [bump, think] if order == "tool-then-think" else [think, bump]}))

    reference = make_repo(tmp_path / "reference")
    wb_ok(reference, "init")
    _declare_bump(reference)
    n0 = len(assert_log_sound(reference))
    assert wb(reference, "run", "goal", "--plan", str(plan)).returncode == 0
    events = assert_log_sound(reference)[n0:]
    tool_index = 0 if order == "tool-then-think" else 1
    skip = next(i for i, e in enumerate(events)
                if e["type"] == "step.end" and e["payload"]["index"] == tool_index)
    counter.unlink()

    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    _declare_bump(repo)
    killed = wb(repo, "run", "goal", "--plan", str(plan), WB_FAULT="after_event_append", WB_FAULT_SKIP=str(skip))
    assert killed.returncode == -9
    last = assert_log_sound(repo)[-1]
    assert last["type"] == "step.end" and last["payload"]["index"] == tool_index
    status = json.loads(wb_ok(repo, "status", "--json").stdout)
    assert status["session"]["harness_state"] == "AWAITING_TOOL"

    resumed = wb(repo, "resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.stdout.startswith("DONE (goal_met): 2 of 2 steps done"), resumed.stdout
    events = assert_log_sound(repo)
    calls = [e for e in events if e["type"] == "tool.call"]
    assert [c["payload"]["tool"] for c in calls] == ["bump"], "a step without a tool got a tool call"
    assert counter.read_text().split() == ["once"], "the tool ran again"
    assert wb(repo, "replay", "--verify").returncode == 0
    assert status_workbench(repo) == ""


def test_resume_after_a_completion_cut_short(tmp_path: Path) -> None:
    """Killed between the move to DONE and session.complete: the session stayed live in state DONE, `wb run`
    refused (a live session) and `wb resume` died on an internal AssertionError. Now resume completes it."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    reference = make_repo(tmp_path / "reference")
    wb_ok(reference, "init")
    n0 = len(assert_log_sound(reference))
    assert wb(reference, "run", "goal", "--plan", str(plan)).returncode == 0
    events = assert_log_sound(reference)[n0:]
    skip = next(i for i, e in enumerate(events)
                if e["type"] == "harness.transition" and e["payload"]["to"] == "DONE")
    assert events[skip + 1]["type"] == "session.complete"

    repo = make_repo(tmp_path / "repo")
    wb_ok(repo, "init")
    killed = wb(repo, "run", "goal", "--plan", str(plan), WB_FAULT="after_event_append", WB_FAULT_SKIP=str(skip))
    assert killed.returncode == -9
    status = json.loads(wb_ok(repo, "status", "--json").stdout)
    assert status["session"]["harness_state"] == "DONE"

    resumed = wb(repo, "resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.stdout.startswith("DONE (goal_met): 2 of 2 steps done"), resumed.stdout
    types = [e["type"] for e in assert_log_sound(repo)]
    assert types[-1] == "session.complete" and types.count("session.complete") == 1
    assert json.loads(wb_ok(repo, "status", "--json").stdout)["session"] is None
    assert wb(repo, "replay", "--verify").returncode == 0
    assert status_workbench(repo) == ""
    assert wb(repo, "run", "again", "--plan", str(plan)).returncode == 0  # a new session may start
