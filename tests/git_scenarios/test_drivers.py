"""The diff and merge drivers survive the interpreter that registered them, and a fresh clone gets them.

Before: `wb init` registered `/path/to/venv/bin/python -m workbench.cli.main textconv …`; removing that venv
made `git diff` and `git log -p` fail on every workbench file.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import about_git, run_git, run_wb

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _git_env_without_wb() -> dict[str, str]:
    """PATH with no wb on it: the user's shell after the venv that held wb was deleted."""
    env = dict(os.environ)
    env["PATH"] = "/usr/bin:/bin"
    return env


def _two_tasks(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "task", "add", "one").returncode == 0
    assert run_wb(repo, "task", "add", "two").returncode == 0


def test_git_log_p_works_with_no_wb_anywhere(repo: Path) -> None:
    _two_tasks(repo)
    launcher = Path(run_git(repo, "rev-parse", "--git-common-dir").strip())
    launcher = (repo / launcher if not launcher.is_absolute() else launcher) / "wb" / "driver"
    text = launcher.read_text()
    launcher.write_text(text.replace(text.split("py=", 1)[1].split("\n", 1)[0], "/gone/venv/bin/python3"))
    proc = subprocess.run(["git", "log", "-p", "-1", "--", ".workbench/board.json"], cwd=repo,
                          capture_output=True, text=True, env=_git_env_without_wb())
    assert proc.returncode == 0, proc.stderr
    assert '"two"' in proc.stdout  # the raw file, since no wb can render it


def test_git_log_p_shows_wbs_view_through_the_registered_interpreter(repo: Path) -> None:
    _two_tasks(repo)
    out = run_git(repo, "log", "-p", "-1", "--", ".workbench/board.json")
    assert "+T-002 [todo]" in out  # wb's readable view


def test_doctor_finds_an_old_registration_and_fix_replaces_it(repo: Path) -> None:
    _two_tasks(repo)
    run_git(repo, "config", "--local", "diff.wb-board.textconv", "/gone/venv/bin/python3 -m workbench.cli.main "
                                                                  "textconv board")
    doctor = run_wb(repo, "doctor")
    assert doctor.returncode != 0
    assert "drivers" in doctor.stdout + doctor.stderr
    fixed = run_wb(repo, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert run_wb(repo, "doctor").returncode == 0
    assert "+T-002 [todo]" in run_git(repo, "log", "-p", "-1", "--", ".workbench/board.json")


def test_a_fresh_clone_gets_the_drivers_from_its_first_wb_command(repo: Path, tmp_path: Path) -> None:
    _two_tasks(repo)
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert run_git(clone, "config", "--get", "merge.wb-board.driver", check=False) == ""
    assert run_wb(clone, "status").returncode == 0
    assert "merge-driver board" in run_git(clone, "config", "--get", "merge.wb-board.driver")
    assert run_git(clone, "status", "--porcelain") == ""  # nothing tracked was touched
    assert "+T-002 [todo]" in run_git(clone, "log", "-p", "-1", "--", ".workbench/board.json")
