"""PreToolUse denies what is a person's to run (issue 19): an agent's shell ran `wb task done --force --actor
human`, `wb task set … acceptance=`, `script -qc 'wb resume --approve'` and a python one-liner that wrote
board.json, and all were allowed. Each payload below is the one Claude Code (or Codex) documents — PreToolUse,
tool_name Bash, tool_input.command — through the real `wb hook` process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import hash_workbench
from tests.integrations.hookfixtures import events, fixture, hook, ok, status_porcelain, track_config

PERSON_ONLY = [
    "wb task done T-001 --force --actor human",
    "wb task set T-001 'acceptance=[\"true\"]' --actor human",
    "wb task set T-001 'acceptance=[\"true\"]'",
    "wb task set T-001 scope='{\"forbidden\": []}'",
    "wb task done T-001 --force",
    "script -qc 'wb resume --approve' /dev/null",
    "script -qc 'wb note \"looks good\"' /dev/null",  # wb reads a terminal as a person's
    "unbuffer wb task done T-001",
    "expect -c 'spawn wb resume; interact'",
    "wb resume --deny",
    "wb trust",
    "wb untrust",
    "wb serve --port 0 --act",  # issue 32: the page a person acts from
    "env WB_X=1 wb resume --approve",
    "sudo -u dev wb trust",
    "nohup timeout 5 setsid wb task done T-001 --force &",
    "echo T-001 | xargs wb task done --force",
    "bash -c 'wb resume --approve'",
    "sh -c \"cd src && wb -C .. task done T-001 --force\"",
    "eval \"wb trust\"",
    "python -m workbench.cli.main task done T-001 --force",
    "python3 -m workbench resume --approve",
    "$(which wb) resume --approve",
    "\"$(command -v wb)\" untrust",
    "/home/dev/.venv/bin/wb task done T-001 --force",
    "wb --debug -C . resume --approve",
    "pytest -q && wb note done --actor=human",
    # issue 30: the CI opt-in is a person's too — an agent setting it asks wb to run untrusted commands
    "WB_TRUST_REPO_COMMANDS=1 wb task done T-001",
    "export WB_TRUST_REPO_COMMANDS=1; wb task done T-001",
    "env WB_TRUST_REPO_COMMANDS=1 pytest -q",
]

INTERPRETER_WRITES = [
    "python3 -c \"open('.workbench/board.json','w').write('{}')\"",
    "python3 - <<'EOF'\nimport pathlib\npathlib.Path('.workbench/state.md').write_text('---\\n')\nEOF",
    "node -e \"require('fs').writeFileSync('.workbench/board.json', '{}')\"",
    "perl -e 'open(F, \">\", \".workbench/board.json\"); print F 1'",
    "ruby -e 'File.write(\".workbench/board.json\", \"{}\")'",
    "cat > .workbench/state.md <<EOF\nstatus: completed\nEOF",
    "echo '{}' | tee .workbench/board.json",
    "dd if=/tmp/b of=.workbench/board.json",
    "truncate -s 0 .workbench/events.jsonl",
    "ln -sf /tmp/board.json .workbench/board.json",
    "git checkout HEAD~3 -- .workbench/board.json",
    "cd .workbench && sed -i 's/todo/done/' board.json",
]

ALLOWED = [
    "wb abort --reason 'wrong plan'",  # the agent may abort; it is recorded as the agent's
    "wb task done T-001",
    "wb task set T-001 title='Parse the config file'",
    "wb resume --result '{\"ok\": true}'",
    "wb status --json",
    "wb serve --port 0",  # the read-only page
    "python3 -c \"import json; print(json.load(open('.workbench/board.json'))['tasks'])\"",
    "cat .workbench/board.json | python3 -c \"import json, sys; json.dump(json.load(sys.stdin), sys.stdout)\"",
    "python3 -c \"import sys; sys.stdout.write(open('.workbench/state.md').read())\"",
    "node -e \"console.log(require('fs').readFileSync('.workbench/board.json', 'utf8'))\"",
    "git log --oneline -- .workbench",
    "grep -rn human docs/",
    "wb note 'asked a person to run wb resume --approve'",
]


def pre(repo: Path, command: str, client: str = "claude-code") -> dict:
    payload = fixture(client, "PreToolUse", repo)
    payload.update(tool_name="Bash", tool_input={"command": command, "description": "x"}
                   if client == "claude-code" else {"command": command})
    return payload


def denied(proc) -> str:  # type: ignore[no-untyped-def]
    ok(proc)
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == "deny"
    return str(answer["permissionDecisionReason"])


def test_a_persons_commands_are_denied_in_the_agents_shell(bench, repo: Path) -> None:
    track_config(repo)
    bench.add_task("Parse the config", acceptance=["false"])
    files = hash_workbench(repo)
    for command in PERSON_ONLY:
        why = denied(hook(repo, pre(repo, command)))
        assert "ask the person you work with to run it themselves" in why, command
        # never a way around it: no variable to unset, no flag to add, no wrapper to try
        for bypass in ("CLAUDECODE", "env -u", "instead run", "--actor agent", "WB_"):
            assert bypass not in why, (command, why)
    assert hash_workbench(repo) == files and status_porcelain(repo) == ""
    ok(hook(repo, fixture("claude-code", "Stop", repo)))
    calls = [e for e in events(repo) if e["type"] == "agent.tool_call"]
    assert len(calls) == len(PERSON_ONLY) and all("a person to do" in c["payload"]["denied"] for c in calls)


def test_interpreter_and_shell_writes_into_the_workbench_are_denied(bench, repo: Path) -> None:
    files = hash_workbench(repo)
    for command in INTERPRETER_WRITES:
        why = denied(hook(repo, pre(repo, command)))
        assert "Do not edit .workbench/ by hand" in why, command
    assert hash_workbench(repo) == files


def test_the_agents_own_wb_commands_and_reads_pass(bench, repo: Path) -> None:
    for command in ALLOWED:
        proc = ok(hook(repo, pre(repo, command)))
        assert proc.stdout == "", command


@pytest.mark.parametrize("command", ["wb task done T-001 --force", "script -qc 'wb resume --approve' /dev/null",
                                     "python3 -c \"open('.workbench/board.json','w').write('{}')\""])
def test_codex_shell_calls_are_held_to_the_same_rules(bench, repo: Path, command: str) -> None:
    why = denied(hook(repo, pre(repo, command, "codex"), "codex"))
    assert "by hand" in why or "a person to do" in why


def test_codex_argv_commands_are_read_as_one_command(bench, repo: Path) -> None:
    payload = fixture("codex", "PreToolUse", repo)
    payload.update(tool_name="shell", tool_input={"command": ["bash", "-lc", "wb resume --approve"]})
    assert "wb resume --approve" in denied(hook(repo, payload, "codex"))
