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

from tests.conftest import WB_ARGV, about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound, committed_events

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


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
    # board.json stays as it was, behind the log, until the next wb command folds the picked events into it;
    # what wb shows is the log's, at once
    listed = json.loads(run_wb(repo, "task", "list", "--json").stdout)
    assert [t["title"] for t in listed] == ["Picked"]
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


def test_a_revert_of_an_older_wb_commit_is_a_hand_edit_validate_replay_and_doctor_agree_on(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    for title in ("Reverted", "Kept"):
        assert run_wb(repo, "task", "add", title).returncode == 0
    run_git(repo, "revert", "--no-edit", "HEAD~1")
    assert _titles(repo) == ["Kept"]
    _agree(repo)
    assert run_wb(repo, "note", "after").returncode == 0
    assert _titles(repo) == ["Kept"], "the revert was written over"
    assert [e["type"] for e in committed_events(repo)][-2:] == ["human.edit", "note.add"]
    assert_sound(repo, acknowledged=["after"])


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


# -- 9. smaller ones ------------------------------------------------------------------------------------------
def test_wb_diff_across_a_plain_merge_shows_what_the_merge_brought(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    run_git(repo, "checkout", "-qb", "alice")
    assert run_wb(repo, "task", "add", "Alice's").returncode == 0
    run_git(repo, "checkout", "-q", "main")
    assert run_wb(repo, "note", "main's").returncode == 0
    run_git(repo, "merge", "-q", "--no-edit", "alice")
    out = run_wb(repo, "diff", "alice", "HEAD")
    assert out.returncode == 0, out.stderr
    assert "rewritten" not in out.stdout, out.stdout
    assert "events.jsonl: 1 appended" in out.stdout and "note.add ×1" in out.stdout, out.stdout
    back = run_wb(repo, "diff", "HEAD", "alice")
    assert "rewritten" not in back.stdout and "1 event(s) fewer" in back.stdout, back.stdout


def _published_state(tmp_path: Path) -> Path:
    """A remote whose state is on wb-state (one task), as a teammate's `wb init --ref wb-state` + `wb sync` left it."""
    remote = tmp_path / "remote.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    first = tmp_path / "first"
    run_git(tmp_path, "clone", "-q", str(remote), str(first))
    (first / "README.md").write_text("project\n")
    run_git(first, "add", "README.md")
    run_git(first, "commit", "-qm", "project")
    run_git(first, "push", "-q", "origin", "main")
    assert run_wb(first, "init", "--ref", "wb-state").returncode == 0
    assert run_wb(first, "task", "add", "Shared task").returncode == 0
    assert run_wb(first, "sync").returncode == 0
    return remote


def test_init_in_a_fresh_clone_takes_up_origins_state_and_says_so(tmp_path: Path) -> None:
    remote = _published_state(tmp_path)
    for name, args in (("with-ref", ("init", "--ref", "wb-state")), ("plain", ("init",))):
        clone = tmp_path / name
        run_git(tmp_path, "clone", "-q", str(remote), str(clone))
        head = run_git(clone, "rev-parse", "HEAD")
        init = run_wb(clone, *args)
        assert init.returncode == 0, init.stderr
        assert "nothing changed" not in init.stdout and "Took up the workbench recorded on wb-state" in init.stdout, \
            (name, init.stdout)
        assert _titles(clone) == ["Shared task"], name
        assert run_git(clone, "rev-parse", "HEAD") == head, f"{name}: wb init committed onto the user's branch"
        assert run_wb(clone, "note", f"from {name}").returncode == 0
        assert run_wb(clone, "sync").returncode == 0


def test_a_refused_fetch_keeps_gits_reason(repo: Path, tmp_path: Path) -> None:
    assert run_wb(repo, "init", "--ref", "wb-state").returncode == 0
    ssh = tmp_path / "ssh"
    ssh.write_text("#!/bin/sh\necho 'git@example.invalid: Permission denied (publickey).' >&2\nexit 255\n")
    ssh.chmod(0o755)
    run_git(repo, "remote", "add", "origin", "ssh://git@example.invalid/team/repo.git")
    sync = _wb(repo, "sync", env={"GIT_SSH_COMMAND": str(ssh)})
    assert sync.returncode != 0
    lines = sync.stderr.strip().splitlines()
    assert len(lines) == 1 and "Permission denied (publickey)" in lines[0], sync.stderr


def test_task_done_never_counts_edits_that_were_there_before_task_start(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    (repo / "README.md").write_text("the user's own edit, before the task\n")
    add = run_wb(repo, "task", "add", "Scoped", "--allow", "app.py", "--outside", "block")
    assert add.returncode == 0, add.stderr
    assert run_wb(repo, "task", "start", "T-001").returncode == 0
    (repo / "app.py").write_text("print('the task')\n")
    done = run_wb(repo, "task", "done", "T-001")
    assert done.returncode == 0, done.stderr
    proof = [e for e in committed_events(repo) if e["type"] == "task.done"][-1]["payload"]["scope"]
    assert proof["changed"] == 1, proof
    # an edit made during the task, to a file already dirty at its start, does count
    assert run_wb(repo, "task", "add", "Second", "--allow", "app.py", "--outside", "block").returncode == 0
    assert run_wb(repo, "task", "start", "T-002").returncode == 0
    (repo / "README.md").write_text("changed again, during the task\n")
    again = run_wb(repo, "task", "done", "T-002")
    assert again.returncode != 0 and "README.md" in again.stderr, again.stdout + again.stderr


# -- 6. leases across skewed clocks -------------------------------------------------------------------------
TWO_HOURS = {"WB_CLOCK_SKEW_S": "7200"}
TEN_YEARS = {"WB_CLOCK_SKEW_S": str(10 * 365 * 86400)}


def test_a_two_hour_skew_never_gives_one_lease_to_two_agents(tmp_path: Path) -> None:
    from tests.sync.helpers import clone, make_remote

    remote = make_remote(tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for title in ("ahead", "behind"):
        assert run_wb(a, "task", "add", title).returncode == 0
    assert run_wb(a, "sync").returncode == 0
    # T-001: alice's clock is right, bob's runs 2 h ahead; T-002: alice's runs 2 h behind, bob's is right
    assert _wb(a, "task", "claim", "T-001", "--agent", "alice", "--lease", "1h").returncode == 0
    behind = _wb(a, "task", "claim", "T-002", "--agent", "alice", "--lease", "1h", env={"WB_CLOCK_SKEW_S": "-7200"})
    assert behind.returncode == 0, behind.stderr
    for tid, env in (("T-001", TWO_HOURS), ("T-002", {})):
        bob = _wb(b, "task", "claim", tid, "--agent", "bob", env=env)
        assert bob.returncode == 6, f"{tid}: bob was told he holds alice's lease too: {bob.stdout}"
        assert f"{tid} is claimed by alice" in bob.stderr, bob.stderr
    assert run_wb(b, "sync").returncode == 0
    holders = {t["id"]: t["claim"]["agent"] for t in json.loads((b / ".workbench" / "board.json").read_text())["tasks"]}
    assert holders == {"T-001": "alice", "T-002": "alice"}


def test_a_claim_from_a_clock_ten_years_ahead_holds_only_its_lease(tmp_path: Path) -> None:
    import time

    from tests.sync.helpers import clone, make_remote

    remote = make_remote(tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert run_wb(a, "task", "add", "job").returncode == 0
    won = _wb(a, "task", "claim", "T-001", "--agent", "alice", "--lease", "2s", "--json", env=TEN_YEARS)
    assert won.returncode == 0, won.stderr
    assert json.loads(won.stdout)["until"] > "2036"
    refused = _wb(b, "task", "claim", "T-001", "--agent", "bob")
    assert refused.returncode == 6, refused.stdout
    until = refused.stderr.split(" until ")[1][:4]
    assert until < "2030", f"the task is blocked until {until}: {refused.stderr}"
    time.sleep(2.3)  # alice's 2 s lease runs out, as bob's clock measures it
    taken = _wb(b, "task", "claim", "T-001", "--agent", "bob", "--json")
    assert taken.returncode == 0, taken.stderr
    assert json.loads(taken.stdout)["took_over_from"] == "alice"
    assert run_wb(a, "sync").returncode == 0  # every clone agrees who holds it now
    task = json.loads((a / ".workbench" / "board.json").read_text())["tasks"][0]
    assert task["claim"]["agent"] == "bob" and task["claim"]["took_over_from"] == "alice"


def test_wb_in_another_repositorys_commit_hook_commits_in_its_own(tmp_path: Path) -> None:
    from tests.conftest import make_repo

    x, y = make_repo(tmp_path / "x"), make_repo(tmp_path / "y")
    assert run_wb(y, "init").returncode == 0
    hook = x / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ncd {y} && {' '.join(WB_ARGV)} note 'from x' >&2 || exit 1\n")
    hook.chmod(0o755)
    (x / "app.py").write_text("print('x')\n")
    commit = subprocess.run(["git", "commit", "-qam", "x's"], cwd=x, capture_output=True, text=True)
    assert commit.returncode == 0, commit.stderr
    assert run_git(x, "show", "--name-only", "--format=", "HEAD").strip() == "app.py"
    assert_sound(y, acknowledged=["from x"])
