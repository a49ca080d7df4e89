"""Fixtures of the migration tests: the hand-written version-0 workbench (fixtures/v0/.workbench, the layout of
wb 0.0.x) copied into a fresh git repository, committed, as a user upgrading wb would have it."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.conftest import make_repo, run_git

FIXTURES = Path(__file__).parent / "fixtures"


def v0_repo_at(path: Path, fixture: str = "v0") -> Path:
    repo = make_repo(path)
    shutil.copytree(FIXTURES / fixture / ".workbench", repo / ".workbench")
    run_git(repo, "add", ".workbench")
    run_git(repo, "commit", "-q", "-m", "a workbench of wb 0.0.x")
    return repo


@pytest.fixture
def v0_repo(tmp_path: Path) -> Path:
    """A git repository (branch main) whose last commit holds the version-0 workbench of fixtures/v0."""
    return v0_repo_at(tmp_path / "repo")


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under `root`, .git included: "nothing was written" means all of it."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}
