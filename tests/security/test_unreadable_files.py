"""No accepted input makes a file unreadable (issue 14.3).

- `wb set next_action=$'\\uFFFE'` (or MCP `set_state`) exited 0, and in a fresh clone every command exited 5
  ("unacceptable character #xfffe"): a character YAML cannot carry is now written as a double-quoted escape,
  on the fast line-rewrite path and through ruamel alike.
- `wb note $'a\\rb'`: the note survives the round trip through state.md, so `wb replay --verify` passes.
- A Claude Code payload nested 500 levels deep ended in "internal error: RecursionError" and was dropped: it
  is clipped like a large one and recorded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests import stored
from tests.conftest import about_git, run_git
from workbench.api import Bench
from workbench.model.clip import CLIP_DEPTH
from workbench.model.layout import Paths

from .helpers import WB_ARGV, init_workbench, wb_ok

# what YAML cannot carry raw (YAML 1.2 §5.1), and the line breaks it folds (NEL, LS, PS), and the BOM
UNYAMLABLE = ["\ufffe", "\uffff", "a\ufffeb", "\x85", "a\x85b", "\u2028", "x\u2029y", "\x00", "\x1b[8m", "\x7f",
              "\x9b", "\ufeff", "tab\tin", "quote \" and \\ back", "\U0001F600\x01", "  lead", "trail  "]


def _fresh_clone(repo: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(repo), str(clone))
    return clone


@about_git  # the state read back in a fresh git clone
def test_a_value_yaml_cannot_carry_raw_reads_back_in_a_fresh_clone(repo: Path, tmp_path: Path) -> None:
    from workbench.model.statefile import parse

    init_workbench(repo)
    state = repo / ".workbench" / "state.md"
    for value in UNYAMLABLE:  # the fast path: one scalar line rewritten in place
        wb_ok(repo, "set", f"next_action={value}")
        assert parse(state.read_bytes()).data["next_action"] == value, (value, state.read_text())
    wb_ok(repo, "set", f"blockers={json.dumps(UNYAMLABLE)}")  # a list: through ruamel
    assert parse(state.read_bytes()).data["blockers"] == UNYAMLABLE
    wb_ok(repo, "set", f"next_action={UNYAMLABLE[0]}")
    clone = _fresh_clone(repo, tmp_path)
    status = json.loads(wb_ok(clone, "status", "--json").stdout)
    assert status["next_action"] == UNYAMLABLE[0] and status["blockers"] == UNYAMLABLE
    wb_ok(clone, "replay", "--verify")
    wb_ok(clone, "validate")
    wb_ok(clone, "note", "the clone still writes")


def test_set_state_through_mcp_reads_back_in_a_fresh_process(repo: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from tests.integrations.test_mcp import ok, with_client

    init_workbench(repo)

    async def body(session):  # type: ignore[no-untyped-def]
        return ok(await session.call_tool("set_state", {"changes": {"next_action": "\ufffe", "blockers": ["\x85"]}}))

    with_client(repo, body)
    shutil.rmtree(Paths(repo).cache)
    status = json.loads(wb_ok(repo, "status", "--json").stdout)
    assert status["next_action"] == "\ufffe" and status["blockers"] == ["\x85"]


@about_git  # the state read back in a fresh git clone
@pytest.mark.parametrize("text", ["a\rb", "a\r\nb", "\r\nlead", "x\r", "one\r\rtwo\n\rthree"])
def test_a_carriage_return_in_a_note_survives_the_round_trip(repo: Path, tmp_path: Path, text: str) -> None:
    init_workbench(repo)
    wb_ok(repo, "note", text)
    wb_ok(repo, "note", "after it")
    wb_ok(repo, "replay", "--verify")
    clone = _fresh_clone(repo, tmp_path)
    wb_ok(clone, "replay", "--verify")
    wb_ok(clone, "note", "in the clone")
    wb_ok(clone, "replay", "--verify")
    assert text.strip() in stored.snapshots(clone)[0].decode()


_TRICKY = st.sampled_from(list("\ufffe\uffff\x85\u2028\u2029\r\n\t\x00\x1b\x9b\x7f\ufeff\"'\\:#-[]{}&*!|> "))
TEXT = st.text(st.one_of(st.characters(blacklist_categories=("Cs",)), _TRICKY), max_size=30)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=TEXT, note=TEXT)
@example(value="\ufffe", note="a\rb")
@example(value="a\x85b", note="c\r\nd")
@example(value="\u2028", note="\r")
def test_any_string_set_or_noted_round_trips_through_state_md(bench: Bench, value: str, note: str) -> None:
    """Whatever a string holds (bar lone surrogates, refused at the door), `wb set` and `wb note` write a
    state.md that reads back, without wb's cache, to the same value, and replay from the log agrees."""
    from workbench.model.statefile import parse
    from workbench.ops.replay import replay
    from workbench.store.opening import discover

    bench.set_state({"next_action": value})  # the fast path
    assert parse(stored.snapshots(bench.wb.root)[0]).data["next_action"] == value
    bench.set_state({"blockers": [value], "next_action": value + "!"})  # ruamel
    assert parse(stored.snapshots(bench.wb.root)[0]).data["blockers"] == [value]
    if note.strip():
        bench.note(note)
    fresh = discover(bench.wb.root)
    shutil.rmtree(fresh.paths.cache, ignore_errors=True)
    loaded = fresh.load(detect_human=False, need_node=True).docs  # (SQLite: parsed from state.md's bytes)
    assert loaded.state["next_action"] == value + "!" and loaded.state["blockers"] == [value]
    if note.strip():
        assert note.strip() in loaded.body
    report = replay(discover(bench.wb.root))
    assert report.mismatches == [], report.mismatches


def _deep(levels: int) -> dict[str, object]:
    value: dict[str, object] = {"leaf": "x"}
    for _ in range(levels):
        value = {"a": value}
    return value


def _clipped_at(value: object) -> tuple[int, dict[str, object]]:
    """How many `{"a": …}` levels were kept, and what stands in for the rest."""
    levels = 0
    while isinstance(value, dict) and "a" in value:
        value, levels = value["a"], levels + 1
    assert isinstance(value, dict)
    return levels, value


@pytest.mark.parametrize("levels", [500, 5000])  # 5000: deeper than Python's own JSON parser goes
def test_a_deeply_nested_hook_payload_is_clipped_and_recorded(repo: Path, levels: int) -> None:
    init_workbench(repo)
    deep = '{"a":' * levels + '{"leaf":"x"}' + "}" * levels  # written by hand: json.dumps cannot go so deep
    post = ('{"hook_event_name":"PostToolUse","session_id":"s1","tool_name":"Bash",'
            '"tool_input":{"command":"ls"},"tool_response":' + deep + "}")
    for hook in (post, json.dumps({"hook_event_name": "Stop", "session_id": "s1", "stop_hook_active": False})):
        done = subprocess.run([*WB_ARGV, "hook", "claude-code"], cwd=repo, input=hook, text=True,
                              capture_output=True, timeout=120)
        assert done.returncode == 0 and done.stderr == "", done.stderr  # never "internal error: RecursionError"
    events = stored.events(repo)
    [last] = [e for e in events if e["type"] == "agent.tool_result"]
    levels, rest = _clipped_at(last["payload"]["result"])
    assert levels < CLIP_DEPTH and rest["truncated"] is True and rest["bytes"] > 400 * 6, rest
    wb_ok(repo, "replay", "--verify")
    wb_ok(repo, "validate")


def test_record_event_clips_any_depth(bench: Bench) -> None:
    for levels in (100, 500, 5000):
        event = bench.record_event("agent.tool_result", {"result": _deep(levels)}, commit=False)
        kept, rest = _clipped_at(event["payload"]["result"])
        assert kept < CLIP_DEPTH and rest["truncated"] is True, (levels, rest)
    assert len(bench.log(type="agent.tool_result")) == 3
