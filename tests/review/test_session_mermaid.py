"""`wb log --mermaid`: a real `wb run` session's path through the state machine, with its two yields and who
answered them, as a ```mermaid stateDiagram-v2 block GitHub draws — the transitions in order, counted, and
every label escaped so that no text can become Mermaid syntax."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.harness.helpers import WbRepo, git, py_tool
from workbench.review.mermaid import STATES, session_mermaid

STATE = r"(?:\[\*\]|" + "|".join(STATES) + r"|S_\w+)"
# a label: plain characters and Mermaid entity codes only (no quote, bracket, colon, semicolon, <, >, %, newline)
LABEL = r"(?:[A-Za-z0-9 _.,/+=*@()'!?-]|#\d+;)*"
GRAMMAR = [
    re.compile(r"    %% .*"),
    re.compile(rf"    {STATE} --> {STATE}(?: : {LABEL})?"),
    re.compile(rf"    note right of {STATE}"),
    re.compile(rf"        {LABEL}"),
    re.compile(r"    end note"),
]
EDGE = re.compile(rf"    ({STATE}) --> ({STATE})(?: : ({LABEL}))?$")


def check_syntax(block: str) -> list[tuple[str, str, list[int]]]:
    """The block checked line by line against the subset of stateDiagram-v2 it may use (and notes closed);
    returns each edge (from, to, the ordinals of the times it was taken)."""
    lines = block.rstrip("\n").split("\n")
    assert lines[0] == "```mermaid" and lines[1] == "stateDiagram-v2" and lines[-1] == "```", block
    edges: list[tuple[str, str, list[int]]] = []
    in_note = False
    for line in lines[2:-1]:
        assert any(g.fullmatch(line) for g in GRAMMAR), f"not stateDiagram-v2 as wb writes it: {line!r}"
        if line.startswith("    note right of "):
            assert not in_note, "a note opened inside a note"
            in_note = True
        elif line == "    end note":
            assert in_note, "end note without a note"
            in_note = False
        elif line.startswith("        "):
            assert in_note, f"note text outside a note: {line!r}"
        elif m := EDGE.fullmatch(line):
            assert not in_note, "an edge inside a note"
            ordinals = re.match(r"[\d, ]*", m.group(3) or "").group(0)  # type: ignore[union-attr]
            edges.append((m.group(1), m.group(2), [int(n) for n in re.findall(r"\d+", ordinals)]))
    assert not in_note, "a note left open"
    return edges


def _repo(tmp_path: Path) -> WbRepo:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# a project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial commit")
    repo = WbRepo(path)
    repo.wb_expect(0, "init")
    return repo


def test_a_run_with_two_yields_draws_its_transitions_in_order_and_who_answered(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    nothing = repo.wb_expect(1, "log", "--mermaid")
    assert nothing.stderr.startswith("wb: no harness session") and len(nothing.stderr.splitlines()) == 1
    repo.configure(tools={"hello": {"argv": py_tool("print('hi')"), "mode": "safe_readonly"},
                          "write": {"argv": py_tool("print('w')"), "mode": "mutating"}})
    plan = repo.plan([{"description": "say hi", "tool": "hello"},
                      {"description": 'write "the" [file]; then -->X', "tool": "write"},
                      {"description": "deploy", "tool": "deploy"},
                      {"description": "decide"}])
    first = repo.wb_json(3, "run", "ship it", "--plan", plan)
    assert first["kind"] == "approval"
    assert repo.wb_json(3, "resume", "--approve")["kind"] == "tool_result"
    repo.wb_expect(0, "resume", "--result", '{"ok": true}')
    session = repo.events("session.start")[-1]["session"]

    block = repo.wb_expect(0, "log", "--mermaid").stdout  # the newest session
    assert block == repo.wb_expect(0, "log", "--session", session, "--mermaid").stdout
    edges = check_syntax(block)

    # the transitions, in order: every one the log holds, each edge with the ordinals it was taken at
    taken = [(e["payload"]["from"], e["payload"]["to"]) for e in repo.events("harness.transition")
             if e["session"] == session]
    drawn = sorted((n, src, dst) for src, dst, ordinals in edges if src != "[*]" and dst != "[*]"
                   for n in ordinals)
    assert [(src, dst) for _n, src, dst in drawn] == taken
    assert [n for n, _src, _dst in drawn] == list(range(1, len(taken) + 1))
    assert edges[0] == ("[*]", "IDLE", []) and edges[-1] == ("DONE", "[*]", [])
    assert "    REFLECTING --> EXECUTING : 5, 8, 11 (3 times) next step" in block
    assert ("EXECUTING", "AWAITING_TOOL", [3, 6, 9]) in edges

    # the yields, on the state the session waited in, with how and by whom each was answered
    note = block[block.index("    note right of AWAITING_TOOL"):block.index("    end note")]
    assert "yield 1" in note and "approval approval_required#58;write" in note
    assert "answered at event" in note and "approve by agent (script)" in note
    assert "yield 2" in note and "tool_result tool_result_required#58;deploy" in note
    assert "result by agent (script)" in note


def _event(seq: int, type_: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "type": type_, "session": "S1", "actor": "agent", "via": "mcp", "payload": payload}


def test_a_hostile_reason_or_state_cannot_become_mermaid_syntax() -> None:
    hostile = 'x"] --> DONE\nclick A call evil() ; %% \x1b[31m \u202e <b>#1; end note'
    events = [
        _event(1, "session.start", {"goal": hostile}),
        _event(2, "harness.transition", {"from": "IDLE", "to": "PLANNING", "reason": hostile}),
        _event(3, "harness.transition", {"from": "PLANNING", "to": 'EVIL"]\n', "reason": None}),
        _event(4, "session.pause", {"reason": hostile, "yield": {"yield_id": "Y1", "kind": "pause",
                                                                 "reason": hostile}}),
    ]
    block = session_mermaid(events)
    edges = check_syntax(block)
    assert [(a, b) for a, b, _n in edges] == [("[*]", "IDLE"), ("IDLE", "PLANNING"), ("PLANNING", "S_EVIL___")]
    assert "\x1b" not in block and "\u202e" not in block and "\n\n" not in block
    assert "#92;e#91;31m" in block and "#92;u202e" in block  # \e[31m and \u202e, as the terminal shows them
    assert "waiting for an answer" in block
    lines = block.split("\n")  # only wb's own line closes a note: the hostile "end note" is inside a longer line
    assert sum(line.strip() == "end note" for line in lines) == sum(line.startswith("    note ") for line in lines)


PARSER = Path(__file__).with_name("mermaid_parse.mjs")


def _mermaid_parse(block: str) -> dict[str, Any]:
    """What Mermaid's own parser reads in `block` (tests/review/mermaid_parse.mjs): skipped unless
    WB_MERMAID_MODULES names a node_modules with mermaid and jsdom, and node is on PATH (or WB_NODE)."""
    modules = os.environ.get("WB_MERMAID_MODULES")
    node = os.environ.get("WB_NODE") or shutil.which("node")
    if not modules or not node or not (Path(modules) / "mermaid").is_dir():
        pytest.skip("Mermaid's parser is not installed: `npm install --prefix DIR mermaid jsdom`, then "
                    "WB_MERMAID_MODULES=DIR/node_modules")
    proc = subprocess.run([node, str(PARSER)], input=block, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "WB_MERMAID_MODULES": modules})
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_mermaids_own_parser_reads_the_states_and_edges_wb_wrote_and_no_others() -> None:
    hostile = 'x"] --> DONE\nclick A call evil() ; %% \x1b[31m \u202e <b>#1; end note\n}'
    path = [("IDLE", "PLANNING", "run"), ("PLANNING", "EXECUTING", hostile),
            ("EXECUTING", "AWAITING_TOOL", "step s1 needs [x]"), ("AWAITING_TOOL", "REFLECTING", None),
            ("REFLECTING", "EXECUTING", "next step"), ("EXECUTING", "REFLECTING", None),
            ("REFLECTING", "DONE", "goal_met")]
    events = [_event(1, "session.start", {"goal": hostile})]
    events += [_event(n, "harness.transition", {"from": a, "to": b, "reason": r})
               for n, (a, b, r) in enumerate(path, start=2)]
    events.insert(4, _event(99, "approval.requested", {"yield": {"yield_id": "Y", "kind": "approval",
                                                                 "reason": hostile}}))
    events.insert(5, _event(100, "session.resume", {"yield_id": "Y", "action": "approve"}))
    block = session_mermaid(events)
    check_syntax(block)
    parsed = _mermaid_parse(block)
    assert parsed["ok"], parsed
    assert parsed["type"] == "stateDiagram"
    assert set(parsed["states"]) == {"root_start", "root_end", *STATES}
    assert parsed["relations"] == [["root_start", "IDLE"]] + [[a, b] for a, b, _r in path] + [["DONE", "root_end"]]
