"""Branch switches and worktrees never run a tool twice (issue 11, item 5).

A session paused on `main` at a yield for a person is committed there; `git checkout -b other` carries the
same paused session to the new branch, where `wb resume` finishes it. Back on `main` the workbench still says
the session waits — and before, `wb resume` there ran every remaining step a second time. Now each call that
reaches the outside world is journaled in the repository's common git directory, which no checkout touches
and every worktree shares: a call already made anywhere is never made again, and a yield answered anywhere is
refused as stale everywhere else (exit 5), naming the branch and worktree where the session went on.

The tool appends a line to a file outside the repository: that file counts the runs.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from tests.conftest import WB_ARGV, about_git
from tests.git_scenarios.helpers import assert_sound
from tests.harness.helpers import WbRepo, _env, git, py_tool

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files

COUNT = "import sys; open(sys.argv[1], 'a').write(sys.argv[2] + '\\n')"
SLOW = ("import sys, time; open(sys.argv[1], 'a').write('start-' + sys.argv[2] + '\\n'); time.sleep(3); "
        "open(sys.argv[1], 'a').write(sys.argv[2] + '\\n')")


def _counting(repo: Path, tmp_path: Path, mode: str = "confirm_once", code: str = COUNT
              ) -> tuple[WbRepo, Path, str]:
    """A repo whose workbench declares `count` (appends its argument to runs.log outside the repo, as a deploy
    or an e-mail would reach outside) and a three-step plan using it, committed on main."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# a project\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "initial commit")
    bench = WbRepo(repo)
    bench.wb_expect(0, "init")
    runs = tmp_path / "runs.log"
    bench.configure(tools={"count": {"argv": py_tool(code, str(runs), "{what}"), "mode": mode}})
    steps = [{"id": s, "description": f"step {s}", "tool": "count", "args": {"what": s}} for s in "abc"]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": steps}))
    return bench, runs, str(plan)


def _runs(runs: Path) -> list[str]:
    return runs.read_text().splitlines() if runs.exists() else []


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, proc.stderr
    return line


def test_a_session_resumed_on_another_branch_is_not_run_again_on_main(tmp_path: Path) -> None:
    bench, runs, plan = _counting(tmp_path / "repo", tmp_path)
    paused = bench.wb_json(3, "run", "deploy", "--plan", plan)
    assert paused["kind"] == "approval", paused
    assert _runs(runs) == []
    git(bench.path, "checkout", "-q", "-b", "other")
    bench.wb_json(0, "resume", "--approve")  # the session goes on, and ends, on `other`
    assert _runs(runs) == ["a", "b", "c"]
    git(bench.path, "checkout", "-q", "main")
    assert bench.status()["pending"]["kind"] == "approval"  # main's files still say the session waits
    again = bench.wb_expect(5, "resume", "--approve")
    line = _one_line(again)
    assert "stale" in line and "branch other" in line, line
    assert _runs(runs) == ["a", "b", "c"], "a tool ran a second time"
    assert not bench.events("tool.call"), "main's log records no call: they were made on `other`"
    assert_sound(bench.path)
    git(bench.path, "checkout", "-q", "other")
    assert_sound(bench.path)


def test_a_tool_already_run_elsewhere_is_not_run_again_without_a_yield(tmp_path: Path) -> None:
    """No yield to refuse: a session with a budget pause after each call, answered on both branches. The pause
    answered on `other` is stale on main, and so the tools `other` ran are never run on main."""
    bench, runs, plan = _counting(tmp_path / "repo", tmp_path, mode="safe_readonly")
    paused = bench.wb_json(4, "run", "deploy", "--plan", plan, "--max-tool-calls", "1")
    assert paused["reason"] == "budget_exceeded:tool_calls", paused
    assert _runs(runs) == ["a"]
    git(bench.path, "checkout", "-q", "-b", "other")
    bench.wb_json(0, "resume", "--extend", "tool_calls=5")
    assert _runs(runs) == ["a", "b", "c"]
    git(bench.path, "checkout", "-q", "main")
    again = bench.wb_expect(5, "resume", "--extend", "tool_calls=5")
    assert "branch other" in _one_line(again)
    assert _runs(runs) == ["a", "b", "c"], "a tool ran a second time"
    assert_sound(bench.path)


def _worktree(repo: Path, name: str) -> Path:
    path = repo.parent / name
    git(repo, "worktree", "add", "-q", "-b", name, str(path))
    return path


def test_a_session_resumed_in_a_second_worktree_is_stale_in_the_first(tmp_path: Path) -> None:
    bench, runs, plan = _counting(tmp_path / "repo", tmp_path)
    bench.wb_json(3, "run", "deploy", "--plan", plan)
    wt2 = WbRepo(_worktree(bench.path, "wt2"))
    wt2.wb_json(0, "resume", "--approve")
    assert _runs(runs) == ["a", "b", "c"]
    again = bench.wb_expect(5, "resume", "--approve")
    line = _one_line(again)
    assert "stale" in line and "branch wt2" in line and str(wt2.path) in line, line
    assert _runs(runs) == ["a", "b", "c"], "a tool ran a second time"
    assert_sound(bench.path)
    assert_sound(wt2.path)


def test_two_worktrees_resuming_the_same_session_at_once_run_each_call_once(tmp_path: Path) -> None:
    bench, runs, plan = _counting(tmp_path / "repo", tmp_path)
    bench.wb_json(3, "run", "deploy", "--plan", plan)
    trees = [bench.path, *(_worktree(bench.path, f"wt{i}") for i in (2, 3))]
    procs = [subprocess.Popen([*WB_ARGV, "resume", "--approve"], cwd=tree, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tree in trees]
    codes = []
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, err
        codes.append(proc.returncode)
    assert sorted(_runs(runs)) == ["a", "b", "c"], f"a tool ran twice (exits {codes})"
    assert codes.count(0) == 1 and codes.count(5) == 2, codes
    for tree in trees:
        assert_sound(tree)


def test_a_kill_after_the_outcome_reached_the_shared_journal_is_not_in_doubt(tmp_path: Path) -> None:
    """Killed once the call's outcome is in the shared journal but before calls.jsonl has it: `wb resume` —
    here, or on a branch made from that moment — uses that outcome instead of asking, and runs nothing twice."""
    bench, runs, plan = _counting(tmp_path / "repo", tmp_path, mode="safe_readonly")
    killed = bench.wb("run", "deploy", "--plan", plan, fault="after_shared_result")
    assert killed.returncode == -9, killed.stderr
    assert _runs(runs) == ["a"]
    git(bench.path, "checkout", "-q", "-b", "other")
    done = bench.wb_json(0, "resume")
    assert done["reason"] == "goal_met", done
    assert _runs(runs) == ["a", "b", "c"], "a tool ran a second time"
    results = [e["payload"] for e in bench.events("tool.result")]
    assert [r["by"] for r in results] == ["journal", "wb", "wb"], results
    assert_sound(bench.path)


def test_a_call_running_in_one_worktree_is_in_doubt_in_another(tmp_path: Path) -> None:
    """A worktree made while main's session runs a tool carries that call as started: `wb resume` there does not
    make it again but asks, naming where it was started; main's session finishes, each call made once."""
    bench, runs, plan = _counting(tmp_path / "repo", tmp_path, mode="safe_readonly", code=SLOW)
    proc = subprocess.Popen([*WB_ARGV, "run", "deploy", "--plan", plan], cwd=bench.path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while "start-a" not in _runs(runs):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    wt2 = WbRepo(_worktree(bench.path, "wt2"))  # from main's last commit: the call to `count` is recorded there
    doubt = wt2.wb_json(3, "resume")
    assert doubt["kind"] == "in_doubt", doubt
    assert "branch main" in doubt["payload"]["started"] and str(bench.path) in doubt["payload"]["started"], doubt
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert [line for line in _runs(runs) if not line.startswith("start-")] == ["a", "b", "c"]
    assert_sound(bench.path)
