"""Fixtures of the harness tests: a git repo with a fresh workbench, built once and copied per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .helpers import TEST_BACKEND, WbRepo, git


@pytest.fixture(scope="session")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("harness_template") / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# a project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial commit")
    WbRepo(path).wb_expect(0, "init")
    # the SQLite pass (WB_TEST_BACKEND=sqlite) runs every test here on a workbench kept in SQLite, not on files
    assert WbRepo(path).sqlite == (TEST_BACKEND == "sqlite"), (path / ".workbench" / "config.yaml").read_text()
    return path


@pytest.fixture
def wbrepo(_template: Path, tmp_path: Path) -> WbRepo:
    """A fresh copy of a repo holding one commit and an initialised workbench."""
    path = tmp_path / "repo"
    shutil.copytree(_template, path, symlinks=True)
    lock = path / ".workbench" / ".lock"
    if lock.exists():
        lock.unlink()
    return WbRepo(path)
