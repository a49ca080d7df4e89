"""issue 22 item 4: `wb prime`, the context a cold agent starts from, within 1,500 cl100k tokens at 1,000 tasks,
and the agent hooks that use it: SessionStart (additionalContext, also after a compaction), PreCompact (it
commits, and adds nothing: Claude Code takes no context from it) and the optional Stop hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

LIMIT = 1500  # tokens at 1,000 tasks (issue 22)
LONG = "a title far longer than any person writes, " * 8  # ~350 characters: prime clips, never grows with it


def tokens(text: str) -> int:
    bpe = pytest.importorskip("bpe_openai", reason="the [test] extra's tokenizer (it ships cl100k_base)")
    return len(bpe.get_encoding("cl100k_base").encode(text))


def big_board(repo: Path, wb) -> None:  # type: ignore[no-untyped-def]
    """1,000 tasks by one `wb task import`: 10 epics, 590 done, the rest todo (every 7th waits on the one
    before), priorities 0-4, assignees; then some started, claimed and blocked, long reasons, stale memory."""
    tasks = []
    for i in range(1, 1001):
        task = {"id": f"T-{i:03d}", "title": f"Epic {i} {LONG}" if i <= 10 else f"Task {i} {LONG}"}
        if i > 10:
            task.update(parent=f"T-{i % 10 + 1:03d}", priority=i % 5, labels=["scale"], assignee=f"dev-{i % 4}")
            if i <= 600:
                task["status"] = "done"
            elif i % 7 == 0:
                task["depends_on"] = [f"T-{i - 1:03d}"]
        tasks.append(task)
    source = repo.parent / "tasks.json"
    source.write_text(json.dumps(tasks))
    assert wb(repo, "init").returncode == 0
    r = wb(repo, "task", "import", str(source))
    assert r.returncode == 0, r.stderr
    for tid in ("T-601", "T-603", "T-604", "T-605", "T-606", "T-608"):
        assert wb(repo, "task", "start", tid).returncode == 0
    for tid in ("T-608", "T-601", "T-603", "T-604", "T-605"):  # every task shown in progress claimed too
        assert wb(repo, "task", "claim", tid, "--agent", "claude-1").returncode == 0
    assert wb(repo, "set", f"next_action=Ask ops about the keys: {LONG}").returncode == 0
    assert wb(repo, "task", "block", "T-605", "--reason", f"ops: {LONG}").returncode == 0  # stale: shown dropped
    assert wb(repo, "task", "start", "T-605").returncode == 0
    for tid in ("T-609", "T-610", "T-611", "T-612", "T-613", "T-614"):
        assert wb(repo, "task", "block", tid, "--reason", f"waits for ops: {LONG}").returncode == 0
    for n in range(7):
        assert wb(repo, "note", "--about", "app.py", f"decision {n}: {LONG}").returncode == 0
    for n in range(6):  # blockers of no task: open risks
        assert wb(repo, "set", f"blockers+=ops {n}: {LONG}").returncode == 0


def test_prime_at_1000_tasks_fits_the_budget_and_says_where_to_start(repo, wb, git) -> None:
    big_board(repo, wb)
    (repo / "app.py").write_text("print('changed')\n")
    git(repo, "commit", "-qam", "change the app")
    (repo / "scratch.txt").write_text("not committed\n")  # an open risk of the handoff: a dirty tree
    assert wb(repo, "handoff").returncode == 0  # its next action and risks are part of what prime says

    r = wb(repo, "prime")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    count = tokens(text)
    assert count <= LIMIT, (count, text)
    lines = text.splitlines()
    assert "data read from the repository's files" in lines[0]
    # in progress and by whom; the active task first
    assert "In progress (6):" in lines and any(line.startswith("- T-605 ") and "[active]" in line for line in lines)
    assert any(line.startswith("- T-601 ") and 'assignee "dev-1", claimed by "claude-1" until ' in line
               for line in lines)
    assert "- … and 1 more: `wb task list --status in_progress`" in lines
    # the ready queue by priority, capped, with the count of the rest
    data = json.loads(wb(repo, "prime", "--json").stdout)
    ready = data["ready"]
    assert len(ready["tasks"]) == 8 and ready["total"] > 300
    assert [t["priority"] for t in ready["tasks"]] == sorted(t["priority"] for t in ready["tasks"])
    assert f"- … and {ready['total'] - 8} more: `wb task list --ready`" in lines
    assert f"Ready ({ready['total']}, by priority, 0 first):" in lines
    # blockers, the last handoff's next action, risks, stale memory, the commands to go on
    assert "Blocked (6):" in lines and data["blocked"]["total"] == 6
    assert data["blocked"]["waiting"]["total"] > 0
    assert any(line.startswith("Last handoff (.workbench/handoff.md): ") for line in lines)
    risks = data["risks"]  # the blockers of no task, then the handoff's (a task's blocker is said with it)
    assert risks["total"] == 7 and [r["kind"] for r in risks["items"]] == ["blocker"] * 5
    assert "dirty_tree" in [r["kind"] for r in _handoff_risks(repo)]
    assert "Open risks (7):" in lines and "- … and 2 more: `wb handoff` and .workbench/handoff.md" in lines
    assert data["stale_memory"]["total"] == 7 and len(data["stale_memory"]["items"]) == 3
    assert any(line.startswith("Stale memory (7)") for line in lines)
    assert lines[-1].startswith("Go on with: `wb task next --start`")
    assert any(line.startswith("Dropped as stale: the next action set by hand") for line in lines)
    assert max(len(line) for line in lines) < 700  # every value clipped


def _handoff_risks(repo: Path) -> list[dict]:
    return list(json.loads((repo / ".workbench" / "handoff.json").read_text())["risks"])


def _hook(wb, repo: Path, event: str, process: bool = False, **fields) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    """`wb hook claude-code` with the payload Claude Code sends (a real process with `process`)."""
    payload = {"hook_event_name": event, "session_id": "s-1", "cwd": str(repo), **fields}
    r = wb(repo, "hook", "claude-code", input=json.dumps(payload), process=process)
    return r.returncode, r.stdout, r.stderr


def test_the_hooks_answer_with_prime_and_the_stop_hook_is_off_by_default(repo, wb, git) -> None:
    assert wb(repo, "init").returncode == 0
    for args in (("Epic: the parser",), ("Lexer", "--parent", "T-001"), ("Grammar", "--parent", "T-001",
                 "--priority", "3"), ("Tables", "--parent", "T-001", "--priority", "0"), ("Elsewhere",)):
        assert wb(repo, "task", "add", *args).returncode == 0
    assert wb(repo, "task", "start", "T-002").returncode == 0

    for source in ("startup", "compact"):  # after a compaction too: SessionStart with source compact
        code, out, err = _hook(wb, repo, "SessionStart", process=source == "startup", source=source)
        assert (code, err) == (0, "")
        answer = json.loads(out)["hookSpecificOutput"]
        assert answer["hookEventName"] == "SessionStart"
        context = answer["additionalContext"]
        assert context.splitlines()[0].startswith("This repository keeps your working state")
        assert '- T-002 "Lexer" [active]' in context and '- P0 T-004 "Tables"' in context
        prime = wb(repo, "prime").stdout
        assert context.splitlines()[1:-2] == prime.splitlines()[1:-2]  # wb prime, as of before this event
    assert _hook(wb, repo, "PreCompact", trigger="auto") == (0, "", "")  # commits; no output Claude Code refuses
    assert _hook(wb, repo, "Stop", stop_hook_active=False) == (0, "", "")  # off by default: the agent may stop

    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + "prime: {stop_hook: true}\n")
    git(repo, "add", ".workbench/config.yaml")  # (a SQLite workbench's config.yaml may not be tracked yet)
    git(repo, "commit", "-qm", "keep the agent on its epic")
    code, out, err = _hook(wb, repo, "Stop", process=True, stop_hook_active=False)
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert answer["decision"] == "block"
    reason = answer["reason"]
    assert 'epic T-001 "Epic: the parser"' in reason and "2 ready task(s)" in reason
    assert "`wb task start T-004`" in reason and "T-005" not in reason  # its epic's, by priority; not others'
    assert _hook(wb, repo, "Stop", stop_hook_active=True) == (0, "", "")  # once per stop: never a loop

    assert wb(repo, "task", "done", "T-002").returncode == 0  # no task of the epic in hand: nothing to keep to
    assert _hook(wb, repo, "Stop", stop_hook_active=False) == (0, "", "")
