"""Values of the environment variables named in config.yaml `redact` never reach events, the call journal,
state.md, board.json, artifacts or commits — whichever way they come in: tool output (small or large), tool
arguments, the goal, step descriptions, hook and planner error messages, results and errors supplied with
`wb resume`, notes, task titles and state fields."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from tests import stored

from .helpers import PY, config_yaml, init_workbench, plan, run_git, wb, wb_ok

LEAK = ("import os, sys; t = os.environ['DEPLOY_TOKEN']; print('token:', t); print(sys.argv[1:]); "
        "sys.stderr.write('err ' + t)")
BIG_LEAK = "import os; print((os.environ['DEPLOY_TOKEN'] + ' ') * 3000)"
BLOCKER = ("import json, os, sys; p = json.load(sys.stdin); "
           "sys.exit(0) if p.get('tool') != 'blocked' else (sys.stderr.write('no: ' + os.environ['DEPLOY_TOKEN']), "
           "sys.exit(2))")
FAILING_PLANNER = "import os, sys; sys.stderr.write('model said ' + os.environ['DEPLOY_TOKEN']); sys.exit(1)"


def _everything_recorded(repo: Path) -> dict[str, str]:
    out = stored.recorded_text(repo)
    out["git log -p"] = run_git(repo, "log", "-p", "--all", "--format=%H%n%B", "--no-textconv")
    out["git log textconv"] = run_git(repo, "log", "-p", "--all")
    return out


def test_secret_never_recorded(repo: Path) -> None:
    secret = "tok-" + uuid.uuid4().hex
    env = {"DEPLOY_TOKEN": secret, "CI": "1"}
    init_workbench(repo, config_yaml(
        tools={"leak": {"argv": [PY, "-c", LEAK, "{x}"], "mode": "safe_readonly"},
               "big": {"argv": [PY, "-c", BIG_LEAK], "mode": "safe_readonly"},
               "blocked": {"argv": [PY, "-c", "pass"], "mode": "safe_readonly"}},
        hooks={"before_tool_call": [{"run": [PY, "-c", BLOCKER], "timeout": 10}]},
        redact=["DEPLOY_TOKEN", "UNSET_VARIABLE"]))
    name = plan(repo, [
        {"description": f"leak via args and output {secret}", "tool": "leak", "args": {"x": f"--token={secret}"}},
        {"description": "leak a lot", "tool": "big"},
        {"description": "blocked by a hook whose reason quotes it", "tool": "blocked"},
        {"description": "a human deploys", "tool": "deploy", "args": {"token": secret}},
        {"description": "a human fails", "tool": "deploy"},
    ])
    wb_ok(repo, "run", f"ship with {secret}", "--plan", name, code=3, env=env)
    wb_ok(repo, "resume", "--result", json.dumps({"log": f"deployed using {secret}", secret: 1}), code=3, env=env)
    wb_ok(repo, "resume", "--error", f"failed: {secret} rejected", env=env)
    wb_ok(repo, "note", f"remember {secret}", env=env)
    wb_ok(repo, "task", "add", f"rotate {secret}", "--accept", f"test {secret} = x", env=env)
    wb_ok(repo, "set", f"next_action=use {secret}", env=env)
    (repo / "planner.py").write_text(FAILING_PLANNER)
    proc = wb(repo, "run", "plan it", "--planner", f"{PY} planner.py", env=env)
    assert proc.returncode == 4, proc.stderr  # a failing planner pauses the session
    wb_ok(repo, "abort", "--reason", f"stop {secret}", env=env)

    recorded = _everything_recorded(repo)
    leaks = [where for where, text in recorded.items() if secret in text]
    assert not leaks, f"the secret reached {leaks}"
    assert "[redacted]" in recorded[".workbench/events.jsonl"]
    assert "[redacted]" in recorded[".workbench/calls.jsonl"]
    assert any("[redacted]" in text for where, text in recorded.items() if "/artifacts/" in where)
    wb_ok(repo, "validate", env=env)
    wb_ok(repo, "replay", "--verify", env=env)


def test_tool_still_gets_the_secret_from_its_environment(repo: Path) -> None:
    """Redaction is of what is recorded, not of what runs: the tool sees the real value."""
    secret = "tok-" + uuid.uuid4().hex
    seen = repo / "seen.txt"
    init_workbench(repo, config_yaml(
        tools={"t": {"argv": [PY, "-c", f"import os; open({str(seen)!r}, 'w').write(os.environ['DEPLOY_TOKEN'])"],
                     "mode": "safe_readonly"}}, redact=["DEPLOY_TOKEN"]))
    wb_ok(repo, "run", "g", "--plan", plan(repo, [{"description": "d", "tool": "t"}]), env={"DEPLOY_TOKEN": secret})
    assert seen.read_text() == secret


def test_redact_function() -> None:
    from workbench.model.redaction import redact, secret_values

    nested = {"a": ["x SECRET y", {"SECRET": "SECRETSECRET"}], "n": 5, "b": None}
    assert redact(nested, ["SECRET"]) == {"a": ["x [redacted] y", {"[redacted]": "[redacted][redacted]"}],
                                          "n": 5, "b": None}
    assert redact(nested, []) is nested  # no secrets: no copy, no cost
    import os

    os.environ["WB_TEST_SECRET_A"] = "abc"
    os.environ["WB_TEST_SECRET_B"] = "abcdef"
    try:
        assert secret_values({"redact": ["WB_TEST_SECRET_A", "WB_TEST_SECRET_B", "NOT_SET"]}) == ["abcdef", "abc"]
        assert redact("abcdef abc", secret_values({"redact": ["WB_TEST_SECRET_A", "WB_TEST_SECRET_B"]})) \
            == "[redacted] [redacted]"
    finally:
        del os.environ["WB_TEST_SECRET_A"], os.environ["WB_TEST_SECRET_B"]
