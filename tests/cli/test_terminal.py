"""wb on a real terminal (a pseudo-terminal): progress bars on long work, colour and NO_COLOR, shell completion,
`wb status` at a glance — and, through pipes, none of the terminal's trimmings (CONTRACT §5: output without a
TTY has no colour and no spinners; long work shows progress on a TTY).

Each command runs as a subprocess with the pty slave as its terminal; the test reads the master until the
process has exited and its output is drained. Nothing here measures time.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

from tests import stored
from tests.conftest import WB_ARGV, make_repo, run_git

ROOT = Path(__file__).resolve().parents[2]
EVENTS = 30_000
LEGACY_LINES = 20_000
TIMEOUT = 300  # seconds a command may take on a loaded machine before the test gives up on it
SGR = re.compile(rb"\x1b\[([0-9;]*)m")
HIDE_CURSOR = b"\x1b[?25l"  # what rich writes when a live progress display starts
LONG_WORK = {  # command → (what its bar says, the last words it prints when the work is sound)
    "replay": ("replaying the event log", b"snapshots match the event log"),
    "validate": ("validating the event log", b"ok: config.yaml, state.md, board.json"),
    "doctor": ("checking the event log", b"healthy: nothing to repair"),
}


# -- running wb on a terminal and through pipes --------------------------------------------------------------
def terminal_env(**extra: str) -> dict[str, str]:
    """The test environment (conftest's isolation) as a terminal user has it: TERM=xterm, no CI, colours on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WB_") or k == "WB_TRUST_REPO_COMMANDS"}
    for name in ("CI", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "LINES"):
        env.pop(name, None)
    env.update(TERM="xterm", COLUMNS="100")
    env.update(extra)
    return env


def _drain(fds: dict[int, list[bytes]], proc: subprocess.Popen[bytes]) -> None:
    """Read every fd until its end; once the process has exited, stop at the end or after 10 quiet seconds
    (a grandchild that kept the terminal open must not hang the test)."""
    deadline = time.monotonic() + TIMEOUT
    quiet_since: float | None = None
    while fds:
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"wb did not finish within {TIMEOUT}s")
        ready, _, _ = select.select(list(fds), [], [], 0.5)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError as err:  # EIO: the slave side is closed for good (Linux)
                if err.errno != errno.EIO:
                    raise
                data = b""
            if data:
                fds[fd].append(data)
                quiet_since = None
            else:
                del fds[fd]
        if not ready and proc.poll() is not None:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 10:
                break


def on_terminal(repo: Path, *args: str, env: dict[str, str] | None = None,
                stdout_pipe: bool = False) -> tuple[int, bytes, bytes]:
    """Run wb with a pty as its terminal (stdin, stderr, and stdout unless `stdout_pipe`). Returns the exit code,
    what reached the terminal (CRLF turned back into LF) and what reached the stdout pipe."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen([*WB_ARGV, *args], cwd=repo, env=env or terminal_env(), stdin=slave,
                            stdout=subprocess.PIPE if stdout_pipe else slave, stderr=slave, close_fds=True)
    os.close(slave)
    tty: list[bytes] = []
    piped: list[bytes] = []
    fds = {master: tty}
    if proc.stdout is not None:
        fds[proc.stdout.fileno()] = piped
    try:
        _drain(fds, proc)
        code = proc.wait(timeout=TIMEOUT)
    finally:
        os.close(master)
        if proc.stdout is not None:
            proc.stdout.close()
    return code, b"".join(tty).replace(b"\r\n", b"\n"), b"".join(piped)


def through_pipes(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The same command with no terminal anywhere (but TERM=xterm and no CI: only the missing TTY says no)."""
    return subprocess.run([*WB_ARGV, *args], cwd=repo, env=env or terminal_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=TIMEOUT)


def colour_codes(out: bytes) -> list[bytes]:
    """The SGR sequences that set a colour (foreground, background, 256-colour or true colour, or back to the
    default one); bold, dim, underline and reset are not colours."""
    found = []
    for match in SGR.finditer(out):
        params = [int(p) for p in match.group(1).split(b";") if p]
        if any(30 <= p <= 39 or 40 <= p <= 49 or 90 <= p <= 97 or 100 <= p <= 107 for p in params):
            found.append(match.group())
    return found


def plain(out: bytes) -> str:
    return re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", out).decode()


# -- workbenches ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workbench whose log holds 30,000 events, made once for the module by bench/_gen.py (seconds, not
    minutes: it writes the events through wb's encoders, then one real commit)."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:  # conftest's isolation is per test; this fixture outlives one
        for name, value in {"HOME": str(home), "GIT_AUTHOR_NAME": "Test Author",
                            "GIT_AUTHOR_EMAIL": "author@example.invalid", "GIT_COMMITTER_NAME": "Test Committer",
                            "GIT_COMMITTER_EMAIL": "committer@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}.items():
            mp.setenv(name, value)
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "WB_FAULT", "WB_LOCK_TIMEOUT"):
            mp.delenv(name, raising=False)
        repo = make_repo(tmp_path_factory.mktemp("big") / "repo")
        subprocess.run([*WB_ARGV, "init"], cwd=repo, check=True, capture_output=True, timeout=TIMEOUT)
        gen = subprocess.run([sys.executable, str(ROOT / "bench" / "_gen.py"), str(repo), "state", str(EVENTS)],
                             capture_output=True, text=True, timeout=TIMEOUT)
        assert gen.returncode == 0, gen.stderr
    return repo


def legacy_repo(path: Path) -> Path:
    """A workbench of wb 0.0.x (the migration fixture) whose pre-release log holds 20,000 lines."""
    repo = make_repo(path)
    shutil.copytree(ROOT / "tests" / "migrate" / "fixtures" / "v0" / ".workbench", repo / ".workbench")
    line = '{{"ts": "2026-03-25T14:30:00Z", "type": "note", "payload": {{"n": {}}}}}\n'
    (repo / ".workbench" / "events.jsonl").write_text("".join(line.format(n) for n in range(LEGACY_LINES)))
    run_git(repo, "add", ".workbench")
    run_git(repo, "commit", "-q", "-m", "a workbench of wb 0.0.x")
    return repo


@pytest.fixture
def waiting_repo(bench: Any, repo: Path) -> Path:
    """A workbench with an active task, a next action, a blocker, and a session waiting for an approval."""
    config = repo / ".workbench" / "config.yaml"
    tool = {"argv": [sys.executable, "-c", "print('written')"], "mode": "mutating"}
    stored.write_config(config, f"schema_version: 1\ntools: {json.dumps({'write': tool})}\n")
    run_git(repo, "add", ".workbench/config.yaml")
    run_git(repo, "commit", "-q", "-m", "configure wb for the test")
    bench.add_task("Ship the parser")
    bench.add_task("Write the docs")
    bench.start_task("T-001")
    bench.block_task("T-002", "waiting for the API key")
    bench.set_state({"next_action": "Review the parser's error messages"})
    (repo / "plan.json").write_text(json.dumps({"steps": [{"description": "write the file", "tool": "write"}]}))
    env = terminal_env(CI="1", NO_COLOR="1")
    r = subprocess.run([*WB_ARGV, "run", "ship it", "--plan", "plan.json", "--max-turns", "7",
                        "--max-tool-calls", "9"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 3, r.stderr  # yielded: waiting for the approval
    return repo


# -- progress on long work -----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", sorted(LONG_WORK))
def test_long_work_draws_a_progress_bar_on_a_terminal(big_repo: Path, command: str) -> None:
    code, out, _ = on_terminal(big_repo, command)
    description, last_words = LONG_WORK[command]
    assert code == 0, out
    assert description.encode() in out, out[-2000:]
    assert HIDE_CURSOR in out and b"\x1b[?25h" in out, "the live display hides the cursor and shows it again"
    assert b"100%" in out, "work that ends well ends with a full bar"
    assert last_words in out


@pytest.mark.parametrize("command", sorted(LONG_WORK))
def test_long_work_through_pipes_prints_no_bar_and_no_escape(big_repo: Path, command: str) -> None:
    r = through_pipes(big_repo, command)
    description, last_words = LONG_WORK[command]
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    assert b"\x1b" not in r.stdout and description.encode() not in r.stdout
    assert last_words in r.stdout


@pytest.mark.parametrize("command", ["validate", "doctor"])
def test_json_stays_byte_identical_with_a_bar_on_stderr(big_repo: Path, command: str) -> None:
    code, tty, stdout = on_terminal(big_repo, command, "--json", stdout_pipe=True)
    piped = through_pipes(big_repo, command, "--json")
    assert code == 0 and piped.returncode == 0, tty
    assert stdout == piped.stdout
    json.loads(stdout)
    assert LONG_WORK[command][0].encode() in tty, "the bar went to the terminal on stderr"


def test_no_color_keeps_the_bar_and_drops_its_colours(big_repo: Path) -> None:
    code, coloured, _ = on_terminal(big_repo, "replay")
    assert code == 0 and colour_codes(coloured), "rich colours the bar on a colour terminal"
    code, out, _ = on_terminal(big_repo, "replay", env=terminal_env(NO_COLOR="1"))
    assert code == 0, out
    assert b"replaying the event log" in out and HIDE_CURSOR in out
    assert colour_codes(out) == []


@pytest.mark.parametrize("env", [{"CI": "1"}, {"TERM": "dumb"}], ids=["CI", "TERM=dumb"])
def test_no_bar_in_ci_or_on_a_dumb_terminal(big_repo: Path, env: dict[str, str]) -> None:
    code, out, _ = on_terminal(big_repo, "validate", env=terminal_env(**env))
    assert code == 0, out
    assert b"validating the event log" not in out and HIDE_CURSOR not in out
    assert out.startswith(b"ok: ")


def test_migrate_draws_a_progress_bar_on_a_terminal_and_none_through_pipes(tmp_path: Path) -> None:
    repo = legacy_repo(tmp_path / "tty")
    code, out, _ = on_terminal(repo, "migrate")
    assert code == 0, out[-2000:]
    assert b"migrating .workbench/" in out and HIDE_CURSOR in out and b"100%" in out
    assert b"migrated .workbench/" in out

    repo = legacy_repo(tmp_path / "pipes")
    r = through_pipes(repo, "migrate", "--json")
    assert r.returncode == 0, r.stderr
    assert r.stderr == b"" and b"\x1b" not in r.stdout
    assert json.loads(r.stdout)["changed"] is True


def forward_only(calls: list[tuple[int, int]]) -> None:
    assert calls, "progress was never reported"
    assert len({total for _done, total in calls}) == 1, "the total stays put"
    assert [done for done, _ in calls] == sorted(done for done, _ in calls), "the bar never moves back"
    assert all(0 <= done <= total for done, total in calls)


def test_the_core_reports_progress_throttled_and_forward_only(big_repo: Path, tmp_path: Path) -> None:
    from workbench.api import validate_workbench
    from workbench.migrate import apply as migrate
    from workbench.ops.doctor import examine
    from workbench.store.workbench import Workbench

    calls: list[tuple[int, int]] = []
    assert validate_workbench(Workbench(big_repo), lambda *c: calls.append(c)) == []
    forward_only(calls)
    assert calls == [(n, EVENTS) for n in range(0, EVENTS, 5000)]

    calls.clear()
    assert examine(Workbench(big_repo), progress=lambda *c: calls.append(c)).healthy
    forward_only(calls)
    assert calls[0] == (0, 2 * EVENTS) and len(calls) == 2 * EVENTS // 5000  # the chain, then the schemas

    calls.clear()
    report = migrate.migrate(legacy_repo(tmp_path / "repo"), progress=lambda *c: calls.append(c))
    assert report.changed and report.commit
    forward_only(calls)
    # two plans (before the lock and under it), each over the log in four weighted passes
    assert calls[0] == (0, 2 * migrate.PASSES * LEGACY_LINES)


# -- colour, completion, status ------------------------------------------------------------------------------
def test_no_color_on_a_terminal_means_no_colour_in_status_and_task_list(waiting_repo: Path) -> None:
    no_color = terminal_env(NO_COLOR="1")
    for args in (["status"], ["task", "list"]):
        code, out, _ = on_terminal(waiting_repo, *args, env=no_color)
        assert code == 0, out
        assert colour_codes(out) == [], (args, out)
        assert b"T-001" in out
    # without NO_COLOR, `wb status` colours what needs a human; `wb task list` has no colours to drop (its
    # header is bold, nothing more), so only the NO_COLOR side is asserted for it
    code, out, _ = on_terminal(waiting_repo, "status")
    assert code == 0, out
    assert colour_codes(out), out
    code, out, _ = on_terminal(waiting_repo, "task", "list")
    assert code == 0 and b"\x1b[1m" in out, "rich draws the table on a terminal"


def test_show_completion_prints_a_bash_script_for_wb(repo: Path) -> None:
    # typer (0.25, with shellingham) takes the shell from the process tree, not from the argument: run wb from
    # bash, as a user types it (`; exit` keeps bash alive as wb's parent instead of exec'ing wb)
    argv = ["/bin/bash", "-c", '"$@"; exit $?', "bash", *WB_ARGV, "--show-completion", "bash"]
    r = subprocess.run(argv, cwd=repo, env=terminal_env(SHELL="/bin/bash"), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    script = r.stdout.decode()
    assert "_WB_COMPLETE=complete_bash" in script
    assert re.search(r"^complete .*-F _wb_completion wb$", script, re.MULTILINE), script


def test_status_on_a_terminal_shows_where_to_start_at_a_glance(waiting_repo: Path) -> None:
    code, out, _ = on_terminal(waiting_repo, "status")
    assert code == 0, out
    fields = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in plain(out).splitlines() if line.strip())
    assert fields["status"] == "awaiting_tool"
    assert fields["active task"] == "T-001 Ship the parser (in_progress)"
    assert fields["next action"] == "Review the parser's error messages"
    assert fields["blockers"] == "T-002: waiting for the API key"
    assert fields["waiting for"] == "approval_required:write: wb resume --approve | wb resume --deny"
    assert re.fullmatch(r"turns 1/7 · tool calls 0/9 · seconds \d+", fields["budget"]), fields["budget"]
    assert fields["board"].startswith("0 todo · 1 in progress · 1 blocked")
