"""Helpers of the harness tests: `WbRepo` drives the real `wb` command line (CI=1, so it never prompts) in a
git repo with a workbench — through `main(argv)` in the test's process, or as a real process when a fault
point is armed — writes and commits `.workbench/config.yaml` (tools, hooks, planner), and reads the event
log, git and `wb status` from the outside."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import TEST_BACKEND, WB_ARGV, call_wb, spawn_wb  # noqa: F401 - WB_ARGV: for a real process

PY = sys.executable
STEP_COMMIT = "wb: step "


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WB_") or k == "WB_TRUST_REPO_COMMANDS"}
    env.update(CI="1", NO_COLOR="1", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME="Harness Test", GIT_AUTHOR_EMAIL="harness@example.invalid",
               GIT_COMMITTER_NAME="Harness Test", GIT_COMMITTER_EMAIL="harness@example.invalid",
               WB_LOCK_TIMEOUT="20")
    if TEST_BACKEND != "files":  # the SQLite pass: every `wb init` here keeps its workbench in SQLite
        env["WB_DEFAULT_BACKEND"] = TEST_BACKEND
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}"
    return proc.stdout


class WbRepo:
    """A git repository with a workbench, and the ways a test drives and inspects it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- driving ------------------------------------------------------------------------------------------
    def wb(self, *args: str, fault: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        if fault:  # the process kills itself at the fault point: a real one
            return spawn_wb(self.path, *args, env=_env(WB_FAULT=fault), timeout=timeout)
        return call_wb(self.path, *args, env=_env(), timeout=timeout)

    def wb_expect(self, code: int, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        proc = self.wb(*args, **kw)
        assert proc.returncode == code, (
            f"wb {' '.join(args)}: expected exit {code}, got {proc.returncode}\n"
            f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def wb_json(self, code: int, *args: str, **kw: Any) -> dict[str, Any]:
        proc = self.wb_expect(code, *args, "--json", **kw)
        data: dict[str, Any] = json.loads(proc.stdout)
        return data

    def configure(self, *, tools: dict[str, Any] | None = None, hooks: dict[str, Any] | None = None,
                  planner: dict[str, Any] | None = None, budget: dict[str, Any] | None = None,
                  **settings: Any) -> None:
        """Write config.yaml (JSON is YAML) and commit it, so the workbench starts clean. `approvals: any` unless
        the test says otherwise: these sessions run unattended, as a pipeline's (a person's approvals:
        tests/security/test_person_only.py)."""
        settings.setdefault("approvals", "any")
        config = self.path / ".workbench" / "config.yaml"
        kept = [line for line in config.read_text().splitlines() if line.startswith(("storage:", "sqlite_path:"))]
        lines = ["schema_version: 1", *kept, f"tools: {json.dumps(tools or {})}", f"hooks: {json.dumps(hooks or {})}"]
        lines += [f"{name}: {json.dumps(value)}" for name, value in settings.items()]
        if planner is not None:
            lines.append(f"planner: {json.dumps(planner)}")
        if budget is not None:
            lines.append(f"budget: {json.dumps(budget)}")
        config.write_text("\n".join(lines) + "\n")
        git(self.path, "add", ".workbench/config.yaml")
        git(self.path, "commit", "-q", "-m", "configure wb for the test")

    def write(self, name: str, text: str) -> Path:
        path = self.path / name
        path.write_text(text)
        return path

    def plan(self, steps: list[dict[str, Any]], name: str = "plan.json") -> str:
        self.write(name, json.dumps({"steps": steps}))
        return name

    # -- inspecting ---------------------------------------------------------------------------------------
    @property
    def sqlite(self) -> bool:
        return (b"storage: sqlite" in (self.path / ".workbench" / "config.yaml").read_bytes())

    def events(self, type_: str | None = None) -> list[dict[str, Any]]:
        """The event log, as stored: events.jsonl's lines, or on SQLite the events table's (the same lines)."""
        if self.sqlite:
            out = [json.loads(line) for line in self.event_lines()]
        else:
            lines = (self.path / ".workbench" / "events.jsonl").read_text().splitlines()
            out = [json.loads(line) for line in lines if line.strip()]
        return [e for e in out if type_ is None or e["type"] == type_]

    def event_lines(self) -> list[bytes]:
        """Every stored event line, oldest first, through the storage interface (either backend)."""
        from workbench.store.opening import discover

        wb = discover(self.path)
        try:
            return wb.log.complete_bytes().splitlines()
        finally:
            close = getattr(getattr(wb, "storage", None), "close", None)
            if close is not None:
                close()

    def board(self) -> dict[str, Any]:
        """board.json as stored: the file, or on SQLite the snapshots table's (the same bytes)."""
        if not self.sqlite:
            data: dict[str, Any] = json.loads((self.path / ".workbench" / "board.json").read_text())
            return data
        from workbench.store.opening import discover

        wb = discover(self.path)
        try:
            raw = wb.storage.read_snapshots()[1]  # type: ignore[attr-defined]
        finally:
            wb.storage.close()  # type: ignore[attr-defined]
        assert raw is not None, "no board in the database"
        loaded: dict[str, Any] = json.loads(raw)
        return loaded

    def calls(self) -> list[dict[str, Any]]:
        """The workbench's tool-call records: calls.jsonl, or on SQLite the calls table."""
        if self.sqlite:
            from workbench.store.opening import discover

            wb = discover(self.path)
            try:
                raw = wb.storage.calls_bytes()  # type: ignore[attr-defined]
            finally:
                wb.storage.close()  # type: ignore[attr-defined]
        else:
            path = self.path / ".workbench" / "calls.jsonl"
            raw = path.read_bytes() if path.exists() else b""
        return [json.loads(line) for line in raw.splitlines() if line.strip()]

    def last_session_steps(self) -> list[dict[str, Any]]:
        """The plan of the last session, with each step's final status, rebuilt from the event log."""
        commits = self.events("plan.commit")
        assert commits, "no plan.commit event in the log"
        sid = commits[-1]["session"]
        steps = [dict(s, status="pending") for s in commits[-1]["payload"]["steps"]]
        for ev in self.events("step.end"):
            if ev["session"] == sid:
                steps[ev["payload"]["index"]]["status"] = ev["payload"]["status"]
        return steps

    def status(self) -> dict[str, Any]:
        proc = self.wb_expect(0, "status", "--json")
        data: dict[str, Any] = json.loads(proc.stdout)
        return data

    def git_log(self) -> list[str]:
        return git(self.path, "log", "--format=%s").splitlines()

    def workbench_dirty(self) -> str:
        return git(self.path, "status", "--porcelain", "--", ".workbench")

    def uncommitted(self) -> str:
        """What of the workbench is not durably recorded, "" when all is. Files: the workbench changes git does
        not have (`git status -- .workbench`). SQLite: a tracked file of `.workbench/` changed (config.yaml), or
        the database still held by an unfinished write (a fresh connection cannot take its write lock at once)."""
        if not self.sqlite:
            return self.workbench_dirty()
        import sqlite3

        from workbench.store.opening import discover

        problems = git(self.path, "status", "--porcelain", "--untracked-files=no", "--", ".workbench")
        wb = discover(self.path)
        path = wb.storage.path  # type: ignore[attr-defined]
        wb.storage.close()  # type: ignore[attr-defined]
        con = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            con.execute("BEGIN IMMEDIATE")
            con.execute("ROLLBACK")
        except sqlite3.OperationalError as err:
            problems += f"{path}: a write is still open ({err})\n"
        finally:
            con.close()
        return problems

    def assert_consistent(self) -> None:
        """`wb validate` and `wb replay --verify` pass, and every workbench change is committed (`uncommitted`)."""
        self.wb_expect(0, "validate")
        self.wb_expect(0, "replay", "--verify")
        left = self.uncommitted()
        assert left == "", f"uncommitted workbench changes:\n{left}"


def py_tool(code: str, *extra: str) -> list[str]:
    """An argv that runs a Python snippet (no shell anywhere)."""
    return [PY, "-c", code, *extra]


def terminal_env(**extra: str) -> dict[str, str]:
    """The test environment as a person at a terminal has it: no CI, TERM set."""
    env = _env(**extra)
    env.pop("CI", None)
    env.update(TERM="xterm", COLUMNS="100")
    return env


class Terminal:
    """`wb` on a real pseudo-terminal, as its controlling terminal (so Ctrl-C reaches it as the kernel sends
    it): wait for a prompt, type an answer, press Ctrl-C, collect the exit code and what it printed."""

    def __init__(self, repo: Path, *args: str, timeout: float = 120) -> None:
        import pty

        self.master, slave = pty.openpty()
        self.timeout = timeout
        self.out = b""

        def controlling_tty() -> None:
            import fcntl
            import termios

            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen([*WB_ARGV, *args], cwd=repo, env=terminal_env(), stdin=slave, stdout=slave,
                                     stderr=slave, close_fds=True, preexec_fn=controlling_tty)
        os.close(slave)

    def _read(self, wait: float) -> bool:
        import select

        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the terminal is closed (the process has gone)
            return False
        self.out += data
        return bool(data)

    def expect(self, text: str) -> None:
        import time

        deadline = time.monotonic() + self.timeout
        while text.encode() not in self.out:
            assert time.monotonic() < deadline, f"{text!r} never appeared; the terminal shows: {self.text}"
            if not self._read(0.2) and text.encode() not in self.out:
                raise AssertionError(f"wb ended before {text!r}; the terminal shows: {self.text}")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def confirm(self) -> None:
        """Type back the code wb shows to prove a person (ops/person.require_person), as a person does."""
        import re
        import time

        deadline = time.monotonic() + self.timeout
        while not re.search(rb"confirms by typing (\d{4}): ", self.out):
            assert time.monotonic() < deadline, f"wb never asked for a code; the terminal shows: {self.text}"
            if not self._read(0.2):
                raise AssertionError(f"wb ended before it asked for a code; the terminal shows: {self.text}")
        code = re.findall(rb"confirms by typing (\d{4}): ", self.out)[-1]
        self.type(code.decode() + "\n")

    def ctrl_c(self) -> None:
        self.type("\x03")

    def finish(self) -> int:
        import time

        deadline = time.monotonic() + self.timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.2)
        while self._read(0.05):
            pass
        os.close(self.master)
        return self.proc.wait(timeout=10)

    @property
    def text(self) -> str:
        return self.out.replace(b"\r\n", b"\n").decode(errors="replace")
