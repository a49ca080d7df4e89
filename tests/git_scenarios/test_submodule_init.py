"""`wb init` inside a submodule's directory never initialises the superproject (issue 29).

Before: in a clone whose submodule was not checked out yet (`git clone` without `--recurse-submodules`), `cd lib
&& wb init` walked up past the empty submodule directory and created and committed a workbench in the
superproject. A checked-out submodule is its own repository: wb init there makes the submodule's workbench.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import about_git, make_repo, one_error_line, run_git, spawn_wb


def _super_with_lib(tmp_path: Path) -> Path:
    lib = make_repo(tmp_path / "lib")
    top = make_repo(tmp_path / "super")
    run_git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    run_git(top, "commit", "-q", "-m", "add lib")
    return top


@about_git
def test_wb_init_in_a_checked_out_submodule_makes_the_submodules_workbench(tmp_path: Path) -> None:
    top = _super_with_lib(tmp_path)
    (top / "lib" / "src").mkdir()
    for where in (top / "lib", top / "lib" / "src"):  # its top, and a directory inside it
        proc = spawn_wb(where, "init")
        assert proc.returncode == 0, proc.stderr
    assert (top / "lib" / ".workbench" / "events.jsonl").exists()
    assert not (top / ".workbench").exists()
    assert ".workbench/board.json" in run_git(top / "lib", "show", "--stat", "--format=", "HEAD")
    assert run_git(top, "log", "--format=%s", "-1") == "add lib\n"  # the superproject got no commit


def test_wb_init_in_a_submodule_not_checked_out_refuses_and_touches_nothing(tmp_path: Path) -> None:
    """On either backend: a SQLite workbench's database would go into the superproject's git directory."""
    top = _super_with_lib(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "-c", "protocol.file.allow=always", "clone", "-q", str(top), str(clone)], check=True)
    assert not any((clone / "lib").iterdir())  # git leaves the submodule's directory empty
    head = run_git(clone, "rev-parse", "HEAD")
    proc = spawn_wb(clone / "lib", "init")
    assert proc.returncode != 0, proc.stdout
    line = one_error_line(proc.stderr)
    assert "submodule" in line and "submodule update --init lib" in line, line
    assert not (clone / ".workbench").exists(), "wb init made the superproject's workbench"
    assert run_git(clone, "rev-parse", "HEAD") == head
    assert run_git(clone, "status", "--porcelain") == ""
    # what the line says to do works: then wb init makes the submodule's own workbench
    subprocess.run(["git", "-c", "protocol.file.allow=always", "-C", str(clone), "submodule", "update", "--init",
                    "lib"], check=True, capture_output=True)
    run_git(clone / "lib", "checkout", "-q", "-b", "work")  # git leaves a submodule on a detached HEAD
    assert spawn_wb(clone / "lib", "init").returncode == 0
    assert (clone / "lib" / ".workbench" / "config.yaml").exists() and not (clone / ".workbench").exists()
