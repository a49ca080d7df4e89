"""Fixtures of the reliability tests: a repo with a workbench and a few acknowledged mutations, built once
and copied for each test (a copy of a git repo is a complete, independent repo)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .wbhelpers import ACKED_NOTE, ACKED_TASKS, assert_init_left_user_alone, make_repo, status_outside, wb_ok


@pytest.fixture(scope="session")
def acked_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("template") / "repo")
    user_status = status_outside(repo)
    wb_ok(repo, "init")
    assert_init_left_user_alone(user_status, status_outside(repo))
    user_status = status_outside(repo)
    wb_ok(repo, "task", "add", ACKED_TASKS["T-001"], "--accept", "true")
    wb_ok(repo, "task", "add", ACKED_TASKS["T-002"])
    wb_ok(repo, "note", ACKED_NOTE)
    wb_ok(repo, "task", "start", "T-001")
    assert status_outside(repo) == user_status
    return repo


@pytest.fixture
def acked_repo(acked_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the template: init, T-001 (in progress, acceptance `true`), T-002, one note."""
    repo = tmp_path / "repo"
    shutil.copytree(acked_template, repo, symlinks=True)
    return repo
