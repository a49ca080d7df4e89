"""The tests' in-process runner (`call_wb`, tests/conftest.py) answers as a real `wb` process does, and leaves
the test's process as it found it: most CLI tests rely on it instead of starting Python for every command."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests import stored
from tests.conftest import call_wb, make_repo, run_git, spawn_wb

COMMANDS = [
    ["--version"],
    ["--help"],
    ["frobnicate"],
    ["task", "add"],
    ["status"],
    ["status", "--json"],
    ["task", "list"],
    ["log", "--json"],
    ["validate"],
    ["task", "show", "T-404"],
    ["--show-completion", "bash"],
]


def test_in_process_and_a_real_process_agree(bench, repo: Path) -> None:
    bench.add_task("Parse the config", acceptance=["true"])
    bench.note("Chose a hand-written parser.")
    for args in COMMANDS:
        inside, outside = call_wb(repo, *args), spawn_wb(repo, *args)
        assert (inside.returncode, inside.stdout, inside.stderr) == \
            (outside.returncode, outside.stdout, outside.stderr), args


def test_stdin_is_the_input_given_and_never_a_terminal(bench, repo: Path) -> None:
    assert call_wb(repo, "note", "-", input="from stdin\n").returncode == 0
    shown = call_wb(repo, "log", "--json").stdout
    assert "from stdin" in shown
    assert '"actor": "agent"' in shown  # no TTY on stdin: an agent, as through a pipe


def test_the_process_is_left_as_it_was_found(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", raising=False)
    env, cwd, path, streams = dict(os.environ), os.getcwd(), list(sys.path), (sys.stdin, sys.stdout, sys.stderr)
    assert call_wb(tmp_path, "--show-completion", "bash").returncode == 0  # sets an environment variable
    assert call_wb(repo, "init").returncode == 0
    assert call_wb(repo, "status", env={**os.environ, "WB_DEBUG": "1"}).returncode == 0
    assert dict(os.environ) == env and os.getcwd() == cwd and sys.path == path
    assert (sys.stdin, sys.stdout, sys.stderr) == streams


def test_a_hook_module_of_one_repository_never_answers_for_another(tmp_path: Path) -> None:
    """What a run imported from the repository (a Python hook) is forgotten afterwards, as it is when a
    process ends: the next repository's hook of the same name is its own."""
    for name in ("one", "two"):
        repo = make_repo(tmp_path / name)
        assert call_wb(repo, "init").returncode == 0
        (repo / "wb_probe_hook.py").write_text(
            "import pathlib\n\n"
            "def on_step(payload):\n"
            f"    pathlib.Path('hook-ran.txt').write_text({name!r})\n")
        stored.write_config(repo / ".workbench" / "config.yaml", 'schema_version: 1\ntools: {}\n'
                            'hooks: {"before_step": [{"python": "wb_probe_hook:on_step"}]}\n')
        (repo / "plan.json").write_text(json.dumps({"steps": [{"description": "think it over"}]}))
        run_git(repo, "add", ".workbench/config.yaml")
        run_git(repo, "commit", "-q", "-m", "a python hook")
        proc = call_wb(repo, "run", "a goal", "--plan", "plan.json", env={**os.environ, "CI": "1"})
        assert "Traceback" not in proc.stderr, proc.stderr
        assert (repo / "hook-ran.txt").read_text() == name
        assert "wb_probe_hook" not in sys.modules
