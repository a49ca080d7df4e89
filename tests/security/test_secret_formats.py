"""Issue 19, secrets by format and encoding through every door: hypothesis draws secrets of the common
formats (AWS key pairs, GitHub tokens, PEM private keys, JWTs, passwords in URLs, OpenAI/Anthropic `sk-` keys,
Slack, Stripe and Google keys, `*_TOKEN=` and `password:` assignments) — none listed in config.yaml — and a
value config.yaml's `redact` lists, in the encodings it travels in (as is, JSON-escaped, base64, URL-encoded,
one line of a PEM, CRLF and indented); each case goes through each door — a note, task titles, `wb set`, tool
output inline and as an artifact (and cut at max_output_bytes), a Claude Code hook payload, an acceptance
command's output, MCP arguments and the CLI's error line — and no secret material may reach events.jsonl,
state.md, board.json, calls.jsonl, artifacts, wb's records in the git directory or any commit (`git log -p
--no-textconv`). Every random part is 16+ characters drawn afresh, so finding it anywhere is a leak, never a
coincidence."""

from __future__ import annotations

import base64
import json
import os
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import call_wb, run_git
from tests.security.helpers import fresh, redact_configured

LISTED = "WB_TEST_DB_PASSWORD"
FEW = settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def _rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """n characters as a key generator makes them, from a seed hypothesis draws (its smallest example is then
    as random as any, not `AAAA…`, which no real key is); each call draws different ones."""
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64(rng: random.Random, n: int) -> str:
    return base64.b64encode(bytes(rng.randrange(256) for _ in range(n))).decode()


def _jwt_part(obj: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[tuple[str, list[str]]]]:
    """(the listed value, [(a piece of text, the secret material in it)]): one piece per format and encoding."""
    pieces: list[tuple[str, list[str]]] = []
    rng = random.Random(draw(st.integers(0, 2**32)))
    key_id, aws_secret = "AKIA" + _rand(rng, 16, UPPER), _rand(rng, 36) + "/+Zx"
    pieces.append((f"aws_access_key_id = {key_id}\naws_secret_access_key = {aws_secret}", [key_id[4:], aws_secret]))
    pieces.append((f"creds {key_id} {aws_secret} ok", [key_id[4:], aws_secret]))
    ghp = _rand(rng, 36)
    pieces.append((f"export GH=ghp_{ghp}", [ghp]))
    pat = _rand(rng, 22) + "_" + _rand(rng, 59)
    pieces.append((f"pat github_pat_{pat} used", [pat[:22], pat[23:]]))
    body = [_b64(rng, 48) for _ in range(4)] + [_b64(rng, 12)]
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----"
    core = [line.rstrip("=") for line in body[:4]]
    pieces.append((pem, core))
    pieces.append(("key:\n" + "\n".join("    " + line for line in pem.splitlines()), core))  # indented
    pieces.append((pem.replace("\n", "\r\n"), core))  # CRLF
    pieces.append((json.dumps({"key": pem}), core))  # JSON-escaped
    claims = {"sub": _rand(rng, 16), "role": "admin"}
    sig = _rand(rng, 43, ALNUM + "-_")
    jwt = f"{_jwt_part({'alg': 'HS256', 'typ': 'JWT'})}.{_jwt_part(claims)}.{sig}"
    pieces.append((f"Authorization: Bearer {jwt}", [jwt.split(".")[1], sig]))
    pieces.append((f"token {jwt} end", [jwt.split(".")[1], sig]))
    url_pw = _rand(rng, 18)
    pieces.append((f"DATABASE_URL=postgres://app:{url_pw}@db.internal:5432/prod", [url_pw]))
    pieces.append((f"clone https://bob:{url_pw}x@github.com/o/r.git", [url_pw]))
    sk = _rand(rng, 40)
    pieces.append((f"OPENAI sk-proj-{sk}", [sk]))
    ant = _rand(rng, 80, ALNUM + "-_")
    pieces.append((f"ANTHROPIC sk-ant-api03-{ant}", [ant[:40], ant[40:]]))
    slack = f"{draw(st.integers(10**10, 10**11))}-{_rand(rng, 24)}"
    pieces.append((f"slack xoxb-{slack}", [slack]))
    stripe = _rand(rng, 24)
    pieces.append((f"stripe sk_live_{stripe}", [stripe]))
    google = _rand(rng, 35, ALNUM + "-_")
    pieces.append((f"maps AIza{google}", [google]))
    token = _rand(rng, 24)
    pieces.append((f"DEPLOY_TOKEN={token}", [token]))
    pieces.append((f'{{"client_secret": "{token}x"}}', [token]))
    pieces.append((f"password: {token}y", [token]))
    # the value config.yaml lists, in its encodings (it is a password no pattern knows)
    listed = _rand(rng, 12) + "!#%&" + _rand(rng, 8)
    pieces += [(f"db {listed} up", [listed]),
               (json.dumps({"pw": listed + '"q'}), [listed]),
               (f"basic {base64.b64encode(listed.encode()).decode()} !", [base64.b64encode(listed.encode()).decode()
                                                                          .rstrip("=")]),
               (f"url pw={quote(listed, safe='')}&x=1", [quote(listed, safe=""), listed])]
    return listed, pieces


def one_line(pieces: list[tuple[str, list[str]]]) -> list[str]:
    """The pieces as single lines (a title, an argument): a multi-line piece JSON-escaped."""
    return [json.dumps(text)[1:-1] if "\n" in text or "\r" in text else text for text, _m in pieces]


def as_text(pieces: list[tuple[str, list[str]]]) -> str:
    """All pieces in one text, each on lines of its own, kept apart by a line no pattern runs over."""
    return "\n~~\n".join(text for text, _m in pieces) + "\n"


def material(pieces: list[tuple[str, list[str]]]) -> list[str]:
    return [m for _t, found in pieces for m in found]


@contextmanager
def listed_in_env(value: str) -> Iterator[None]:
    saved = os.environ.get(LISTED)
    os.environ[LISTED] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(LISTED, None)
        else:
            os.environ[LISTED] = saved


@pytest.fixture
def configured(bench: Any, repo: Path) -> Path:
    return redact_configured(repo, f"[{LISTED}]", "redact the database password")


def everything(repo: Path, **more: str) -> dict[str, str]:
    """Every file in .workbench/ and wb's records in the git directory, and every commit's patch and message."""
    out = {p.relative_to(repo).as_posix(): p.read_bytes().decode("utf-8", "replace")
           for base in (repo / ".workbench", repo / ".git" / "wb") if base.exists()
           for p in base.rglob("*") if p.is_file() and p.name != ".lock"}
    out["git log -p"] = run_git(repo, "log", "-p", "--all", "--format=%H%n%B", "--no-textconv")
    out.update(more)
    return out


def assert_no_material(pieces: list[tuple[str, list[str]]], texts: dict[str, str]) -> None:
    leaks = {(where, m) for where, text in texts.items() for m in material(pieces) if m in text}
    assert not leaks, f"secret material survived: {sorted(leaks)[:6]}"


def chunks(lines: list[str], size: int = 480) -> list[str]:
    out, cur = [], ""
    for line in lines:
        if cur and len(cur) + len(line) + 4 > size:
            out.append(cur)
            cur = ""
        cur = f"{cur} ~~ {line}" if cur else line
    return [*out, cur] if cur else out


@FEW
@given(case=cases())
def test_notes_titles_wb_set_and_the_cli_error_line(configured: Path, case: Any) -> None:
    listed, pieces = case
    with listed_in_env(listed):
        repo = fresh(configured)
        for text in [as_text(pieces)[:1900], as_text(pieces)[1900:]]:  # under the clip: every piece whole
            proc = call_wb(repo, "note", "--", text)
            assert proc.returncode == 0, proc.stderr
        for title in chunks(one_line(pieces)):
            proc = call_wb(repo, "task", "add", "--", title)
            assert proc.returncode == 0, proc.stderr
        proc = call_wb(repo, "set", "next_action=" + " ~~ ".join(one_line(pieces))[:3900])
        assert proc.returncode == 0, proc.stderr
        errors = ""
        for title in chunks(one_line(pieces)):
            proc = call_wb(repo, "task", "start", "--", title)  # refused: no such task, the line quotes what was typed
            assert proc.returncode != 0
            errors += proc.stderr
        assert_no_material(pieces, everything(repo, stderr=errors))


@FEW
@given(case=cases(), times=st.sampled_from([1, 400]))
def test_tool_output_inline_and_as_artifact(configured: Path, case: Any, times: int) -> None:
    from workbench.harness.tools import ToolBox, ToolSpec

    listed, pieces = case
    with listed_in_env(listed):
        repo = fresh(configured)
        src = repo.parent / "out.txt"
        src.write_text(as_text(pieces))
        box = ToolBox({}, repo, repo / ".workbench" / "artifacts", [LISTED])
        say = "import sys; t = open(sys.argv[1]).read(); print(t * int(sys.argv[2])); sys.stderr.write(t)"
        result = box.run(ToolSpec("say", (sys.executable, "-c", say, str(src), str(times))), {}, key="k:1")
        assert (times > 1) == ("stdout_artifact" in result)
        assert_no_material(pieces, everything(repo, result=json.dumps(result, ensure_ascii=False)))


@FEW
@given(case=cases(), into=st.integers(8, 30))
def test_a_secret_cut_by_max_output_bytes_is_redacted_whole(configured: Path, case: Any, into: int) -> None:
    """The cap falls `into` characters inside a secret: redacted before the cut, no head of it is kept."""
    from workbench.harness.tools import ToolBox, ToolSpec

    listed, pieces = case
    with listed_in_env(listed):
        repo = fresh(configured)
        box = ToolBox({}, repo, repo / ".workbench" / "artifacts", [LISTED])
        for text, found in pieces[:3] + pieces[-4:-3] + pieces[4:5]:
            secret = max(found, key=len)
            lead = "x" * 300 + "\n"
            at = text.index(secret)
            out = repo.parent / "cut.txt"
            out.write_text(lead + text)
            cap = len((lead + text[:at]).encode()) + min(into, len(secret) - 1)
            spec = ToolSpec("cut", (sys.executable, "-c", "import sys; sys.stdout.write(open(sys.argv[1]).read())",
                                    str(out)), max_output_bytes=cap)
            result = box.run(spec, {}, key="cut:1")
            art = result.get("stdout_artifact")  # inline when, redacted, the output fits under the cap
            kept = (repo / art["path"]).read_text() if art else result["stdout"]
            assert secret[:8] not in kept and secret[:into] not in kept, (secret, kept[-80:])
            assert_no_material([(text, found)], everything(repo, result=json.dumps(result)))


@FEW
@given(case=cases())
def test_a_claude_code_hook_payload(configured: Path, case: Any) -> None:
    listed, pieces = case
    with listed_in_env(listed):
        repo = fresh(configured)
        text = as_text(pieces)
        base = {"session_id": "s-1", "cwd": str(repo), "transcript_path": "/dev/null"}
        for hook in [{"hook_event_name": "SessionStart", "source": "startup"},
                     {"hook_event_name": "UserPromptSubmit", "prompt": text},
                     {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "u1",
                      "tool_input": {"command": text}, "tool_response": {"stdout": text, "stderr": text}},
                     {"hook_event_name": "Stop", "stop_hook_active": False}]:
            proc = call_wb(repo, "hook", "claude-code", input=json.dumps({**base, **hook}))
            assert proc.returncode == 0, proc.stderr
            assert_no_material(pieces, {"hook answer": proc.stdout + proc.stderr})
        assert_no_material(pieces, everything(repo))


@FEW
@given(case=cases())
def test_acceptance_output_failed_and_passed(configured: Path, case: Any) -> None:
    listed, pieces = case
    with listed_in_env(listed):
        repo = fresh(configured)
        src = repo.parent / "accept.txt"
        src.write_text(as_text(pieces))
        for code in (1, 0):
            cmd = f"{sys.executable} -c \"import sys; t = open('{src}').read(); print(t); " \
                  f"sys.stderr.write(t); sys.exit({code})\""
            proc = call_wb(repo, "task", "add", f"accept {code}", "--accept", cmd, "--json")
            assert proc.returncode == 0, proc.stderr
            tid = json.loads(proc.stdout)["task"]["id"] if "task" in json.loads(proc.stdout) else \
                json.loads(proc.stdout)["id"]
            assert call_wb(repo, "task", "start", tid).returncode == 0
            proc = call_wb(repo, "task", "done", tid)
            assert (proc.returncode == 0) == (code == 0), proc.stderr
            assert_no_material(pieces, {"done": proc.stdout + proc.stderr})
        assert_no_material(pieces, everything(repo))


@FEW
@given(case=cases())
def test_mcp_arguments(configured: Path, case: Any) -> None:
    pytest.importorskip("mcp")
    from workbench.integrations.mcp import Tools

    listed, pieces = case
    with listed_in_env(listed):
        repo = fresh(configured)
        tools = Tools(repo)
        answers = [tools.note(as_text(pieces)[:1900]),
                   tools.set_state({"next_action": " ".join(one_line(pieces))[:3900]})]
        answers += [tools.task_add(title) for title in chunks(one_line(pieces))]
        answers.append(tools.task_update(id=one_line(pieces)[0], action="start"))
        shown = {f"answer {i}": " ".join(c.text for c in a.content) for i, a in enumerate(answers)}
        assert_no_material(pieces, everything(repo, **shown))
