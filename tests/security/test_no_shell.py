"""Commands never go through a shell: a step argument, a goal, a hook payload or a planner command line that
holds `; touch /tmp/owned`, `$(id)` or backticks stays literal text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import PY, argv_recorder, config_yaml, events, init_workbench, marker, one_line, plan, wb, wb_ok

HOSTILE = ["; touch {m}", "$(touch {m})", "`touch {m}`", "&& touch {m}", "| touch {m}", "\ntouch {m}\n",
           "$(id)", "${{IFS}}touch${{IFS}}{m}", "'; touch {m}; '", "> {m}"]


def test_step_arguments_stay_one_literal_argument_each(repo: Path) -> None:
    out = repo / "argv.json"
    owned = marker()
    values = [h.format(m=owned) for h in HOSTILE]
    argv = [*argv_recorder(out), *[f"{{a{i}}}" for i in range(len(values))], "prefix-{a0}-suffix"]
    init_workbench(repo, config_yaml(tools={"rec": {"argv": argv, "mode": "safe_readonly"}}))
    name = plan(repo, [{"description": "hostile args", "tool": "rec",
                        "args": {f"a{i}": v for i, v in enumerate(values)}}])
    wb_ok(repo, "run", "inject", "--plan", name)
    received = json.loads(out.read_text())
    assert received == [*values, f"prefix-{values[0]}-suffix"]  # each one argument, byte for byte
    assert not owned.exists()


def test_a_value_is_not_expanded_again(repo: Path) -> None:
    """`{b}` inside the value of `a` is text, not a second placeholder."""
    from workbench.harness.tools import fill

    assert fill(("{a}", "x{b}"), {"a": "{b} $(id)", "b": "; ls"}) == ["{b} $(id)", "x; ls"]


def test_goal_and_descriptions_are_not_run(repo: Path) -> None:
    owned = marker()
    init_workbench(repo, config_yaml())
    name = plan(repo, [{"description": f"$(touch {owned})"}, {"description": f"`touch {owned}`"}])
    wb_ok(repo, "run", f"; touch {owned}", "--plan", name)
    wb_ok(repo, "note", f"$(touch {owned})")
    wb_ok(repo, "task", "add", f"`touch {owned}`")
    assert not owned.exists()


def test_hook_payload_with_shell_syntax_is_data(repo: Path) -> None:
    owned = marker()
    seen = repo / "payload.json"
    hook = [PY, "-c", f"import sys; open({str(seen)!r}, 'a').write(sys.stdin.read() + '\\n')"]
    init_workbench(repo, config_yaml(
        tools={"rec": {"argv": [PY, "-c", "pass", "{x}"], "mode": "safe_readonly"}},
        hooks={"before_tool_call": [{"run": hook, "timeout": 10}]}))
    name = plan(repo, [{"description": "d", "tool": "rec", "args": {"x": f"$(touch {owned}); touch {owned}"}}])
    wb_ok(repo, "run", "goal", "--plan", name)
    payload = json.loads(seen.read_text().splitlines()[0])
    assert payload["args"] == {"x": f"$(touch {owned}); touch {owned}"}
    assert not owned.exists()


@pytest.mark.parametrize("suffix", ["; touch {m}", " && touch {m}", " $(touch {m})"])
def test_planner_command_line_is_split_not_shelled(repo: Path, suffix: str) -> None:
    """`--planner CMD` is split like a shell would split words (shlex), and run without one."""
    owned = marker()
    init_workbench(repo, config_yaml())
    (repo / "planner.py").write_text("import json; print(json.dumps({'steps': []}))")
    proc = wb(repo, "run", "goal", "--planner", f"{PY} planner.py" + suffix.format(m=owned))
    assert proc.returncode in (0, 4), proc.stderr  # extra words are the planner's own arguments
    assert "Traceback" not in proc.stderr
    assert not owned.exists()


def test_tool_argv_from_config_is_not_a_shell_line(repo: Path) -> None:
    """A config argv of one string with spaces is one program name, not a command line."""
    owned = marker()
    init_workbench(repo, config_yaml(tools={"one": {"argv": [f"touch {owned}"], "mode": "safe_readonly",
                                                              "on_error": "continue"}}))
    name = plan(repo, [{"description": "d", "tool": "one"}])
    wb_ok(repo, "run", "goal", "--plan", name)
    errors = [e for e in events(repo) if e["type"] == "tool.error"]
    assert errors and "could not start" in errors[0]["payload"]["error"]
    assert not owned.exists()


def test_unknown_placeholder_is_an_error_not_an_expansion(repo: Path) -> None:
    init_workbench(repo, config_yaml(tools={"t": {"argv": [PY, "-c", "pass", "{missing}"], "mode": "safe_readonly",
                                                            "on_error": "continue"}}))
    name = plan(repo, [{"description": "d", "tool": "t", "args": {"x": 1}}])
    wb_ok(repo, "run", "goal", "--plan", name)
    errors = [e for e in events(repo) if e["type"] == "tool.error"]
    assert errors and "missing argument 'missing'" in errors[0]["payload"]["error"]


def test_refusal_is_one_line(repo: Path) -> None:
    init_workbench(repo, config_yaml())
    (repo / "plan.json").write_text('{"steps": [{"description": "d", "tool": "a b; rm -rf /"}]}')
    one_line(wb(repo, "run", "goal", "--plan", "plan.json"), 5)  # a tool name is a plain name
