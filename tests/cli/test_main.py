"""The entry point: --version, usage errors (exit 2), missing workbench (exit 1), one-line errors."""

from __future__ import annotations

import re

import workbench


def test_version(tmp_path, wb):
    r = wb(tmp_path, "--version")
    assert r.returncode == 0
    assert r.stdout == f"wb {workbench.__version__}\n"
    assert re.fullmatch(r"wb \d+\.\d+\.\d+\S*\n", r.stdout)
    assert r.stderr == ""


def test_unknown_command_is_a_usage_error(repo, wb, error_line):
    r = wb(repo, "frobnicate")
    assert r.returncode == 2
    assert "frobnicate" in error_line(r.stderr)


def test_a_misspelt_command_is_suggested_once(repo, wb, error_line):
    r = wb(repo, "nope")
    assert r.returncode == 2
    line = error_line(r.stderr)
    assert "Did you mean 'note'?" in line and line.count("Did you mean") == 1, line


def test_unknown_option_and_missing_argument_are_usage_errors(bench, repo, wb, error_line):
    for args in (["log", "--bogus"], ["task", "add"], ["task", "frob"], ["task", "block", "T-001"]):
        r = wb(repo, *args)
        assert r.returncode == 2, args
        error_line(r.stderr)


def test_no_arguments_shows_help(repo, wb):
    r = wb(repo)
    assert r.returncode == 2
    assert "Usage" in r.stdout or "Usage" in r.stderr
    assert "Traceback" not in r.stderr


def test_help_lists_the_commands(tmp_path, wb):
    r = wb(tmp_path, "--help")
    assert r.returncode == 0
    for command in ("init", "status", "task", "note", "set", "log", "validate", "replay"):
        assert re.search(rf"^\W*{command}\b", r.stdout, re.M), command


def test_without_a_workbench_says_run_wb_init(repo, wb, error_line):
    for args in (["status"], ["status", "--json"], ["task", "list"], ["note", "hi"], ["validate"]):
        r = wb(repo, *args)
        assert r.returncode == 1, args
        assert "run `wb init`" in error_line(r.stderr)
    assert not (repo / ".workbench").exists()


def test_outside_a_repository(tmp_path, wb, error_line):
    r = wb(tmp_path, "status")
    assert r.returncode == 1
    assert "not inside a git repository" in error_line(r.stderr)


def test_dash_C_runs_elsewhere(bench, repo, tmp_path, wb):
    r = wb(tmp_path, "-C", str(repo), "task", "add", "from elsewhere")
    assert r.returncode == 0, r.stderr
    r = wb(tmp_path, "-C", str(repo), "status")
    assert r.returncode == 0
    r = wb(tmp_path, "-C", str(repo), "task", "list")
    assert "from elsewhere" in r.stdout


def test_output_has_no_colour_codes(bench, repo, wb):
    bench.add_task("plain output")
    for args in (["status"], ["task", "list"], ["log"]):
        r = wb(repo, *args)
        assert r.returncode == 0
        assert "\x1b[" not in r.stdout


def test_completion_for_a_named_shell_whatever_runs_wb(tmp_path, wb):
    for shell, marker in (("bash", "complete -o default -F _wb_completion wb"), ("zsh", "#compdef wb"),
                          ("fish", "complete --command wb")):
        r = wb(tmp_path, "--show-completion", shell)
        assert r.returncode == 0, r.stderr
        assert marker in r.stdout, (shell, r.stdout[:200])


def test_completion_without_a_shell_name_falls_back_to_shell_and_says_when_it_cannot(monkeypatch):
    import sys

    import pytest

    from workbench.cli import app
    from workbench.errors import UsageError

    monkeypatch.setitem(sys.modules, "shellingham", None)  # as where no parent process is a shell
    monkeypatch.delenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", raising=False)
    monkeypatch.setenv("SHELL", "/usr/bin/fish")
    assert app._completion_shell(["--show-completion"]) == ["--show-completion", "fish"]
    assert app._completion_shell(["--install-completion", "zsh"]) == ["--install-completion", "zsh"]
    assert app._completion_shell(["status"]) == ["status"]
    monkeypatch.setenv("SHELL", "/bin/tcsh")
    with pytest.raises(UsageError, match="name it, e.g. `wb --show-completion bash`"):
        app._completion_shell(["--show-completion"])
