"""The user's git, round three (issue 23): layouts and states of a repository wb met only in the field.

Each scenario is what a user did with plain git (or their shell) beside wb, and what wb must do then: never
commit an empty workbench over the branch's real one, never commit into another repository, never crash on a
locale, and repair what the log can rebuild.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import WB_ARGV, about_git, make_repo, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound, committed_events

pytestmark = about_git  # a git scenario: what git's own operations do to .workbench/'s files


def _wb(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real `wb` process with `env` added to this one's environment."""
    return subprocess.run([*WB_ARGV, *args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True,
                          encoding="utf-8", errors="replace", timeout=120)


def _seven_events(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    for i in range(3):
        assert run_wb(repo, "task", "add", f"Task {i}").returncode == 0
    assert run_wb(repo, "note", "kept").returncode == 0


# -- 1. a sparse checkout that leaves .workbench out ---------------------------------------------------------
def test_a_sparse_checkout_without_the_workbench_is_named_and_init_refuses_to_replace_it(repo: Path,
                                                                                         tmp_path: Path) -> None:
    _seven_events(repo)
    before = committed_events(repo)
    clone = tmp_path / "sparse"
    run_git(tmp_path, "clone", "-q", "--sparse", str(repo), str(clone))  # cone mode: top-level files only
    assert not (clone / ".workbench").exists()
    status = run_wb(clone, "status")
    assert status.returncode != 0
    assert "sparse" in status.stderr and "git sparse-checkout add .workbench" in status.stderr, status.stderr
    init = run_wb(clone, "init")
    assert init.returncode != 0, init.stdout
    assert "HEAD" in init.stderr and "git sparse-checkout add .workbench" in init.stderr, init.stderr
    assert committed_events(clone) == before, "wb init committed over the branch's workbench"
    # the advice works
    run_git(clone, "sparse-checkout", "add", ".workbench")
    assert run_wb(clone, "note", "kept too").returncode == 0
    assert_sound(clone, acknowledged=["kept", "kept too"])


def test_a_workbench_left_out_of_the_work_tree_is_never_replaced_by_init(repo: Path) -> None:
    _seven_events(repo)
    before = committed_events(repo)
    run_git(repo, "update-index", "-q", "--refresh", check=False)  # wb's index entries carry no stat data
    run_git(repo, "sparse-checkout", "set", "--no-cone", "/*", "!/.workbench/")  # wb's ignored files remain
    assert not (repo / ".workbench" / "events.jsonl").exists()
    init = run_wb(repo, "init")
    assert init.returncode != 0, init.stdout
    assert committed_events(repo) == before, "wb init committed over the branch's workbench"
    status = run_wb(repo, "status")
    assert status.returncode != 0 and "sparse" in status.stderr, status.stdout + status.stderr
    run_git(repo, "sparse-checkout", "disable")
    assert_sound(repo, acknowledged=["kept"])


# -- 2. GIT_DIR exported for another repository ---------------------------------------------------------------
def test_git_dir_of_another_repository_is_refused_and_commits_nothing_there(tmp_path: Path) -> None:
    x = make_repo(tmp_path / "x")
    y = make_repo(tmp_path / "y")
    assert run_wb(y, "init").returncode == 0
    x_head = run_git(x, "rev-parse", "HEAD")
    y_head = run_git(y, "rev-parse", "HEAD")
    out = _wb(y, "task", "add", "Into the wrong repo?", env={"GIT_DIR": str(x / ".git")})
    assert out.returncode != 0, out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wb: ") and "GIT_DIR" in lines[0], out.stderr
    assert run_git(x, "rev-parse", "HEAD") == x_head, "wb committed into the repository GIT_DIR names"
    assert run_git(x, "status", "--porcelain") == ""
    assert run_git(y, "rev-parse", "HEAD") == y_head
    # a hook's environment (GIT_DIR naming this very repository, relative) is fine
    ok = _wb(y, "note", "from a hook", env={"GIT_DIR": ".git"})
    assert ok.returncode == 0, ok.stderr
    assert_sound(y, acknowledged=["from a hook"])


def test_a_bare_repository_with_git_work_tree_works(tmp_path: Path) -> None:
    bare = tmp_path / "dotfiles.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    home = tmp_path / "home"
    home.mkdir()
    env = {"GIT_DIR": str(bare), "GIT_WORK_TREE": str(home)}
    (home / ".bashrc").write_text("alias ll='ls -l'\n")
    subprocess.run(["git", "add", ".bashrc"], cwd=home, env={**os.environ, **env}, check=True)
    subprocess.run(["git", "commit", "-qm", "dotfiles"], cwd=home, env={**os.environ, **env}, check=True)
    init = _wb(home, "init", env=env)
    assert init.returncode == 0, init.stderr
    note = _wb(home, "note", "in a bare layout", env=env)
    assert note.returncode == 0, note.stderr
    shown = subprocess.run(["git", "--git-dir", str(bare), "show", "HEAD:.workbench/events.jsonl"],
                           capture_output=True, text=True, check=True).stdout
    assert "in a bare layout" in shown
    assert not (home / ".git").exists()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=home, env={**os.environ, **env},
                            capture_output=True, text=True, check=True).stdout
    assert ".workbench" not in status, status


# -- 5. a locale that cannot print the titles -----------------------------------------------------------------
def test_a_non_utf8_locale_never_crashes_on_a_non_ascii_title(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": "", "PYTHONUTF8": "0"}
    add = _wb(repo, "task", "add", "Café ☕ naïve", env=env)
    assert add.returncode == 0, add.stderr
    tid = add.stdout.split()[0].rstrip(":")
    for args in (("task", "start", tid), ("status",), ("task", "list"), ("diff",), ("log",), ("note", "über ☕")):
        out = _wb(repo, *args, env=env)
        assert out.returncode == 0, (args, out.stdout, out.stderr)
        assert "UnicodeEncodeError" not in out.stderr + out.stdout, (args, out.stderr)
    latin = _wb(repo, "status", env={"LC_ALL": "en_US.ISO-8859-1", "PYTHONIOENCODING": "ISO-8859-1"})
    assert latin.returncode == 0, latin.stderr
    assert_sound(repo, acknowledged=["über ☕"])


# -- 8. board.json removed with git rm and committed ----------------------------------------------------------
def test_a_committed_git_rm_of_board_json_is_rebuilt_by_doctor_fix(repo: Path) -> None:
    _seven_events(repo)
    board = json.loads((repo / ".workbench" / "board.json").read_text())
    run_git(repo, "rm", "-q", ".workbench/board.json")
    run_git(repo, "commit", "-qm", "no board")
    status = run_wb(repo, "status")
    advice = status.stderr + status.stdout
    assert "git checkout -- .workbench" not in advice, advice
    fix = run_wb(repo, "doctor", "--fix")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    rebuilt = json.loads((repo / ".workbench" / "board.json").read_text())
    assert [t["title"] for t in rebuilt["tasks"]] == [t["title"] for t in board["tasks"]]
    assert run_git(repo, "cat-file", "-e", "HEAD:.workbench/board.json", check=False) == ""
    assert run_wb(repo, "note", "after").returncode == 0
    assert_sound(repo, acknowledged=["kept", "after"])


# -- 3. disk full ---------------------------------------------------------------------------------------------
def test_a_mutation_refused_for_no_space_is_never_applied_later(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "task", "add", "Before").returncode == 0
    head = run_git(repo, "rev-parse", "HEAD")
    full = _wb(repo, "task", "add", "Retried", env={"WB_FAULT": "gitthree_enospc_log_append"})
    assert full.returncode != 0
    assert "no space left on device" in full.stderr.lower(), full.stderr
    assert "kept changing" not in full.stderr
    assert run_git(repo, "rev-parse", "HEAD") == head
    retry = _wb(repo, "task", "add", "Retried")  # the agent retries once there is room again
    assert retry.returncode == 0, retry.stderr
    titles = [t["title"] for t in json.loads((repo / ".workbench" / "board.json").read_text())["tasks"]]
    assert titles == ["Before", "Retried"], f"the refused mutation was applied after all: {titles}"
    assert run_wb(repo, "doctor").returncode == 0
    assert_sound(repo)
    assert not list((repo / ".workbench").rglob(".tmp-*"))


def test_a_full_disk_at_the_fsync_the_log_shares_with_the_snapshots_records_nothing(repo: Path) -> None:
    """The log's append is fsynced together with the snapshots' temp files (issue 33): when that fsync fails,
    the batch is taken back from the log, no snapshot is renamed in, and the error does not say it was
    recorded."""
    assert run_wb(repo, "init").returncode == 0
    assert run_wb(repo, "task", "add", "Before").returncode == 0
    wbdir = repo / ".workbench"
    log, board, state = ((wbdir / n).read_bytes() for n in ("events.jsonl", "board.json", "state.md"))
    head = run_git(repo, "rev-parse", "HEAD")
    full = _wb(repo, "task", "add", "Refused", env={"WB_FAULT": "enospc_log_fsync"})
    assert full.returncode != 0
    assert "no space left on device" in full.stderr.lower(), full.stderr
    assert "recorded in events.jsonl" not in full.stderr
    assert [(wbdir / n).read_bytes() for n in ("events.jsonl", "board.json", "state.md")] == [log, board, state]
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert not list(wbdir.rglob(".tmp-*"))
    retry = _wb(repo, "task", "add", "Retried")
    assert retry.returncode == 0, retry.stderr
    titles = [t["title"] for t in json.loads((wbdir / "board.json").read_text())["tasks"]]
    assert titles == ["Before", "Retried"], f"the refused mutation was applied after all: {titles}"
    assert run_wb(repo, "doctor").returncode == 0
    assert_sound(repo)


def test_a_commit_refused_for_no_space_leaves_no_temp_object_and_is_made_later(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    full = _wb(repo, "note", "written, commit owed", env={"WB_FAULT": "gitthree_enospc_object_write"})
    assert "no space left on device" in (full.stdout + full.stderr).lower(), full.stdout + full.stderr
    assert not list((repo / ".git" / "objects").rglob("tmp_obj_*")), "temp objects left in .git/objects"
    assert run_wb(repo, "note", "next").returncode == 0
    assert run_wb(repo, "doctor").returncode == 0
    assert_sound(repo, acknowledged=["written, commit owed", "next"])


# -- 9. smaller ones ------------------------------------------------------------------------------------------
def test_a_config_yaml_merge_conflict_is_named_as_one(repo: Path) -> None:
    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    run_git(repo, "checkout", "-qb", "side")
    config.write_text(config.read_text().replace("lock_timeout: 10", "lock_timeout: 20"))
    run_git(repo, "commit", "-qam", "side: 20")
    run_git(repo, "checkout", "-q", "main")
    config.write_text(config.read_text().replace("lock_timeout: 10", "lock_timeout: 30"))
    run_git(repo, "commit", "-qam", "main: 30")
    run_git(repo, "merge", "-q", "side", check=False)
    assert "<<<<<<<" in config.read_text()
    out = run_wb(repo, "status")
    assert out.returncode != 0
    assert "merge conflict" in out.stderr and "broken YAML" not in out.stderr, out.stderr
    assert "config.yaml" in out.stderr


def test_a_push_refused_by_the_remotes_hook_says_the_hooks_reason(repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    run_git(tmp_path, "init", "-q", "--bare", str(remote))
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'policy: no pushes on Fridays' >&2\nexit 1\n")
    hook.chmod(0o755)
    run_git(repo, "remote", "add", "origin", str(remote))
    assert run_wb(repo, "init", "--ref", "wb-state").returncode == 0
    assert run_wb(repo, "note", "to push").returncode == 0
    sync = run_wb(repo, "sync")
    assert sync.returncode != 0, sync.stdout
    assert "no pushes on Fridays" in sync.stderr, sync.stderr
