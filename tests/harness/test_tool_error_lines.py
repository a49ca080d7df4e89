"""Issue 19: a failed tool's summary shows the lines of its output that carry the error — pytest's
`unrecognized arguments`, a traceback's last line, a `FAILED` line — not whatever line came last (pytest's
`rootdir:` line)."""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.harness.tools import ToolBox, ToolSpec, error_lines, failure


def _run(repo: Path, *argv: str) -> tuple[dict, str]:
    box = ToolBox({}, repo, repo / ".workbench" / "artifacts")
    result = box.run(ToolSpec("t", (sys.executable, *argv)), {}, key="t:1")
    err = failure("t", result)
    assert err is not None, result
    return result, str(err)


def test_pytest_unrecognized_arguments_is_the_summary(repo: Path) -> None:
    (repo / ".workbench").mkdir(exist_ok=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    result, message = _run(repo, "-m", "pytest", "--no-such-flag", "-p", "no:cacheprovider")
    assert "rootdir" in result["stderr_tail"].splitlines()[-1] or "inifile" in result["stderr_tail"]
    assert "unrecognized arguments: --no-such-flag" in message, message
    assert "rootdir" not in message


def test_a_traceback_shows_its_last_line(repo: Path) -> None:
    (repo / ".workbench").mkdir(exist_ok=True)
    code = "import sys\ndef f():\n    raise ValueError('the real cause')\nf()\n"
    _result, message = _run(repo, "-c", code)
    assert "ValueError: the real cause" in message, message


def test_error_lines_prefers_stderr_and_falls_back_to_stdout() -> None:
    assert error_lines("ok\nerror: bad thing\nrootdir: /x\n") == ["error: bad thing"]
    assert error_lines("", "collected 3\nFAILED t.py::a - assert 1 == 2\n== 1 failed ==\n") == [
        "FAILED t.py::a - assert 1 == 2", "== 1 failed =="]
    assert error_lines("just noise\n") == []
