"""Who acts (issue 19, item 1): every event says who acted and how wb knows (`via`, `tty`, and `proof` for a
proven person); `--actor human` is a claim only a person at a terminal who confirms on /dev/tty can make.

Before: `--actor human` was a plain flag, taken off a terminal (an agent's Bash tool ran `wb task done T-001
--force --actor human`, recorded as `human`), a refusal printed that very flag as the way out, and a
pseudo-terminal an agent made (`script -qc …`) passed for a person."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests import stored
from tests.conftest import WB_ARGV, run_wb, spawn_wb
from tests.person import as_person, person_env


def _events(repo: Path) -> list[dict]:
    return stored.events(repo)


def test_an_agent_claiming_to_be_a_person_is_refused_and_told_to_ask_one(bench, repo: Path) -> None:
    before = stored.event_bytes(repo)
    out = spawn_wb(repo, "note", "I am a person", "--actor", "human")
    assert out.returncode == 5, out.stderr
    line = out.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "ask a person to run: wb note 'I am a person'" in line, line
    assert "--actor" not in line and "--override" not in line, "a refusal never teaches the bypass"
    assert stored.event_bytes(repo) == before


def test_a_person_at_a_terminal_confirms_on_dev_tty_and_the_event_says_how(bench, repo: Path) -> None:
    out = as_person(repo, "note", "decided by a person", "--actor", "human")
    assert out.returncode == 0, out.output
    assert out.asked == 1
    last = _events(repo)[-1]
    assert (last["type"], last["actor"], last["via"], last["tty"], last["proof"]) == (
        "note.add", "human", "terminal", True, "tty-code")


def test_a_wrong_code_or_no_answer_is_no_person(bench, repo: Path) -> None:
    wrong = as_person(repo, "note", "x", "--actor", "human", answer="0000")
    assert wrong.returncode == 5 and "not confirmed" in wrong.output, wrong.output
    silent = as_person(repo, "note", "x", "--actor", "human", answer=None)
    assert silent.returncode == 5, silent.output
    assert [e["type"] for e in _events(repo)] == ["workbench.init"] or all(
        e["type"] != "note.add" for e in _events(repo))


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script is not installed")
def test_a_pseudo_terminal_an_agent_makes_is_no_person(bench, repo: Path) -> None:
    """The agent's Bash tool: `script` gives wb a terminal, and an answer piped in ahead cannot know the code."""
    cmd = " ".join([*WB_ARGV, "note", "pty", "--actor", "human"])
    for env in (person_env(), {**person_env(), "CLAUDECODE": "1"}):
        out = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=repo, input="y\n1234\n", text=True,
                             capture_output=True, env=env, timeout=60)
        assert out.returncode == 5, out.stdout + out.stderr
    assert all(e["type"] != "note.add" for e in _events(repo))


def test_an_agent_environment_is_an_agent_whatever_it_claims(bench, repo: Path) -> None:
    """At a real terminal, but in Claude Code's environment (CLAUDECODE=1): an agent, never asked for a code."""
    out = as_person(repo, "note", "x", "--actor", "human", env={**person_env(), "CLAUDECODE": "1"},
                    argv=["env", "CLAUDECODE=1", *WB_ARGV])
    assert out.returncode == 5 and out.asked == 0, out.output
    assert "agent's environment (CLAUDECODE)" in out.output
    plain = as_person(repo, "note", "typed in Claude Code's shell", argv=["env", "CLAUDECODE=1", *WB_ARGV])
    assert plain.returncode == 0, plain.output
    last = _events(repo)[-1]
    assert (last["actor"], last["via"]) == ("agent", "script")


def test_every_event_says_how_its_actor_was_established(bench, repo: Path) -> None:
    assert run_wb(repo, "note", "piped").returncode == 0
    bench.note("from python")
    assert as_person(repo, "note", "typed").returncode == 0
    notes = [e for e in _events(repo) if e["type"] == "note.add"]
    assert [(e["actor"], e["via"], e["tty"]) for e in notes] == [
        ("agent", "script", False), ("agent", "api", False), ("human", "terminal", True)]
    assert all("proof" not in e for e in notes), "an ordinary write at a terminal is a claim, not a proof"
    assert run_wb(repo, "validate").returncode == 0
    assert run_wb(repo, "replay", "--verify").returncode == 0
