"""Hook, planner and tool commands come only from config.yaml or the command line: a `hooks:`, `tools:` or
`planner:` key smuggled into state.md or a board task is refused by the schema, and nothing runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import about_files, hash_workbench

from .helpers import PY, config_yaml, events, init_workbench, marker, one_line, plan, wb, wb_ok


def _refused_in_process(repo: Path, why: str) -> None:
    """Loading, and writing through the Python API, are refused with the schema's reason."""
    from workbench.api import Bench
    from workbench.errors import Refused
    from workbench.store.workbench import Workbench

    with pytest.raises(Refused, match=why):
        Workbench(repo).load()
    with pytest.raises(Refused, match=why):
        Bench(Workbench(repo)).note("x")


def _touch(path: Path) -> list[str]:
    return [PY, "-c", f"open({str(path)!r}, 'w').write('ran')"]


@about_files  # state.md edited by hand
@pytest.mark.parametrize("key", ["hooks", "tools", "planner", "redact"])
def test_state_md_cannot_declare_commands(repo: Path, key: str) -> None:
    owned = marker()
    init_workbench(repo, config_yaml(tools={"t": {"argv": [PY, "-c", "pass"], "mode": "safe_readonly"}}))
    value = {"hooks": {"before_step": [{"run": _touch(owned)}]}, "tools": {"t": {"argv": _touch(owned)}},
             "planner": {"run": _touch(owned)}, "redact": []}[key]
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("session: null", f"session: null\n{key}: {json.dumps(value)}"))
    before = hash_workbench(repo)
    name = plan(repo, [{"description": "d", "tool": "t"}])
    _refused_in_process(repo, f"unknown key '{key}'")
    if key in ("hooks", "tools"):  # the command line too (slower: two keys are enough)
        for args in (["status"], ["note", "x"], ["run", "goal", "--plan", name]):
            line = one_line(wb(repo, *args), 5)
            assert f"unknown key '{key}'" in line
    assert hash_workbench(repo) == before
    assert not owned.exists()


@about_files  # board.json edited by hand
@pytest.mark.parametrize("key", ["hooks", "tools", "run", "argv", "planner"])
def test_board_task_cannot_declare_commands(repo: Path, key: str) -> None:
    owned = marker()
    init_workbench(repo, config_yaml())
    wb_ok(repo, "task", "add", "a task")
    board_path = repo / ".workbench" / "board.json"
    board = json.loads(board_path.read_text())
    board["tasks"][0][key] = {"before_step": [{"run": _touch(owned)}]} if key == "hooks" else _touch(owned)
    board_path.write_text(json.dumps(board))
    before = hash_workbench(repo)
    _refused_in_process(repo, f"unknown key '{key}'")
    if key in ("hooks", "run"):
        for args in (["status"], ["task", "start", "T-001"], ["note", "x"]):
            line = one_line(wb(repo, *args), 5)
            assert f"unknown key '{key}'" in line
    assert hash_workbench(repo) == before
    assert not owned.exists()


@about_files  # a hand edit of state.md's live session (on SQLite only wb's verbs write the session)
def test_session_in_state_md_cannot_name_a_planner_command(repo: Path) -> None:
    """The live session records the planner's name for display; resume never runs it."""
    owned = marker()
    init_workbench(repo, config_yaml())
    name = plan(repo, [{"description": "needs a human", "tool": "deploy"}])
    wb_ok(repo, "run", "goal", "--plan", name, code=3)
    state = repo / ".workbench" / "state.md"
    text = state.read_text()
    assert "planner: " in text
    state.write_text(text.replace("planner: ", f"planner: {' '.join(_touch(owned))!r} #", 1))
    proc = wb(repo, "resume", "--result", '{"ok": true}')
    assert "Traceback" not in proc.stderr
    assert not owned.exists()


def test_tool_step_args_from_the_board_or_state_never_become_argv(repo: Path) -> None:
    """A plan names a declared tool and gives it arguments; the program and its argv shape come from
    config.yaml. An undeclared tool is yielded to the human, never run."""
    owned = marker()
    init_workbench(repo, config_yaml())
    name = plan(repo, [{"description": "d", "tool": "touch", "args": {"argv": _touch(owned)}}])
    wb_ok(repo, "run", "goal", "--plan", name, code=3)
    calls = [e for e in events(repo) if e["type"] == "tool.call"]
    assert calls[0]["payload"]["dispatch"] == "human"
    assert not owned.exists()


def test_commands_from_config_do_run(repo: Path) -> None:
    """The positive control: the same hook declared in config.yaml runs."""
    ran = repo / "hook-ran"
    init_workbench(repo, config_yaml(hooks={"before_step": [{"run": _touch(ran)}]}))
    name = plan(repo, [{"description": "d"}])
    wb_ok(repo, "run", "goal", "--plan", name)
    assert ran.exists()
