"""`.pre-commit-hooks.yaml`: the real pre-commit runs `wb validate` on a repository's workbench."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import files_only, run_git

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("pre_commit")
yaml = pytest.importorskip("yaml")


def manifest() -> list[dict[str, object]]:
    hooks: list[dict[str, object]] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return hooks


def pre_commit(repo: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
               PRE_COMMIT_COLOR="never")
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, capture_output=True, text=True,
                          env=env, timeout=timeout, stdin=subprocess.DEVNULL)


def break_board(repo: Path) -> None:
    path = repo / ".workbench" / "board.json"
    board = json.loads(path.read_text())
    board["tasks"][0]["status"] = "finished"
    path.write_text(json.dumps(board, indent=2) + "\n")


def test_the_manifest_declares_wb_validate() -> None:
    assert manifest() == [{
        "id": "wb-validate", "name": "wb validate",
        "description": "Check every .workbench/ file against its schema and the event log's hash chain.",
        "entry": "wb validate", "language": "python", "pass_filenames": False, "files": r"^\.workbench/",
    }]


@files_only  # git's pre-commit on committed .workbench/ files (board.json broken by hand): none on SQLite
def test_the_hook_passes_a_valid_workbench_and_stops_a_commit_of_a_broken_board(bench, repo: Path) -> None:
    bench.add_task("Parse the config")
    # the manifest's own hook, run from this environment's wb (language: system) so the test needs no network;
    # test_try_repo_installs_the_hook below installs it the way a user's pre-commit does
    hook = dict(manifest()[0], language="system")
    (repo / ".pre-commit-config.yaml").write_text(json.dumps({"repos": [{"repo": "local", "hooks": [hook]}]}))
    run_git(repo, "add", ".pre-commit-config.yaml")
    run_git(repo, "commit", "-q", "-m", "pre-commit config")

    ok = pre_commit(repo, "run", "wb-validate", "--all-files")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "wb validate" in ok.stdout and "Passed" in ok.stdout

    installed = pre_commit(repo, "install")
    assert installed.returncode == 0, installed.stderr
    (repo / "app.py").write_text("print('hello, world')\n")  # a commit outside .workbench/: the hook is skipped
    run_git(repo, "add", "app.py")
    skipped = subprocess.run(["git", "commit", "-m", "greet the world"], cwd=repo, capture_output=True, text=True,
                             env=dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                                        os.environ["PATH"]])))
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "Skipped" in skipped.stdout + skipped.stderr

    break_board(repo)
    run_git(repo, "add", ".workbench/board.json")
    head = run_git(repo, "rev-parse", "HEAD")
    failed = pre_commit(repo, "run")
    assert failed.returncode == 1
    assert "Failed" in failed.stdout and "board.json: tasks[0].status:" in failed.stdout
    refused = subprocess.run(["git", "commit", "-m", "hand edit"], cwd=repo, capture_output=True, text=True,
                             env=dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                                        os.environ["PATH"]])))
    assert refused.returncode != 0 and "board.json: tasks[0].status:" in refused.stdout + refused.stderr
    assert run_git(repo, "rev-parse", "HEAD") == head


@pytest.mark.slow
def test_try_repo_installs_the_hook(bench, repo: Path, tmp_path: Path) -> None:
    """pre-commit clones wb and installs it in a virtualenv of its own (needs the package index)."""
    source = tmp_path / "wb-source"
    listed = run_git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    run_git(source, "init", "-q", "-b", "main")
    run_git(source, "add", "-A")
    run_git(source, "commit", "-q", "-m", "wb as it stands")  # try-repo takes committed files only

    bench.add_task("Parse the config")
    proc = pre_commit(repo, "try-repo", str(source), "wb-validate", "--all-files", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "wb validate" in proc.stdout and "Passed" in proc.stdout

    break_board(repo)
    proc = pre_commit(repo, "try-repo", str(source), "wb-validate", "--all-files", timeout=600)
    assert proc.returncode == 1 and "board.json: tasks[0].status:" in proc.stdout
