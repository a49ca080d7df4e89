"""config.yaml, plan files and planner outputs fuzzed.

config.yaml: loaded in-process, then the workbench is written to (a clean success or one exit-5 refusal,
files unchanged). Plan files and planner outputs: `steps_from_plan`, `load_plan_file` and `CommandPlanner`
in-process (steps, a Refused, or for a planner a PlannerError that the loop turns into a pause — never
another exception), then a few real `wb run --plan` / `wb run --planner` runs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from .helpers import FEW, FUZZ, Sandbox, assert_cli_clean, cli, exercise, json_values, refused_or_ok, yaml_fragments

CONFIG_KEYS = ["schema_version", "git", "lock_timeout", "human_guard_seconds", "acceptance_timeout", "budget",
               "tools", "hooks", "redact", "planner", "extra"]
STEP_KEYS = ["id", "tool", "args", "mode", "extra"]


@st.composite
def config_variants(draw: st.DrawFn, base: bytes) -> bytes:
    lines = base.decode("utf-8").split("\n")
    keyed = [i for i, line in enumerate(lines) if re.match(r"^\w+:", line)]
    kind = draw(st.sampled_from(["value", "value", "key", "json", "text", "binary", "bytes"]))
    if kind == "value":
        i = draw(st.sampled_from(keyed))
        lines[i] = lines[i].split(":", 1)[0] + ": " + draw(yaml_fragments)
    elif kind == "key":
        lines.append(f"{draw(st.sampled_from(CONFIG_KEYS))}: {draw(yaml_fragments)}")
    elif kind == "json":  # JSON is YAML: a whole config of random structure
        doc = draw(st.fixed_dictionaries({"schema_version": st.sampled_from([1, 1, 2, "1", None])},
                                         optional={k: json_values for k in CONFIG_KEYS[1:]}))
        return json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")
    elif kind == "text":
        return draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")
    elif kind == "binary":
        return draw(st.binary(max_size=200))
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if kind == "bytes":
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(min_size=1, max_size=6)) + data[pos + 1:]
    return data


@FUZZ
@given(data=st.data())
def test_fuzzed_config_yaml_is_refused_or_read(sandbox: Sandbox, data: st.DataObject) -> None:
    from workbench.harness import bound
    from workbench.store.config import load_config
    from workbench.store.workbench import Workbench

    sandbox.reset()
    sandbox.write("config.yaml", data.draw(config_variants(sandbox.original("config.yaml"))))
    _config, refusal = refused_or_ok(lambda: load_config(sandbox.path("config.yaml")))
    if refusal is None:  # a valid config also builds the loop's hooks and tools (nothing runs)
        refused_or_ok(lambda: bound.build_loop(Workbench(sandbox.root)))
    exercise(sandbox.root)


@FEW
@given(data=st.data())
def test_fuzzed_config_yaml_through_the_cli(sandbox: Sandbox, data: st.DataObject) -> None:
    sandbox.reset()
    sandbox.write("config.yaml", data.draw(config_variants(sandbox.original("config.yaml"))))
    (sandbox.root / "plan.json").write_text(json.dumps({"steps": [{"description": "think"}]}))
    before = sandbox.hashes()
    for args in (["task", "add", "fuzzed"], ["run", "a goal", "--plan", "plan.json"]):
        proc = cli(sandbox.root, *args)
        assert_cli_clean(proc)
        if proc.returncode == 5:
            assert sandbox.hashes() == before


# -- plan files --------------------------------------------------------------------------------------------

steps = st.lists(st.one_of(json_values, st.fixed_dictionaries(
    {"description": st.one_of(st.text(max_size=20), json_values)},
    optional={k: st.one_of(json_values, st.sampled_from(["s1", "..", "../x", "/etc", "pytest", "safe_readonly"]))
              for k in STEP_KEYS})), max_size=5)
plans = st.one_of(json_values, steps, st.fixed_dictionaries(
    {"steps": steps}, optional={"schema_version": json_values, "goal": json_values, "tools": json_values}))


@FUZZ
@given(plan=plans)
def test_fuzzed_plan_data_is_refused_or_read(plan: Any) -> None:
    from workbench.harness.loop import Step
    from workbench.harness.planners import steps_from_plan

    result, _refusal = refused_or_ok(lambda: steps_from_plan(plan, "plan.json"))
    if result is not None:
        assert all(isinstance(s, Step) and isinstance(s.tool_args, dict) for s in result)


@FUZZ
@given(data=st.data())
def test_fuzzed_plan_files_are_refused_or_read(tmp_path_factory: Any, data: st.DataObject) -> None:
    from workbench.harness.planners import load_plan_file

    folder = tmp_path_factory.mktemp("plans")
    suffix = data.draw(st.sampled_from([".json", ".yaml", ".yml", ""]))
    kind = data.draw(st.sampled_from(["json", "yaml", "fragment", "binary"]))
    if kind == "json":
        raw = json.dumps(data.draw(plans), allow_nan=True).encode("utf-8", "surrogatepass")
    elif kind == "yaml":
        raw = ("steps:\n  - description: " + data.draw(yaml_fragments) + "\n    args: "
               + data.draw(yaml_fragments) + "\n").encode("utf-8", "surrogatepass")
    elif kind == "fragment":
        raw = data.draw(yaml_fragments).encode("utf-8", "surrogatepass")
    else:
        raw = data.draw(st.binary(max_size=200))
    path = folder / ("plan" + suffix)
    path.write_bytes(raw)
    refused_or_ok(lambda: load_plan_file(path))
    assert not Path("/tmp/wb_fuzz_owned").exists()


@FEW
@given(data=st.data())
def test_fuzzed_plan_files_through_the_cli(sandbox: Sandbox, data: st.DataObject) -> None:
    sandbox.reset()
    raw = json.dumps(data.draw(plans), allow_nan=True).encode("utf-8", "surrogatepass")
    (sandbox.root / "plan.json").write_bytes(raw)
    before = sandbox.hashes()
    proc = cli(sandbox.root, "run", "a goal", "--plan", "plan.json")
    assert_cli_clean(proc, ok=(0, 3, 4))
    if proc.returncode == 5:
        assert sandbox.hashes() == before
    else:
        assert_cli_clean(cli(sandbox.root, "validate"))


# -- planner outputs ---------------------------------------------------------------------------------------

PRINTER = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"


@st.composite
def planner_outputs(draw: st.DrawFn, most_steps: int = 1500) -> bytes:
    kind = draw(st.sampled_from(["plan", "plan", "json", "text", "binary", "huge", "decision"]))
    if kind == "plan":
        return json.dumps(draw(plans), allow_nan=True).encode("utf-8", "surrogatepass")
    if kind == "json":
        return json.dumps(draw(json_values), allow_nan=True).encode("utf-8", "surrogatepass")
    if kind == "text":
        return draw(st.text(max_size=100)).encode("utf-8", "surrogatepass")
    if kind == "binary":
        return draw(st.binary(max_size=200))
    if kind == "huge":
        return json.dumps({"steps": [{"description": "x" * 1000}] * draw(st.integers(0, most_steps))}).encode()
    return json.dumps({"decision": draw(json_values)}).encode()


@FUZZ
@given(output=planner_outputs())
def test_fuzzed_planner_output_is_steps_or_a_planner_error(tmp_path_factory: Any, output: bytes) -> None:
    from workbench.harness.loop import HarnessLoop, PlannerError, Step
    from workbench.harness.planners import CommandPlanner

    folder = tmp_path_factory.mktemp("planner")
    (folder / "out").write_bytes(output)
    planner = CommandPlanner([sys.executable, "-c", PRINTER, str(folder / "out")], folder,
                             lambda: {"state": {}, "board": []})
    try:
        result = planner("a goal", [])
        assert all(isinstance(s, Step) for s in result)
    except PlannerError as err:
        assert str(err) and "\n" not in str(err)
    try:
        planner.reflect("a goal", [], {})
    except PlannerError:
        pass
    outcome = HarnessLoop(planner=planner).run("a goal")  # in memory: ends or yields, never raises
    assert outcome.reason


@FEW
@given(output=planner_outputs(most_steps=5))
def test_fuzzed_planner_output_through_the_cli(sandbox: Sandbox, output: bytes) -> None:
    sandbox.reset()
    (sandbox.root / "planner.out").write_bytes(output)
    (sandbox.root / "planner.py").write_text(PRINTER.replace("sys.argv[1]", "'planner.out'"))
    proc = cli(sandbox.root, "run", "a goal", "--planner", f"{sys.executable} planner.py")
    assert_cli_clean(proc, ok=(0, 3, 4))  # 4: a planner that answers garbage pauses the session
    assert_cli_clean(cli(sandbox.root, "validate"))


def test_deep_plan_args_are_refused_or_read_back(sandbox: Sandbox) -> None:
    """Args deep enough to make state.md unreadable are refused with the plan; args within the bound are
    written to state.md (the live session) and read back from it."""
    import shutil

    def nested(depth: int) -> dict[str, Any]:
        value: dict[str, Any] = {"leaf": "x"}
        for _ in range(depth):
            value = {"k": value}
        return value

    sandbox.reset()
    (sandbox.root / "deep.json").write_text(json.dumps({"steps": [{"description": "d", "tool": "human",
                                                                   "args": nested(200)}]}))
    before = sandbox.hashes()
    assert_cli_clean(cli(sandbox.root, "run", "goal", "--plan", "deep.json"))
    assert sandbox.hashes() == before
    (sandbox.root / "ok.json").write_text(json.dumps({"steps": [{"description": "d", "tool": "human",
                                                                 "args": nested(40)}]}))
    proc = cli(sandbox.root, "run", "goal", "--plan", "ok.json")
    assert proc.returncode == 3, proc.stderr  # waits for the human's result, args kept in state.md
    shutil.rmtree(sandbox.cache_dir)  # as a fresh clone: state.md must be parsed
    exercise(sandbox.root)
    assert_cli_clean(cli(sandbox.root, "status"))
