"""Shared fixtures: an isolated environment, real git repositories in tmp_path, and a `wb` runner.

Every test runs with NO_COLOR, a fixed COLUMNS, a git identity from the environment and a temporary HOME,
so nothing from the developer's machine (global git config, colours, terminal width) leaks in.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

WB_ARGV = [sys.executable, "-m", "workbench.cli.main"]


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Committer")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL", "GIT_AUTHOR_DATE",
                 "GIT_COMMITTER_DATE", "WB_FAULT", "WB_FAULT_SKIP", "WB_PAUSE", "WB_PAUSE_FILE", "WB_DEBUG",
                 "WB_LOCK_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


def run_git(cwd: Path, *args: str, check: bool = True, input: str | None = None) -> str:
    """Run git in `cwd` and return its stdout (text)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


def run_wb(repo: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `wb` command line in `repo` as a subprocess."""
    return subprocess.run([*WB_ARGV, *args], cwd=repo, capture_output=True, text=True, input=input,
                          timeout=120)


def make_repo(path: Path, *, commit: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    run_git(path, "init", "-q", "-b", "main")
    if commit:
        (path / "README.md").write_text("# a project\n")
        (path / "app.py").write_text("print('hello')\n")
        run_git(path, "add", "README.md", "app.py")
        run_git(path, "commit", "-q", "-m", "initial commit")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository (branch main) with one initial commit holding README.md and app.py."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def new_repo() -> Callable[..., Path]:
    """`new_repo(path, commit=True)`: another git repository (commit=False: an unborn branch)."""
    return make_repo


@pytest.fixture
def wb() -> Callable[..., subprocess.CompletedProcess[str]]:
    """`wb(repo, *args, input=None)`: run the CLI in `repo`, return the CompletedProcess (text)."""
    return run_wb


@pytest.fixture
def git() -> Callable[..., str]:
    """`git(repo, *args, check=True)`: run git, return stdout."""
    return run_git


@pytest.fixture
def bench(repo: Path):  # type: ignore[no-untyped-def]
    """A workbench initialised in `repo` through the Python API (fast: no subprocess for wb)."""
    from workbench.api import Bench, init

    _b, created, _last = init(repo)
    assert created
    return Bench.open(repo)  # opened afresh, as a new process would


# .cache/ holds per-machine memos (the parsed config, when a hand edit was seen); only its copies of the
# snapshots matter to correctness: human-edit detection compares state.md and board.json with them.
SNAPSHOT_COPIES = {".cache/state.json", ".cache/board.json"}


def hash_workbench(root: Path) -> dict[str, str]:
    """sha256 of every file under .workbench/, except the lock file (its content is a pid hint) and the
    per-machine memos in .cache/ other than the snapshot copies."""
    base = root / ".workbench"
    out = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base).as_posix()
        if not path.is_file() or rel == ".lock" or (rel.startswith(".cache/") and rel not in SNAPSHOT_COPIES):
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def wb_hashes() -> Callable[[Path], dict[str, str]]:
    return hash_workbench


def one_error_line(stderr: str) -> str:
    """Assert stderr is exactly one `wb: ` line without a traceback, and return it."""
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {stderr!r}"
    assert lines[0].startswith("wb: "), lines[0]
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture
def error_line() -> Callable[[str], str]:
    return one_error_line


def head_count(repo: Path, rev: str = "HEAD") -> int:
    return int(run_git(repo, "rev-list", "--count", rev).strip())


@pytest.fixture
def commits() -> Callable[..., int]:
    """`commits(repo, rev="HEAD")`: number of commits reachable from rev."""
    return head_count

