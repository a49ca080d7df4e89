"""Issue 19, parsers an attacker can stall: a file a clone pushes (state.md, board.json, events.jsonl) or a
request an MCP client sends is read in bounded time and memory, and refused in one line naming the file and
the cap, never expanded, never read whole, never left unanswered.

Each command runs as a real process under a memory limit (RLIMIT_AS) and a timeout: a hang or a blow-up is a
TimeoutExpired or a MemoryError here, not a slow test."""

from __future__ import annotations

import json
import resource
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import stored
from tests.conftest import WB_ARGV, about_files, run_git

from .helpers import marker

LIMIT_BYTES = 1536 * 1024 * 1024  # the address space a wb process may use here (Python + git: ~300 MB)
TIMEOUT = 20


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def bounded(cwd: Path, *argv: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`argv` as a real process under the memory limit; TimeoutExpired fails the test."""
    return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL, preexec_fn=_limited)


def wb(cwd: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return bounded(cwd, *WB_ARGV, *args, input=input)


def refused_in_one_line(proc: subprocess.CompletedProcess[str], *words: str) -> str:
    assert proc.returncode != 0, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wb: "), proc.stderr[-2000:]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# an alias chain ("billion laughs") whose last key repeats: ruamel's duplicate-key error expanded every alias
ALIASES = "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
HOSTILE_STATE = ("---\nschema_version: 1\nstatus: idle\na: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", "
                 "\"lol\", \"lol\", \"lol\"]\n" + ALIASES + "i: 1\n---\n\n# Decision log\n")


@pytest.fixture
def hostile_state(bench: Any, repo: Path) -> Path:
    (repo / ".workbench" / "state.md").write_text(HOSTILE_STATE)
    run_git(repo, "commit", "-qam", "a clone's state.md")
    return repo


@about_files  # hostile bytes written into the files by hand
@pytest.mark.parametrize("args", [["status"], ["validate"], ["task", "add", "x"], ["note", "n"], ["diff"]])
def test_an_alias_chain_with_a_duplicate_key_is_refused_at_once(hostile_state: Path, args: list[str]) -> None:
    assert len(HOSTILE_STATE.encode()) < 1000
    proc = wb(hostile_state, *args)
    if args == ["validate"]:
        assert proc.returncode != 0 and "duplicate key" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        return
    if args == ["diff"]:  # wb diff shows what it can; it must just end, quickly, within the memory limit
        assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        return
    refused_in_one_line(proc, "state.md", "duplicate key")


@about_files  # hostile bytes written into the files by hand
def test_the_hooks_and_mcp_answer_with_the_hostile_state(hostile_state: Path) -> None:
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(hostile_state), "source": "startup"}
    proc = wb(hostile_state, "hook", "claude-code", input=json.dumps(payload))
    assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    pytest.importorskip("mcp")
    answers = mcp_exchange(hostile_state, [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "status", "arguments": {}}}])
    assert answers[0]["id"] == 2 and answers[0]["result"]["isError"], answers
    assert "duplicate key" in answers[0]["result"]["content"][0]["text"]


@about_files  # hostile bytes written into the files by hand
def test_git_merge_of_the_hostile_state_ends(hostile_state: Path, repo: Path) -> None:
    run_git(repo, "checkout", "-q", "-b", "theirs")
    (repo / ".workbench" / "state.md").write_text(HOSTILE_STATE.replace("i: 1", "i: 2"))
    run_git(repo, "commit", "-qam", "theirs")
    run_git(repo, "checkout", "-q", "main")
    (repo / ".workbench" / "state.md").write_text(HOSTILE_STATE.replace("i: 1", "i: 3"))
    run_git(repo, "commit", "-qam", "ours")
    proc = bounded(repo, "git", "merge", "--no-edit", "theirs")  # runs wb's merge driver on state.md
    assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]


def test_yaml_duplicate_keys_and_alias_bombs_in_process() -> None:
    from workbench.errors import Refused
    from workbench.model import yamlio

    text = HOSTILE_STATE.split("---\n")[1]
    for load in (yamlio.load_safe, yamlio.load_round_trip):
        with pytest.raises(Refused, match="duplicate key 'i'"):
            load(text, "state.md")
        with pytest.raises(Refused, match="200000 values"):
            load(text.replace("i: 1\n", ""), "state.md")
    assert yamlio.load_safe("a: &x {p: 1}\nb: *x\n", "f") == {"a": {"p": 1}, "b": {"p": 1}}  # aliases still read


@about_files  # hostile bytes written into the files by hand
def test_a_long_log_line_is_refused_in_linear_time(bench: Any, repo: Path) -> None:
    log = repo / ".workbench" / "events.jsonl"
    with open(log, "ab") as fh:  # a 40 MB line at the end, as a clone could push it
        fh.write(b'{"seq": 99, "payload": "' + b"x" * (40 * 1024 * 1024) + b'"}\n')
    line = refused_in_one_line(wb(repo, "status"), "events.jsonl", "cap")
    assert str(4 * 1024 * 1024) in line


@about_files  # hostile bytes written into the files by hand
def test_a_long_torn_tail_is_skipped_in_linear_time(bench: Any, repo: Path) -> None:
    from workbench.store.eventlog import EventLog

    log = repo / ".workbench" / "events.jsonl"
    with open(log, "ab") as fh:  # 64 MB after the last newline: a torn append, never acknowledged
        fh.write(b"y" * (64 * 1024 * 1024))
    proc = bounded(repo, sys.executable, "-c", "import sys; from pathlib import Path; "
                   "from workbench.store.eventlog import EventLog; print(EventLog(Path(sys.argv[1])).tail().seq)",
                   str(log))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout) == EventLog(log).tail().seq >= 1


@about_files  # hostile bytes written into the files by hand
def test_a_huge_board_is_refused_by_its_size(bench: Any, repo: Path) -> None:
    board = repo / ".workbench" / "board.json"
    with open(board, "r+b") as fh:  # 1 GB, sparse: no disk is used, but a whole read would take 1 GB
        fh.truncate(1024 * 1024 * 1024)
    for args in (["status"], ["task", "add", "x"]):
        refused_in_one_line(wb(repo, *args), "board.json", "cap")
    proc = wb(repo, "validate")
    assert proc.returncode != 0 and "cap" in proc.stdout + proc.stderr
    # no input leaves the user with no command that helps: doctor names it once, --fix rebuilds the board from
    # the log and keeps the found one aside (a rename: the 1 GB is never read, by wb or by git's status)
    proc = wb(repo, "doctor")
    assert proc.returncode == 1 and "snapshot_overlong" in proc.stdout and "invalid" not in proc.stdout, proc.stdout
    assert proc.stdout.count("over the cap") == 1, proc.stdout
    proc = wb(repo, "doctor", "--fix")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = list((repo / ".git" / "wb" / "set-aside").glob("*/board.json"))
    assert [k.stat().st_size for k in kept] == [1024 * 1024 * 1024]
    assert wb(repo, "task", "add", "after the fix").returncode == 0
    assert wb(repo, "doctor").returncode == 0
    assert run_git(repo, "status", "--porcelain", "--", ".workbench").strip() == ""


@about_files  # hostile bytes written into the files by hand
def test_a_duplicate_acceptance_key_in_board_json_is_refused(bench: Any, repo: Path) -> None:
    ran = marker()
    proc = wb(repo, "task", "add", "ship", "--accept", "true", "--json")
    assert proc.returncode == 0, proc.stderr
    board = repo / ".workbench" / "board.json"
    evil = f"{sys.executable} -c \"open('{ran}', 'w')\""
    text = board.read_text().replace('"acceptance": ["true"]',
                                     f'"acceptance": ["true"], "acceptance": [{json.dumps(evil)}]')
    assert text != board.read_text()
    board.write_text(text)
    run_git(repo, "commit", "-qam", "a clone's board.json")
    for args in (["task", "start", "T-001"], ["task", "done", "T-001"], ["status"]):
        refused_in_one_line(wb(repo, *args), "board.json", "duplicate key 'acceptance'")
    assert not ran.exists()


@about_files  # hostile bytes written into the files by hand
def test_a_duplicate_key_in_an_event_is_refused(bench: Any, repo: Path) -> None:
    from workbench.model.jsonl import line_hash

    log = repo / ".workbench" / "events.jsonl"
    last = log.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    prev = json.loads(last)
    forged = (f'{{"schema_version":1,"seq":{prev["seq"] + 1},"id":"01KBFZZZZZZZZZZZZZZZZZZZZZ","ts":"{prev["ts"]}",'
              f'"type":"note.add","actor":"human","session":null,"payload":{{"text":"a"}},"payload":{{"text":"b"}},'
              f'"prev":"{line_hash(last)}"}}\n')
    with open(log, "a") as fh:
        fh.write(forged)
    refused_in_one_line(wb(repo, "status"), "events.jsonl", "duplicate key 'payload'")


# -- MCP: every request gets an answer ------------------------------------------------------------------------
def mcp_exchange(repo: Path, requests: list[dict[str, Any] | bytes]) -> list[dict[str, Any]]:
    """Initialize, then send each request and read one answer to it (within TIMEOUT seconds each)."""
    proc = subprocess.Popen([*WB_ARGV, "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_limited)
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any] | bytes) -> None:
        assert proc.stdin is not None
        proc.stdin.write((message if isinstance(message, bytes) else json.dumps(message).encode()) + b"\n")
        proc.stdin.flush()

    def answer() -> dict[str, Any]:
        assert proc.stdout is not None
        ready, _w, _x = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "no answer within the timeout"
        return json.loads(proc.stdout.readline())

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "attacker", "version": "0"}}})
        assert answer()["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        out = []
        for request in requests:
            send(request)
            out.append(answer())
        return out
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_every_mcp_request_gets_an_answer(bench: Any, repo: Path) -> None:
    pytest.importorskip("mcp")
    deep = (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"note","arguments":{"text":'
            + b"[" * 200 + b"1" + b"]" * 200 + b"}}}")
    surrogate = (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"note",'
                 b'"arguments":{"text":"a\\ud800"}}}')
    answers = mcp_exchange(repo, [
        deep, surrogate, b"{not json", b"[1, 2]",
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": 5},
        {"jsonrpc": "2.0", "id": {"an": "object"}, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "status", "arguments": {}}}])
    assert [a.get("id") for a in answers] == [2, 3, None, None, 6, None, 8], answers
    assert all("error" in a for a in answers[:6]), answers
    assert "nested more than 64" in answers[0]["error"]["message"]
    assert "surrogate" in answers[1]["error"]["message"]
    assert answers[2]["error"]["code"] == -32700
    assert "result" in answers[6]  # and the server still works
    assert "a\\ud800" not in stored.event_bytes(repo).decode()


def test_mcp_answers_after_a_huge_line_and_a_deep_nesting(bench: Any, repo: Path) -> None:
    """First round, issue 30.6: MCP took 61 s to answer after a 200 MB garbage line and 20 s after a request
    nested 100,000 deep. Each is answered with its JSON-RPC error within the exchange's timeout, and the server
    answers the next request (here 64 MiB of garbage: the reader's cost is linear, the size only makes it slow)."""
    pytest.importorskip("mcp")
    deep = (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"note","arguments":{"text":"x",'
            b'"about":' + b"[" * 100_000 + b"]" * 100_000 + b"}}}")
    answers = mcp_exchange(repo, [
        b"x" * (64 << 20), deep,
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "status", "arguments": {}}}])
    assert [a.get("id") for a in answers] == [None, None, 4], [str(a)[:200] for a in answers]
    assert answers[0]["error"]["code"] == answers[1]["error"]["code"] == -32700
    assert "result" in answers[2] and answers[2]["result"]["isError"] is False
