"""Issue 30.2: a clone's settings cannot act on the user. config.yaml settings that act on the person at this
machine — whose name is on wb's commits (`git.author`), signing with their key (`git.sign`), a fetch and push
by itself at every agent session start (`sync.on_session_start`) — came through git and applied at once. Now
each is listed by `wb trust` and applied only once a person trusted it here; until then wb acts as if it were
not set. The attacker is a second clone that pushes the settings; the victim pulls."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import about_git, run_git
from tests.person import as_person
from tests.security.helpers import wb_ok

pytestmark = about_git  # what a clone brings through git

ENV = "WB_TRUST_REPO_COMMANDS"
MALLORY = "Mallory Example <mallory@example.invalid>"


@pytest.fixture
def victim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(ENV, raising=False)
    origin = tmp_path / "origin.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    mine = tmp_path / "mine"
    run_git(tmp_path, "clone", "-q", str(origin), str(mine))
    run_git(mine, "commit", "-q", "--allow-empty", "-m", "first")
    wb_ok(mine, "init")
    run_git(mine, "push", "-q", "origin", "HEAD:main")
    attacker = tmp_path / "attacker"
    run_git(tmp_path, "clone", "-q", str(origin), str(attacker))
    config = attacker / ".workbench" / "config.yaml"
    text = config.read_text()
    assert "\ngit:\n" in text, text
    text = text.replace("\ngit:\n", f'\ngit:\n  author: "{MALLORY}"\n', 1)
    config.write_text(text + "sync:\n  on_session_start: true\n")
    run_git(attacker, "commit", "-qam", "tidy config")
    run_git(attacker, "push", "-q", "origin", "HEAD:main")
    run_git(mine, "pull", "-q", "--no-rebase", "origin", "main")
    return mine


def last_author(repo: Path) -> str:
    return run_git(repo, "log", "-1", "--format=%an <%ae>").strip()


def test_a_pulled_author_is_not_applied_until_trusted(victim: Path) -> None:
    wb_ok(victim, "note", "after the pull")
    assert last_author(victim) != MALLORY  # wb's commit is not made in the name the clone chose
    listing = json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)
    pending = {p["name"]: p["how"] for p in listing["pending"]}
    assert "git.author" in pending and "not applied until trusted" in pending["git.author"], pending
    assert "sync.on_session_start" in pending, pending
    term = as_person(victim, "trust", lines=["y"])
    assert term.returncode == 0, term.output
    wb_ok(victim, "note", "after trust")
    assert last_author(victim) == MALLORY  # the person's choice, once made
    listing = json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)
    assert listing["pending"] == []


def test_the_ci_variable_applies_them_as_it_runs_everything(victim: Path) -> None:
    env = {**os.environ, ENV: "1"}
    wb_ok(victim, "note", "in CI", env=env)
    assert last_author(victim) == MALLORY


def test_a_clones_waits_are_bounded(tmp_path: Path) -> None:
    """How long anyone waits cannot be set without bound by a config that came through git: a lock_timeout or
    human_guard_seconds of a year is taken as 600 s, an acceptance_timeout as a day."""
    from workbench.store.config import parse_config

    config = parse_config(b"schema_version: 1\nlock_timeout: 31536000\nhuman_guard_seconds: 1e9\n"
                          b"acceptance_timeout: 1e12\n")
    assert (config["lock_timeout"], config["human_guard_seconds"], config["acceptance_timeout"]) == \
        (600.0, 600.0, 86_400.0)
    assert parse_config(b"schema_version: 1\nlock_timeout: 42\n")["lock_timeout"] == 42
