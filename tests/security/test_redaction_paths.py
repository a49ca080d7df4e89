"""Issue 14.1, every path: whatever secrets `redact` names — nested in each other, overlapping, repeated,
adjacent, one a substring of another — none of their values survives on any path that carries a value to disk,
to a commit or back to the caller: events, state.md, board.json, commit messages (Bench writes), calls.jsonl and
tool stdout/stderr inline and as artifacts (content and name), a Claude Code hook payload, MCP answers and
errors, the CLI's error line, and `wb diff` in all three formats.

Secrets are drawn from Greek letters, which nothing wb writes of its own contains, so "the value is not in the
file" is exactly the property; the password part of a URL secret holding another secret is Cyrillic, found
nowhere else, so not one letter of it may survive (replacing the inner secret first would leave it behind)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import stored
from tests.conftest import about_files, run_git
from tests.security.helpers import fresh, redact_configured

NAMES = ["WB_SECRET_A", "WB_SECRET_B", "WB_SECRET_C", "WB_SECRET_D"]
GREEK = "αβγδεζ"
CYRILLIC = "жзийкл"  # only ever inside a secret (the password of a URL): no letter of it may survive anywhere
FEW = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


@st.composite
def secrets_and_text(draw: st.DrawFn) -> tuple[list[str], str]:
    secrets = draw(st.lists(st.text(GREEK, min_size=2, max_size=6), min_size=1, max_size=2, unique=True))
    # always one inside another (DB_USER inside DATABASE_URL), the inner one listed and set first
    secrets.append("db://" + secrets[0] + ":" + draw(st.text(CYRILLIC, min_size=2, max_size=5)) + "@h")
    if draw(st.booleans()) and len(secrets[0]) > 2:  # two that share characters
        secrets.append(secrets[0][1:] + draw(st.text(GREEK, min_size=1, max_size=3)))
    secrets = list(dict.fromkeys(secrets))[:len(NAMES)]
    filler = st.one_of(st.text(GREEK + " ", max_size=3), st.sampled_from(["deploy", " to ", "x", ""]))
    order = draw(st.permutations(secrets))  # each secret at least once, some repeated or adjacent
    extra = draw(st.lists(st.sampled_from(secrets), max_size=3))
    pieces = [p for s in [*order, *extra] for p in (draw(filler), s)]
    return secrets, "t " + "".join(pieces).strip() + " end"


@contextmanager
def environment(secrets: list[str]) -> Iterator[None]:
    """The secrets in the environment under the names config.yaml lists, shortest first (the worst order)."""
    ordered = sorted(secrets, key=len)
    saved = {n: os.environ.get(n) for n in NAMES}
    for name in NAMES:
        os.environ.pop(name, None)
    os.environ.update(dict(zip(NAMES, ordered, strict=False)))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def assert_clean(secrets: list[str], **texts: str) -> None:
    leaks = {where: s for where, text in texts.items() for s in [*secrets, *CYRILLIC] if s in text}
    assert not leaks, f"secrets survived: {leaks}"


@pytest.fixture
def configured(bench: Any, repo: Path) -> Path:
    return redact_configured(repo, json.dumps(NAMES), "redact four names")


def recorded(repo: Path, commits: int) -> dict[str, str]:
    wbdir = repo / ".workbench"
    out = {p.relative_to(repo).as_posix(): p.read_bytes().decode("utf-8", "replace")
           for p in wbdir.rglob("*") if p.is_file() and p.name != ".lock" and ".cache" not in p.parts}
    out["commits"] = run_git(repo, "log", "-p", f"-{commits}", "--format=%B", "--no-textconv")
    return out


@FEW
@given(secrets_and_text())
def test_bench_writes_events_state_board_and_commit_messages(configured: Path, case: tuple[list[str], str]) -> None:
    from workbench.api import Bench

    secrets, text = case
    with environment(secrets):
        bench = Bench.open(fresh(configured))
        task = bench.add_task(text, acceptance=[f"test {text}"])
        bench.set_task(task["id"], {"description": text})
        bench.note(text)
        bench.set_state({"next_action": text, "blockers": [text]})
        assert_clean(secrets, **recorded(configured, 4))


@FEW
@given(secrets_and_text(), st.sampled_from([1, 3000]))
def test_tool_output_inline_and_artifact_and_its_name(configured: Path, case: tuple[list[str], str],
                                                      times: int) -> None:
    from workbench.harness.tools import ToolBox, ToolSpec

    secrets, text = case
    with environment(secrets):
        box = ToolBox({}, fresh(configured), configured / ".workbench" / "artifacts", NAMES)
        say = ("import os, sys; t = sys.argv[1]; print((t + ' ' + os.environ['WB_SECRET_A']) * int(sys.argv[2]));"
               " sys.stderr.write(t)")
        spec = ToolSpec("say", (sys.executable, "-c", say, "{text}", str(times)))
        result = box.run(spec, {"text": text}, key=f"s:{secrets[-1]}:1")
        artifacts = {p.name: p.read_text() for p in (configured / ".workbench" / "artifacts").glob("*.txt")}
        assert (times > 1) == bool(artifacts)
        assert_clean(secrets, result=json.dumps(result, ensure_ascii=False), names=" ".join(artifacts),
                     **artifacts)


@FEW
@given(secrets_and_text())
def test_a_claude_code_payload(configured: Path, case: tuple[list[str], str]) -> None:
    from workbench.api import Bench
    from workbench.integrations.agenthooks import record_claude_code

    secrets, text = case
    with environment(secrets):
        hook = {"hook_event_name": "PostToolUse", "session_id": "s-1", "tool_name": "Bash", "tool_use_id": "u1",
                "tool_input": {"command": text, text: [text, {"nested": text * 3}]},
                "tool_response": {"stdout": text * 200, "stderr": text, "interrupted": False}}
        record_claude_code(Bench.open(fresh(configured)), hook)
        assert_clean(secrets, log=stored.event_bytes(configured).decode())


@FEW
@given(secrets_and_text())
def test_mcp_answers_and_errors(configured: Path, case: tuple[list[str], str]) -> None:
    pytest.importorskip("mcp")
    from workbench.integrations.mcp import Tools

    secrets, text = case
    with environment(secrets):
        tools = Tools(fresh(configured))
        answers = [tools.note(text), tools.set_state({"next_action": text}),
                   tools.task_update(id=text, action="start"), tools.task_add(text), tools.status()]
        shown = [a if isinstance(a, str) else " ".join(c.text for c in a.content) for a in answers]
        assert_clean(secrets, **{f"answer {i}": s for i, s in enumerate(shown)})


@about_files  # state.md edited by hand
@FEW
@given(case=secrets_and_text())
def test_the_cli_error_line_and_wb_diff(configured: Path, case: tuple[list[str], str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli.main import main

    secrets, text = case
    with environment(secrets):
        fresh(configured)
        capsys.readouterr()
        main(["-C", str(configured), "task", "start", text])  # refused, quoting what was typed
        main(["-C", str(configured), "task", "add", text])
        err = capsys.readouterr().err
        assert "[redacted]" in err, err
        state = configured / ".workbench" / "state.md"
        before = state.read_text()
        state.write_text(before + f"\n### 2026-12-01T00:00:00.000Z · human\n{text}\n")  # a hand edit
        shown = {}
        for fmt in ("text", "json", "markdown"):
            main(["-C", str(configured), "diff", "--format", fmt])
            shown[fmt] = capsys.readouterr().out
        assert "[redacted]" in shown["json"]
        assert_clean(secrets, stderr=err, **shown)
