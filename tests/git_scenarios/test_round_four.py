"""The user's git, round four (issue 23): what a user's undo means, leases across clocks, hooks, and the rest.

Each scenario is what a user did with plain git beside wb, and what wb must do then: a cherry-pick brings
exactly the picked commit's events, a reset the user made on purpose is an undo wb never writes back, and
validate, replay and doctor agree about both.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import WB_ARGV, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound, committed_events


def _wb(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real `wb` process with `env` added to this one's environment."""
    return subprocess.run([*WB_ARGV, *args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True,
                          encoding="utf-8", errors="replace", timeout=120)


def _titles(repo: Path) -> list[str]:
    return [t["title"] for t in json.loads((repo / ".workbench" / "board.json").read_text())["tasks"]]


def _agree(repo: Path) -> None:
    """validate, replay --verify and doctor all say the workbench is sound."""
    for args in (("validate",), ("replay", "--verify"), ("doctor",)):
        out = run_wb(repo, *args)
        assert out.returncode == 0, (args, out.stdout, out.stderr)


# -- 4. cherry-pick and reset: what the user undid ----------------------------------------------------------
def test_a_cherry_pick_of_one_wb_commit_brings_exactly_its_events(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    run_git(repo, "checkout", "-qb", "side")
    assert run_wb(repo, "task", "add", "Not picked").returncode == 0
    assert run_wb(repo, "task", "add", "Picked").returncode == 0
    run_git(repo, "checkout", "-q", "main")
    assert run_wb(repo, "note", "on main").returncode == 0
    run_git(repo, "cherry-pick", "side")
    titles = [e["payload"]["task"]["title"] for e in committed_events(repo) if e["type"] == "task.add"]
    assert titles == ["Picked"], f"the cherry-pick imported events that were not picked: {titles}"
    assert _titles(repo) == ["Picked"]
    _agree(repo)
    fix = run_wb(repo, "doctor", "--fix")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert _titles(repo) == ["Picked"], "doctor --fix put the unpicked task on the board"
    assert run_wb(repo, "note", "after").returncode == 0
    assert_sound(repo, acknowledged=["on main", "after"])


def test_a_reset_the_user_made_on_purpose_is_an_undo_wb_never_writes_back(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    for title in ("One", "Two", "Three", "Four"):
        assert run_wb(repo, "task", "add", title).returncode == 0
    run_git(repo, "reset", "-q", "--hard", "HEAD~3")
    assert _titles(repo) == ["One"]
    doctor = run_wb(repo, "doctor", "--json")
    assert doctor.returncode == 0 and "taken_back" not in doctor.stdout, doctor.stdout
    after = run_wb(repo, "note", "after the undo")
    assert after.returncode == 0, after.stderr
    assert "wrote again" not in after.stderr, after.stderr
    assert _titles(repo) == ["One"], "wb resurrected what the user's reset undid"
    _agree(repo)
    assert_sound(repo, acknowledged=["after the undo"])


# -- 7. git hooks: wb's run_hooks, and wb inside the user's hook ----------------------------------------------
_FORMATTER = """#!/bin/sh
# a formatter on "changed files", then the re-stage such hooks do
for f in $(git diff --cached --name-only --diff-filter=AM) $(git diff --name-only --diff-filter=M); do
  case "$f" in *.md) printf '<!-- formatted -->\\n' >> "$f" ;; esac
done
git add -u
"""


def _run_hooks(repo: Path, hook: str) -> None:
    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("\ngit:\n", "\ngit:\n  run_hooks: true\n", 1))
    assert "run_hooks: true" in config.read_text()
    assert run_wb(repo, "note", "config recorded").returncode == 0
    path = repo / ".git" / "hooks" / "pre-commit"
    path.write_text(hook)
    path.chmod(0o755)


def test_run_hooks_never_touches_the_users_index(repo: Path) -> None:
    _run_hooks(repo, "#!/bin/sh\ngit add -u\n")
    (repo / "app.py").write_text("print('mine, unstaged')\n")
    note = _wb(repo, "note", "with hooks")
    assert note.returncode == 0, note.stderr
    assert run_git(repo, "diff", "--cached", "--name-only").strip() == "", "the hook re-staged the user's own file"
    assert run_git(repo, "diff", "--name-only").strip() == "app.py"
    assert_sound(repo, acknowledged=["with hooks"])


def test_a_hook_that_rewrites_wbs_files_is_refused_and_never_logged_as_a_person(repo: Path) -> None:
    _run_hooks(repo, _FORMATTER)
    (repo / "app.py").write_text("print('mine, unstaged')\n")
    note = _wb(repo, "note", "formatted?")
    assert note.returncode == 0, note.stderr
    assert "pre-commit hook rewrote .workbench/state.md" in note.stderr, note.stderr
    assert "formatted" not in (repo / ".workbench" / "state.md").read_text().replace("formatted?", "")
    assert run_git(repo, "diff", "--cached", "--name-only").strip() == "", "the hook re-staged the user's own file"
    (repo / ".git" / "hooks" / "pre-commit").unlink()  # the user keeps .workbench/ out of the hook
    assert run_wb(repo, "note", "after").returncode == 0
    assert_sound(repo, acknowledged=["formatted?", "after"])
    assert [e for e in committed_events(repo) if e["type"] == "human.edit"] == [], "the hook's edit was logged"


def test_wb_inside_the_users_pre_commit_hook_never_breaks_the_commit(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\n{' '.join(WB_ARGV)} note 'from the hook' >&2 || exit 1\n")
    hook.chmod(0o755)
    (repo / "app.py").write_text("print('committed by the user')\n")
    run_git(repo, "add", "app.py")
    commit = subprocess.run(["git", "commit", "-qm", "mine"], cwd=repo, capture_output=True, text=True)
    assert commit.returncode == 0, commit.stderr
    assert "recorded, not yet committed" in commit.stderr, commit.stderr
    assert run_git(repo, "log", "-1", "--format=%s").strip() == "mine"
    assert run_git(repo, "show", "--name-only", "--format=", "HEAD").strip() == "app.py"
    hook.unlink()
    assert run_wb(repo, "note", "after").returncode == 0
    assert_sound(repo, acknowledged=["from the hook", "after"])
