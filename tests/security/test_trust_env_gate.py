"""Issue 30.1: the CI opt-in is not an agent's. In an agent's shell (`CLAUDECODE=1`) in a fresh clone, plain
`wb task done T-001` was refused, but `WB_TRUST_REPO_COMMANDS=1 wb task done T-001` ran the clone's untrusted
acceptance command, the PreToolUse guard let the line through, and nothing recorded that trust was skipped.

Now the variable is honoured only where wb would take a person's word: not with an agent's marker in wb's
environment, nor in any ancestor's (`env -u CLAUDECODE` inside the agent's shell), nor through MCP or a hook;
where it is honoured (CI), every event the command writes carries `trust: "env"`; and the guard denies a shell
command that sets it. Real processes throughout: the ancestry is the point."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import WB_ARGV, about_git, run_git
from tests.security.helpers import PY, events, wb_ok

pytestmark = about_git  # trust of what a clone brings

ENV = "WB_TRUST_REPO_COMMANDS"
MARKERS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CODEX_THREAD_ID", "CODEX_CI", "CODEX_SESSION_ID",
           "CODEX_TOOL_CALL_ID", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED")


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone whose T-001 carries an acceptance command this clone never trusted (it came through git)."""
    monkeypatch.delenv(ENV, raising=False)
    for m in MARKERS:
        monkeypatch.delenv(m, raising=False)
    origin = tmp_path / "origin"
    run_git(tmp_path, "init", "-q", "-b", "main", str(origin))
    run_git(origin, "commit", "-q", "--allow-empty", "-m", "first")
    wb_ok(origin, "init")
    wb_ok(origin, "task", "add", "Looks harmless", "--accept", f"{PY} -c \"open('PWNED', 'a').write('ran')\"")
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(origin), str(clone))
    return clone


def shell(repo: Path, line: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`line` in bash, as an agent's shell tool runs it: `env` in the shell's own environment."""
    full = {k: v for k, v in os.environ.items() if k != ENV and k not in MARKERS}
    full.update(env)
    script = line.replace("wb ", " ".join(map(shlex.quote, WB_ARGV)) + " ", 1)
    # a line after it, so bash forks the command rather than exec it: the agent's shell stays its parent
    return subprocess.run(["bash", "-c", script + "\nrc=$?; exit $rc"],
                          cwd=repo, env=full, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("how", ["marker in wb's environment", "env -u under the agent's shell",
                                 "export in the agent's shell"])
def test_an_agent_cannot_skip_trust_with_the_ci_variable(clone: Path, how: str) -> None:
    if how == "marker in wb's environment":
        proc = shell(clone, f"{ENV}=1 wb task done T-001", CLAUDECODE="1")
    elif how == "env -u under the agent's shell":
        proc = shell(clone, f"env -u CLAUDECODE {ENV}=1 wb task done T-001", CLAUDECODE="1")
    else:
        proc = shell(clone, f"export {ENV}=1; unset CODEX_THREAD_ID; wb task done T-001", CODEX_THREAD_ID="t1")
    assert proc.returncode == 5, (proc.stdout, proc.stderr)
    assert "not trusted on this clone" in proc.stderr, proc.stderr
    assert not (clone / "PWNED").exists()
    assert [e for e in events(clone) if e["type"] == "task.done"] == []


def test_in_ci_the_variable_runs_it_and_says_so_on_the_record(clone: Path) -> None:
    proc = shell(clone, f"{ENV}=1 wb task done T-001", CI="true")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert (clone / "PWNED").exists()
    done = [e for e in events(clone) if e["type"] == "task.done"]
    assert len(done) == 1 and done[0].get("trust") == "env", done
    # a write that ran nothing untrusted is not marked
    assert shell(clone, f"{ENV}=1 wb note plain", CI="true").returncode == 0
    assert "trust" not in events(clone)[-1]


def test_a_terminal_under_an_agent_is_the_agents(clone: Path) -> None:
    """Issue 30.4: `env -u CLAUDECODE script -qc 'wb note …' /dev/null` from an agent's shell was recorded
    `actor: human, via: terminal` — while the same ancestry was caught for person-only actions."""
    wb = " ".join(map(shlex.quote, WB_ARGV))
    inner = f"{wb} note from-a-pty"
    proc = shell(clone, f"env -u CLAUDECODE script -qec {shlex.quote(inner)} /dev/null", CLAUDECODE="1")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    note = events(clone)[-1]
    assert note["type"] == "note.add" and note["actor"] == "agent", note
    # the same terminal with no agent above it is a person's (claimed, not proven)
    proc = shell(clone, f"unset CI; script -qec {shlex.quote(f'{wb} note from-a-person')} /dev/null")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert events(clone)[-1]["actor"] == "human" and events(clone)[-1]["via"] == "terminal"


@pytest.mark.parametrize("how", ["a tracked checklist", "a tracked JSON file on stdin"])
def test_commands_in_an_imported_file_wait_for_wb_trust(clone: Path, how: str) -> None:
    """Issue 30.1: `wb task import tasks.md` of a file the clone tracks (or `git show HEAD:ci-tasks.json | wb task
    import -`) made its `accept:` commands count as written by this clone's wb: nothing pending in `wb trust
    --list`, and `wb task done` ran them. An imported file's commands are the file's: they wait for `wb trust`
    unless a proven person ran the import."""
    cmd = f"{PY} -c \"open('IMPORTED', 'a').write('ran')\""
    if how == "a tracked checklist":
        (clone / "tasks.md").write_text(f"- [ ] Lint\n  accept: {cmd}\n")
        run_git(clone, "add", "tasks.md")
        run_git(clone, "commit", "-qm", "tasks")
        proc = shell(clone, "wb task import tasks.md")
    else:
        (clone / "ci-tasks.json").write_text(json.dumps([{"title": "Lint", "acceptance": [cmd]}]))
        run_git(clone, "add", "ci-tasks.json")
        run_git(clone, "commit", "-qm", "tasks")
        proc = shell(clone, "git show HEAD:ci-tasks.json | wb task import -")
    assert proc.returncode == 0, proc.stderr
    assert "not trusted here" in proc.stderr and "wb trust" in proc.stderr, proc.stderr
    listing = json.loads(shell(clone, "wb trust --list --json").stdout)
    assert cmd in [p.get("run") for p in listing["pending"]], listing["pending"]
    done = shell(clone, "wb task done T-002")
    assert done.returncode == 5 and "not trusted on this clone" in done.stderr, done.stderr
    assert not (clone / "IMPORTED").exists()
