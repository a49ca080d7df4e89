"""Fixtures of the fuzz tests: a workbench with a few acknowledged mutations, built once and copied per test.

Hypothesis runs many examples inside one test function, so each test gets one copy (`sandbox`) and resets it
between examples (`Sandbox.reset`) instead of building a git repository per example.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import make_repo

from .helpers import IDENTITY, Sandbox


@pytest.fixture(scope="session")
def fuzz_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from workbench.api import Bench, init

    with pytest.MonkeyPatch.context() as mp:  # session fixtures are built before the autouse isolated_env
        for key, value in IDENTITY.items():
            mp.setenv(key, value)
        repo = make_repo(tmp_path_factory.mktemp("fuzz_template") / "repo")
        init(repo)
        config = repo / ".workbench" / "config.yaml"
        # no human-edit guard: a valid fuzzed edit is recorded by the next write instead of making it wait
        text = config.read_text(encoding="utf-8").replace("human_guard_seconds: 5", "human_guard_seconds: 0")
        config.write_text(text, encoding="utf-8")
        bench = Bench.open(repo)
        bench.add_task("Parse the config", acceptance=["true"])
        bench.add_task("Write the docs")
        bench.note("Chose a hand-written parser.")
        bench.start_task("T-001")
        bench.set_state({"next_action": "finish T-001", "blockers": ["none yet"]})
    return repo


@pytest.fixture
def sandbox(fuzz_template: Path, tmp_path: Path) -> Sandbox:
    repo = tmp_path / "repo"
    shutil.copytree(fuzz_template, repo, symlinks=True)
    return Sandbox(repo)
