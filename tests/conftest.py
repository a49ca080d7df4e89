"""Shared fixtures: an isolated environment, real git repositories in tmp_path, and the one `wb` runner.

Every test runs with NO_COLOR, a fixed COLUMNS, a git identity from the environment and a temporary HOME,
so nothing from the developer's machine (global git config, colours, terminal width) leaks in.

`wb` runs one of two ways, both returning a `subprocess.CompletedProcess[str]`:
- `spawn_wb`: a real process (`python -m workbench.cli.main`, or any argv) — for what only a process shows:
  a crash (WB_FAULT, kill -9), the lock between processes, a terminal, stdin piped to a hook, start-up.
- `call_wb`: in this process, through `workbench.cli.main.main(argv)` — for what a command prints and exits
  with, without paying Python's start-up and wb's imports each time. It runs like a fresh process would: in
  `cwd`, with `env` as the whole environment, stdin from `input` (never a TTY), stdout/stderr captured as
  text; the environment, cwd, sys.path and modules imported from outside the installed packages (a hook's
  module from the repo) are put back afterwards, so nothing of one run is seen by the next.
`run_wb` (the `wb` fixture) is `call_wb`, or `spawn_wb` with `process=True`; WB_TESTS_SPAWN=1 in the
environment makes every run a real process, to check that both ways agree.
"""

from __future__ import annotations

import faulthandler
import hashlib
import io
import os
import signal
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

# Every hypothesis test draws the same examples on every run and machine: a failure reproduces on a rerun, and
# a newcomer's first run is the run CI made (a random draw that fails one time in fifty is a flaky test).
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - hypothesis is a test extra
    pass
else:
    _hypothesis_settings.register_profile("wb", derandomize=True, print_blob=True)
    _hypothesis_settings.load_profile("wb")

# A suite started in the background by a non-interactive shell (`cmd &`, nohup) inherits SIGINT ignored, and an
# ignored signal stays ignored across exec: every wb the tests start would then ignore the Ctrl-C the interrupt
# tests send, and those tests wait on a process that never stops. The tests' own processes take it as a person's
# terminal gives it.
signal.signal(signal.SIGINT, signal.default_int_handler)

WB_ARGV = [sys.executable, "-m", "workbench.cli.main"]
SPAWN_ALWAYS = os.environ.get("WB_TESTS_SPAWN") == "1"
# WB_TEST_BACKEND=sqlite: every `wb init` of the tests (the `bench` fixture's, `wb init` run by a test) makes a
# workbench kept in SQLite (issue 24, docs/storage.md), through WB_DEFAULT_BACKEND. .ci/run runs the suite so a
# second time; a test reads what a workbench holds through tests/stored.py, which reads either backend.
TEST_BACKEND = os.environ.get("WB_TEST_BACKEND") or "files"


def files_only_because(why: str) -> pytest.MarkDecorator:
    """Skip this test (or module: `pytestmark = ...`) on the SQLite pass, saying why: it is about the files
    backend's files or git themselves (their bytes, git's history of them, a hand edit, a merge), which a
    workbench kept in SQLite does not have — never to hide what SQLite gets wrong."""
    return pytest.mark.skipif(TEST_BACKEND != "files", reason=f"files backend only: {why}")


# a test of what the SQLite backend does not serve yet (the harness, sealed log segments: docs/storage.md)
files_only = pytest.mark.skipif(TEST_BACKEND != "files", reason="the SQLite backend does not serve this yet")
# the reasons a test is about the files backend itself
about_git = files_only_because("git's history of .workbench/ (commits, merges, branches, worktrees)")
about_files = files_only_because("the bytes of .workbench/'s files, or a person editing them by hand")


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """pyproject's addopts start 2 xdist workers (`-n 2`). Without pytest-xdist (not installed, or
    `-p no:xdist`) `-n N` is accepted here and ignored: the suite runs in one process, as before."""
    if not pluginmanager.has_plugin("xdist"):
        parser.getgroup("xdist", "pytest-xdist absent").addoption(
            "--numprocesses", dest="numprocesses", default=None,
            help="ignored: pytest-xdist is not installed or is disabled; the tests run in one process")
        parser.getgroup("xdist")._addoption(  # pytest keeps lowercase short options for itself and plugins
            "-n", dest="numprocesses", default=None, help="ignored, as --numprocesses")


def spawn_wb(cwd: Path, *args: str, input: str | None = None, env: Mapping[str, str] | None = None,
             timeout: float = 120, argv: Sequence[str] = WB_ARGV, prefix: Sequence[str] = ()
             ) -> subprocess.CompletedProcess[str]:
    """Run `wb` as a real process in `cwd`: `[*prefix, *argv, *args]`, stdin `input` (else /dev/null),
    `env` the whole environment (else this process's), output captured as text."""
    return subprocess.run([*prefix, *argv, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else dict(env), input=input,
                          stdin=subprocess.DEVNULL if input is None else None)


def _installed_roots() -> tuple[str, ...]:
    import workbench

    return (str(Path(workbench.__file__).parent), sys.prefix, sys.base_prefix, sys.exec_prefix)


def call_wb(cwd: Path, *args: str, input: str | None = None, env: Mapping[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `wb` in this process through `main(argv)`, as a fresh process would run it (see the module doc).
    A run still going after `timeout` seconds ends this process with every thread's traceback on stderr
    (a hang fails the test run instead of stalling it)."""
    if SPAWN_ALWAYS:
        return spawn_wb(cwd, *args, input=input, env=env, timeout=timeout)
    from workbench.cli.main import main

    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    saved_modules = set(sys.modules)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    out, err = io.BytesIO(), io.BytesIO()
    # the streams of a process whose stdin, stdout and stderr are pipes, in a UTF-8 locale
    streams = (io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8", errors="surrogateescape"),
               io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True))
    sys.stdin, sys.stdout, sys.stderr = streams
    faulthandler.dump_traceback_later(timeout, exit=True, file=sys.__stderr__)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.chdir(cwd)
        try:
            with warnings.catch_warnings():  # as a process shows them: on its stderr, with Python's filters
                warnings.resetwarnings()
                for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
                    warnings.simplefilter("ignore", category)
                warnings.showwarning = _show_warning
                code = main(list(args))
        except SystemExit as exit_:  # what a process would exit with
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            if exit_.code is not None and not isinstance(exit_.code, int):
                sys.stderr.write(f"{exit_.code}\n")
        except BaseException:  # an uncaught exception (`--debug` re-raises): Python prints it and exits 1
            traceback.print_exc()
            code = 1
    finally:
        faulthandler.cancel_dump_traceback_later()
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for stream in streams:
            stream.flush()
            stream.detach()  # a wrapper closes its buffer when it is collected: keep the bytes readable
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        from workbench.model import redaction

        redaction._known.clear()  # a process is one wb command: the secrets it learnt are not the next run's
        sys.path[:] = saved_path
        roots = _installed_roots()
        for name in set(sys.modules) - saved_modules:  # a hook's module from the repo: the next run imports its own
            module = sys.modules[name]
            where = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", None) or ()), None)
            if where is not None and not str(where).startswith(roots):
                del sys.modules[name]
    return subprocess.CompletedProcess(["wb", *args], code, _as_text(out.getvalue()), _as_text(err.getvalue()))


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: object = None, line: str | None = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _as_text(data: bytes) -> str:
    """Bytes read from a pipe as `subprocess.run(text=True)` reads them (universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()


def run_wb(repo: Path, *args: str, input: str | None = None, env: Mapping[str, str] | None = None,
           process: bool = False, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the `wb` command line in `repo`: in this process (`call_wb`), or a real one with `process=True`."""
    if process:
        return spawn_wb(repo, *args, input=input, env=env, timeout=timeout)
    return call_wb(repo, *args, input=input, env=env, timeout=timeout)


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
    # the suite writes tools, hooks and acceptance into config.yaml and board.json by hand and runs them: like CI,
    # it trusts the repository's commands (issue 19). tests/security/test_trust.py takes this away again.
    monkeypatch.setenv("WB_TRUST_REPO_COMMANDS", "1")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL", "GIT_AUTHOR_DATE",
                 "GIT_COMMITTER_DATE", "WB_FAULT", "WB_FAULT_SKIP", "WB_PAUSE", "WB_PAUSE_FILE", "WB_DEBUG",
                 "WB_LOCK_TIMEOUT", "WB_DEFAULT_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    if TEST_BACKEND != "files":
        monkeypatch.setenv("WB_DEFAULT_BACKEND", TEST_BACKEND)


def run_git(cwd: Path, *args: str, check: bool = True, input: str | None = None) -> str:
    """Run git in `cwd` and return its stdout (text)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


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
    """`wb(repo, *args, input=None, env=None, process=False)`: run the CLI in `repo` (in this process; a real
    one with process=True), return the CompletedProcess (text)."""
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
    if TEST_BACKEND != "files":
        commit_sqlite_config(repo)
    return Bench.open(repo)  # opened afresh, as a new process would


def commit_sqlite_config(repo: Path) -> None:
    """config.yaml committed, so that `git commit -am` after a test edits config.yaml commits it, as it does on
    the files backend: `wb init --backend sqlite` commits it itself (issue 31); with `git.commit: off`, or
    where it could not, a person commits it."""
    run_git(repo, "add", ".workbench")
    if subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=repo).returncode:
        run_git(repo, "commit", "-q", "-m", "the workbench's config.yaml")


# wb's cache (in the git directory; named .cache/ here) holds per-machine memos (the parsed config, when a
# hand edit was seen); only its copies of the snapshots matter to correctness: human-edit detection compares
# state.md and board.json with them.
SNAPSHOT_COPIES = {".cache/state.json", ".cache/board.json"}


def hash_workbench(root: Path) -> dict[str, str]:
    """sha256 of every file under .workbench/, except the lock file (its content is a pid hint) and the
    per-machine memos in .cache/ other than the snapshot copies; on SQLite, also of every snapshot row, the event
    lines and the call records in the database (`sqlite:NAME`)."""
    base = root / ".workbench"
    out = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base).as_posix()
        if not path.is_file() or rel == ".lock" or (rel.startswith(".cache/") and rel not in SNAPSHOT_COPIES):
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    from workbench.model.layout import Paths
    from workbench.store import backend

    if backend.is_sqlite_config(base / "config.yaml"):  # and what the database holds (tests/stored.py)
        from tests.stored import storage

        with storage(root) as db, db.reading():
            rows = [*db.conn.execute("SELECT name, data FROM snapshots ORDER BY name")]
            rows += [("events", db.log.complete_bytes()), ("calls", db.calls_bytes())]
        out.update((f"sqlite:{name}", hashlib.sha256(bytes(data)).hexdigest()) for name, data in rows)
    for rel in sorted(SNAPSHOT_COPIES):  # wb's caches live in the git directory now, not in .workbench/
        path = Paths(root).cache / rel.removeprefix(".cache/")
        if path.is_file():
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

