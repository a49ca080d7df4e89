"""The harness on the SQLite backend (issue 24): `wb run`, `wb resume`, `wb abort` and `wb demo` on a workbench
kept in SQLite, in a git repository (the database in .git/wb/) and without one (`wb init --no-git`: the shared
call journal in .workbench/.local/wb/). The same exit codes, lines and events as on files; the tool-call records
in the database's calls table, long outputs in .workbench/artifacts/; and a kill -9 of a real `wb run` at each
fault point between a tool call and its recorded result loses nothing acknowledged (every COMMIT that
returned), after which `wb resume` finishes the session without running the tool twice and `wb validate` and
`wb replay --verify` pass.

These tests make their SQLite workbenches themselves (`--backend sqlite`): they run the same in either pass of
the suite (WB_TEST_BACKEND)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import spawn_wb

KILLED = -signal.SIGKILL
COUNTER = [sys.executable, "-c", "import pathlib; p = pathlib.Path('counter.txt'); "
           "p.write_text(str(int(p.read_text()) + 1 if p.exists() else 1))"]
LONG = [sys.executable, "-c", "print('x' * 5000)"]  # more than a result holds inline: an artifact
PLAN = {"steps": [{"description": "bump the counter", "tool": "bump"}, {"description": "look at it"}]}


def env_for(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a user's `wb`: CI (it never prompts), a git identity, the repository's commands
    trusted (as the suite does), nothing of the tests' own WB_ settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WB_", "GIT_"))}
    env.update(HOME=str(home), CI="1", NO_COLOR="1", COLUMNS="100", GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@example.invalid", WB_TRUST_REPO_COMMANDS="1",
               WB_LOCK_TIMEOUT="20")
    env.update(extra)
    return env


class Bench:
    """A directory with a workbench, driven through real `wb` processes."""

    def __init__(self, path: Path, home: Path) -> None:
        self.path = path
        self.home = home

    def wb(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return spawn_wb(self.path, *args, env=env_for(self.home, **extra))

    def ok(self, code: int, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        proc = self.wb(*args, **extra)
        assert proc.returncode == code, f"wb {' '.join(args)}: exit {proc.returncode}, not {code}\n" \
                                        f"{proc.stdout}{proc.stderr}"
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def json(self, code: int, *args: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.ok(code, *args, "--json").stdout)
        return data

    @property
    def db(self) -> Path:
        nogit = self.path / ".workbench" / "workbench.sqlite3"
        return nogit if nogit.exists() else self.path / ".git" / "wb" / "workbench.sqlite3"

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        con = sqlite3.connect(self.db)
        try:
            return list(con.execute(sql))
        finally:
            con.close()

    def lines(self) -> list[bytes]:
        """The event lines in the database, oldest first."""
        return [bytes(line) for (line,) in self.rows("SELECT line FROM events ORDER BY seq")]

    def events(self, type_: str | None = None) -> list[dict[str, Any]]:
        return [e for e in map(json.loads, self.lines()) if type_ is None or e["type"] == type_]

    def counter(self) -> int:
        path = self.path / "counter.txt"
        return int(path.read_text()) if path.exists() else 0

    def consistent(self) -> None:
        self.ok(0, "validate")
        assert "snapshots match the event log" in self.ok(0, "replay", "--verify").stdout


def make(root: Path, home: Path, *, git: bool, backend: str = "sqlite",
         tools: dict[str, Any] | None = None) -> Bench:
    """A new workbench in `root`: in a git repository holding one commit (`git`), else `--no-git`; its
    config.yaml declares `tools` (by hand, as a person writes it) and `approvals: any` (an unattended run)."""
    root.mkdir(parents=True)
    bench = Bench(root, home)
    if git:
        for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "the user's work"]):
            subprocess.run(["git", *argv], cwd=root, env=env_for(home), check=True, capture_output=True)
    bench.ok(0, "init", "--backend", backend, *([] if git else ["--no-git"]))
    config = root / ".workbench" / "config.yaml"
    kept = [line for line in config.read_text().splitlines() if line.startswith(("storage:", "sqlite_path:"))]
    config.write_text("\n".join(["schema_version: 1", *kept, f"tools: {json.dumps(tools or {})}", "hooks: {}",
                                 "approvals: any"]) + "\n")
    (root / "plan.json").write_text(json.dumps(PLAN))
    return bench


# -- kill -9 between a tool call and its recorded result ---------------------------------------------------------

@dataclass(frozen=True)
class Kill:
    label: str
    fault: str
    at: str  # the transaction the kill is in or after: the one of "tool.call" or of "tool.result"
    kept: int  # events of that transaction kept: 0 (killed before its COMMIT) or 1 (after it)
    then: str  # what `wb resume` meets: "goes_on" (exit 0), "in_doubt" (exit 3: the outcome is unknown)
    by: str  # who the tool.result says gave the outcome: "wb" (it ran), "journal" (the shared journal had it),
    #          "human" (the in-doubt call's result was given)


KILLS = [
    # the tool.call's transaction is rolled back: the tool never ran, and the session runs it on resume
    Kill("tool.call-before-commit", "sqlite_before_commit", "tool.call", 0, "goes_on", "wb"),
    # the tool.call is committed, the call not yet claimed nor run: in doubt (wb cannot know it did not run)
    Kill("tool.call-after-commit", "sqlite_after_commit", "tool.call", 1, "in_doubt", "wb"),
    # the tool ran; its outcome reached nothing: in doubt, never run again unasked
    Kill("after_tool_run", "after_tool_run", "tool.call", 1, "in_doubt", "human"),
    # the outcome is in the shared journal only: the resume records it from there
    Kill("after_shared_result", "after_shared_result", "tool.call", 1, "goes_on", "journal"),
    # the tool.result's transaction is rolled back: the shared journal still has the outcome
    Kill("tool.result-before-commit", "sqlite_before_commit", "tool.result", 0, "goes_on", "journal"),
    # the tool.result is committed: the resume goes on after it
    Kill("tool.result-after-commit", "sqlite_after_commit", "tool.result", 1, "goes_on", "wb"),
    Kill("after_tool_result", "after_tool_result", "tool.result", 1, "goes_on", "wb"),
]
IN_GIT = {"after_tool_run", "after_shared_result", "tool.result-before-commit"}  # the shared journal in .git/wb


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, tuple[Bench, list[str]]]:
    """A configured workbench in git and one without, each with the event types a `wb run` of PLAN appends
    when nothing kills it (from a run in a copy): where the tool.call and the tool.result fall."""
    out = {}
    home = tmp_path_factory.mktemp("home")
    for git in (True, False):
        base = tmp_path_factory.mktemp("git" if git else "nogit")
        bench = make(base / "template", home, git=git, tools={"bump": {"argv": COUNTER, "mode": "safe_readonly",
                                                                        "timeout": 20}})
        ref = Bench(base / "ref", home)
        shutil.copytree(bench.path, ref.path, symlinks=True)
        ref.ok(0, "run", "count", "--plan", "plan.json")
        assert ref.counter() == 1
        out[git] = (bench, [e["type"] for e in ref.events()])
    return out


CASES = [pytest.param(k, git, id=f"{k.label}-{'git' if git else 'nogit'}")
         for git in (False, True) for k in KILLS if not git or k.label in IN_GIT]


@pytest.mark.parametrize(("kill", "git"), CASES)
def test_kill_9_between_a_tool_call_and_its_result_loses_nothing(
        templates: dict[bool, tuple[Bench, list[str]]], tmp_path: Path, kill: Kill, git: bool) -> None:
    template, ref_types = templates[git]
    bench = Bench(tmp_path / "repo", template.home)
    shutil.copytree(template.path, bench.path, symlinks=True)
    n0 = len(bench.lines())
    # each event of the run is one transaction, so the COMMITs before the one killed are counted by events
    at = ref_types.index(kill.at, n0)
    skip = str(at - n0) if kill.fault.startswith("sqlite_") else "0"
    proc = bench.wb("run", "count", "--plan", "plan.json", WB_FAULT=kill.fault, WB_FAULT_SKIP=skip)
    assert proc.returncode == KILLED, f"WB_FAULT={kill.fault} did not kill wb: {proc.returncode} {proc.stderr}"

    # nothing acknowledged is lost: every transaction that committed is there, whole, and nothing after it
    kept = bench.lines()
    assert [json.loads(line)["type"] for line in kept] == ref_types[:at + kill.kept]
    bench.consistent()
    ran = kill.label not in ("tool.call-before-commit", "tool.call-after-commit")
    assert bench.counter() == (1 if ran else 0)
    status = bench.json(0, "status")
    assert status["session"] is not None, "the killed session is still live"

    if kill.then == "in_doubt":
        doubt = bench.json(3, "resume")
        assert doubt["kind"] == "in_doubt" and doubt["payload"]["tool"] == "bump", doubt
        assert bench.counter() == (1 if ran else 0), "a call in doubt was run again unasked"
        if ran:
            bench.ok(0, "resume", "--result", '{"ok": true}')
        else:
            bench.ok(0, "resume", "--approve")  # it never ran: the person says run it
    else:
        bench.ok(0, "resume")
    assert bench.counter() == 1, "the tool ran once in all"
    after = bench.lines()
    assert after[:len(kept)] == kept, "the resume rewrote what was acknowledged"
    results = [e["payload"] for e in bench.events("tool.result")]
    assert len(results) == 1 and results[0]["by"] == kill.by, results
    assert bench.events()[-1]["type"] == "session.complete"
    status = bench.json(0, "status")
    assert status["session"] is None and status["pending"] is None, status
    bench.consistent()
    # the call's records are the database's; the shared journal is where the repository keeps wb's own files
    assert not (bench.path / ".workbench" / "calls.jsonl").exists()
    keys = {key for (key,) in bench.rows("SELECT key FROM calls")}
    assert results[0]["key"] in keys
    journal = bench.path / (".git/wb/calls.jsonl" if git else ".workbench/.local/wb/calls.jsonl")
    assert results[0]["key"] in journal.read_text()


# -- the same session on both backends: the same exit codes, lines and events ----------------------------------

ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def normal(text: str) -> str:
    return TS.sub("<ts>", ULID.sub("<id>", text))


def session_story(bench: Bench) -> list[tuple[int, str, str]]:
    """A session through every harness verb: an approval, a busy run, a human's tool, then another session
    aborted, and the refusals once nothing is live."""
    steps = {"steps": [{"description": "say hi", "tool": "hello"}, {"description": "write", "tool": "write"},
                       {"description": "deploy", "tool": "deploy", "args": {"env": "staging"}}]}
    (bench.path / "plan.json").write_text(json.dumps(steps))
    story = [("run", "ship it", "--plan", "plan.json"), ("run", "another", "--plan", "plan.json"),
             ("resume",), ("resume", "--approve"), ("resume", "--result", '{"ok": true}'),
             ("run", "again", "--plan", "plan.json"), ("abort", "--reason", "changed my mind"), ("abort",),
             ("resume",), ("run", "json", "--plan", "plan.json", "--json"), ("abort",)]
    out = []
    for argv in story:
        proc = bench.wb(*argv)
        assert "Traceback" not in proc.stderr, proc.stderr
        out.append((proc.returncode, normal(proc.stdout), normal(proc.stderr)))
    return out


def test_the_harness_says_and_records_the_same_on_both_backends(tmp_path: Path) -> None:
    tools = {"hello": {"argv": [sys.executable, "-c", "print('hi')"], "mode": "safe_readonly"},
             "write": {"argv": LONG, "mode": "mutating"}}
    home = tmp_path / "home"
    files = make(tmp_path / "files", home, git=True, backend="files", tools=tools)
    sqlite = make(tmp_path / "sqlite", home, git=True, tools=tools)
    nogit = make(tmp_path / "nogit", home, git=False, tools=tools)
    told = session_story(files)
    assert [code for code, _out, _err in told] == [3, 6, 2, 3, 0, 3, 0, 5, 5, 3, 0]
    assert told[2][2].startswith("wb: the session waits for approval of write"), told[2]
    assert session_story(sqlite) == told
    assert session_story(nogit) == told

    def kinds(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
        # the files backend records the hand edit of config.yaml before the run (config.edit); the SQLite one
        # detects no hand edit (docs/storage.md): the harness's events are what must agree
        return [(e["type"], e["actor"]) for e in events if e["type"] != "config.edit"]

    file_events = [json.loads(line) for line in (files.path / ".workbench" / "events.jsonl").read_text().splitlines()]
    assert kinds(sqlite.events()) == kinds(file_events)
    assert kinds(nogit.events()) == kinds(file_events)
    for bench in (sqlite, nogit):
        bench.consistent()
        # the long output of the mutating tool: a file in .workbench/artifacts/, named by the tool.result
        (result,) = [e["payload"]["result"] for e in bench.events("tool.result") if e["payload"]["index"] == 1]
        art = result["stdout_artifact"]
        assert (bench.path / art["path"]).read_text().startswith("x" * 5000)
        assert bench.rows("SELECT count(*) FROM calls")[0][0] == \
            len((files.path / ".workbench" / "calls.jsonl").read_text().splitlines())


# -- wb demo --------------------------------------------------------------------------------------------------

def test_the_demo_runs_on_sqlite(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    bench = Bench(target, tmp_path / "home")
    proc = spawn_wb(tmp_path, "demo", "--backend", "sqlite", str(target), env=env_for(bench.home))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for line in ("$ wb init --backend sqlite", "$ wb resume --approve", "snapshots match the event log",
                 "every step is a database transaction, not a git commit"):
        assert line in proc.stdout, line
    assert bench.db == target / ".git" / "wb" / "workbench.sqlite3"
    assert not (target / ".workbench" / "events.jsonl").exists() and not (target / ".workbench" / "state.md").exists()
    status = bench.json(0, "status")
    assert status["session"] is None and status["board"]["by_status"]["done"] == 1, status
    types = [e["type"] for e in bench.events()]
    for kind in ("session.start", "approval.granted", "tool.result", "session.complete", "handoff.write"):
        assert kind in types, kind
    log = subprocess.run(["git", "log", "--format=%s"], cwd=target, capture_output=True, text=True, check=True)
    # no commit of the state on SQLite: wb init's of config.yaml alone (issue 31: `git status` clean after it)
    assert log.stdout.splitlines() == ["wb: init (SQLite)", "The user's own work"]
    bench.consistent()


def test_demo_backend_must_be_files_or_sqlite(tmp_path: Path) -> None:
    proc = spawn_wb(tmp_path, "demo", "--backend", "postgres", str(tmp_path / "d"), env=env_for(tmp_path))
    assert proc.returncode == 2 and proc.stderr.strip() == "wb: --backend: 'postgres' is not files or sqlite"
    assert not (tmp_path / "d").exists()
