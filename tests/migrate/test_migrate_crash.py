"""A `wb migrate` killed (SIGKILL) at each step of its write path is finished by the next `wb migrate`.

Each run is a real process stopped by WB_FAULT (workbench/faults.py) at a named point. Until the re-run, the
workbench refuses other commands with a message that says to run `wb migrate` (or, once the events are
logged, simply works); after it, validate and replay pass, the log holds exactly one migration.apply, and
exactly one commit was made.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import head_count, run_git, run_wb, spawn_wb

from .conftest import v0_repo_at

# in the order the migration reaches them; `status_exit`: what `wb status` does on the workbench left behind
POINTS = [
    ("migrate:after_intent", 5),
    ("before_rename:state.md", 5),  # inside the atomic write of state.md: a temp file is left behind
    ("migrate:after_state", 5),
    ("migrate:after_board", 5),
    ("migrate:after_event", 0),  # everything durable but the commit: the workbench loads
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return v0_repo_at(tmp_path_factory.mktemp("v0") / "repo")


def killed_migrate(repo: Path, point: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WB_FAULT": point}
    return spawn_wb(repo, "migrate", env=env)


@pytest.mark.parametrize("point, status_exit", POINTS, ids=[p for p, _ in POINTS])
def test_a_killed_migration_is_finished_by_the_next_one(template, tmp_path, point, status_exit):
    repo = tmp_path / "repo"
    subprocess.run(["cp", "-a", str(template), str(repo)], check=True)
    count = head_count(repo)

    r = killed_migrate(repo, point)
    assert r.returncode == -9, (r.returncode, r.stderr)
    assert (repo / ".workbench" / ".migrate.json").exists()
    assert head_count(repo) == count

    status = run_wb(repo, "status")
    assert status.returncode == status_exit, status.stderr
    if status_exit:
        assert "run `wb migrate`" in status.stderr
    pending = run_wb(repo, "migrate", "--dry-run")
    assert pending.returncode == 0
    assert pending.stdout.startswith("dry run: `wb migrate` would make these changes (nothing was written) to "
                                     "finish an interrupted migration\n")

    again = run_wb(repo, "migrate")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("finished an interrupted migration\n")
    assert "\ncommitted " in again.stdout
    assert not (repo / ".workbench" / ".migrate.json").exists()
    for args in (("validate",), ("replay", "--verify")):
        check = run_wb(repo, *args)
        assert check.returncode == 0, (args, check.stdout, check.stderr)
    log = [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert [e["type"] for e in log] == ["workbench.init", "migration.apply"]
    assert head_count(repo) == count + 1
    assert run_git(repo, "log", "-1", "--format=%s").startswith("wb: migrate ")
    assert ".workbench/" not in run_git(repo, "status", "--porcelain")

    final = run_wb(repo, "migrate")
    assert final.returncode == 0 and "nothing to migrate" in final.stdout
    assert head_count(repo) == count + 1
