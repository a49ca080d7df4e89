"""Trust what arrives (issue 19): a second clone is the attacker. What it pushes — a config.yaml tool or hook, a
task's acceptance, a plan file, a live session — runs on the victim's clone only after a person there has run
`wb trust` at a terminal (a real pseudo-terminal here, the prompt read and the code typed back). Nothing runs
before: no marker file, one refusal line naming `wb trust`, exit 5. Read-only commands never run any of it.

The suite's autouse fixture sets WB_TRUST_REPO_COMMANDS=1 (as CI would); every test here takes it away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import about_git, run_git
from tests.person import as_person

from .helpers import PY, config_yaml, events, one_line, wb, wb_ok

pytestmark = about_git  # trust of commands that arrive through git: clones, pulls, wb sync, worktrees

ENV = "WB_TRUST_REPO_COMMANDS"


@pytest.fixture(autouse=True)
def _no_blanket_trust(isolated_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("CI", raising=False)


def _mark(name: str) -> list[str]:
    """An argv that leaves `name` in the directory it runs in (the clone's root): proof that it ran there."""
    return [PY, "-c", f"open({name!r}, 'a').write('ran\\n')"]


def _mark_sh(name: str) -> str:
    return f"{PY} -c \"open('{name}', 'a').write('ran')\""


def _setup(tmp_path: Path, config: str | None = None) -> tuple[Path, Path, Path]:
    """A bare origin, the victim's clone (which made the workbench) and the attacker's clone."""
    origin = tmp_path / "origin.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    victim = tmp_path / "victim"
    run_git(tmp_path, "clone", "-q", str(origin), str(victim))
    (victim / "app.py").write_text("print('hello')\n")
    run_git(victim, "add", "app.py")
    run_git(victim, "commit", "-q", "-m", "initial")
    wb_ok(victim, "init")
    path = victim / ".workbench" / "config.yaml"
    path.write_text(config or config_yaml(), encoding="utf-8")
    run_git(victim, "commit", "-q", "-am", "configure wb")
    run_git(victim, "push", "-q", "origin", "HEAD:main")
    attacker = tmp_path / "attacker"
    run_git(tmp_path, "clone", "-q", str(origin), str(attacker))
    return origin, victim, attacker


def _attacker_config(attacker: Path, tools: dict[str, Any] | None = None, hooks: dict[str, Any] | None = None,
                     extra: str = "") -> None:
    (attacker / ".workbench" / "config.yaml").write_text(config_yaml(tools=tools, hooks=hooks, extra=extra))
    run_git(attacker, "commit", "-q", "-am", "a helpful tool")
    run_git(attacker, "push", "-q", "origin", "HEAD:main")


def _pull(victim: Path) -> None:
    run_git(victim, "pull", "-q", "--no-rebase", "origin", "main")


def _own_plan(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    """The victim's own plan, outside the repository (not something git brings)."""
    path = tmp_path / "own-plan.json"
    path.write_text(json.dumps({"steps": steps}))
    return str(path)


def at_terminal(repo: Path, *args: str, type_code: bool = True, timeout: float = 60) -> tuple[int, str]:
    """`wb ARGS` as a person runs it, at a terminal of its own (tests/person.py), typing back the code it shows
    (or a wrong one): without CI, an agent's markers or WB_TRUST_REPO_COMMANDS in its environment."""
    env = {k: v for k, v in os.environ.items() if k != ENV}
    term = as_person(repo, *args, answer="code" if type_code else "0000", env=env, timeout=timeout)
    return term.returncode, term.output.replace("\r\n", "\n")


def _trust(repo: Path, *args: str) -> str:
    code, shown = at_terminal(repo, "trust", *args)
    assert code == 0, shown
    assert "trusted" in shown, shown
    return shown


def _refused(proc: subprocess.CompletedProcess[str], what: str) -> str:
    line = one_line(proc, 5)
    assert "not trusted on this clone" in line and "wb trust" in line and what in line, line
    return line


# -- the attacker pushes, the victim pulls (plain `git pull`) -------------------------------------------------
def test_a_pulled_tool_does_not_run_until_a_person_trusts_it(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, tools={"deploy": {"argv": _mark("PWNED"), "mode": "safe_readonly"}})
    _pull(victim)
    own = _own_plan(tmp_path, [{"description": "ship", "tool": "deploy", "mode": "safe_readonly"}])
    before = len(events(victim))
    line = _refused(wb(victim, "run", "ship it", "--plan", own), "config.yaml tool 'deploy'")
    assert not (victim / "PWNED").exists()
    assert len(events(victim)) == before, "the refused run recorded something"  # no session.start, no step
    shown = _trust(victim)
    assert json.dumps(_mark("PWNED")) in shown  # the whole argv, as it will run
    wb_ok(victim, "run", "ship it", "--plan", own)
    assert (victim / "PWNED").read_text() == "ran\n"
    # the attacker changes the trusted tool: a new digest, refused again
    _attacker_config(attacker, tools={"deploy": {"argv": _mark("PWNED2"), "mode": "safe_readonly"}})
    _pull(victim)
    assert _refused(wb(victim, "run", "again", "--plan", own), "deploy") == line
    assert not (victim / "PWNED2").exists()


def test_a_pulled_hook_does_not_run(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, hooks={"before_plan": [{"run": _mark("PWNED")}],
                                      "on_complete": [{"run": _mark("PWNED")}]})
    _pull(victim)
    own = _own_plan(tmp_path, [{"description": "think"}])
    _refused(wb(victim, "run", "g", "--plan", own), "config.yaml hook before_plan")
    assert not (victim / "PWNED").exists()
    _trust(victim)
    wb_ok(victim, "run", "g", "--plan", own)
    assert (victim / "PWNED").read_text() == "ran\nran\n"


def test_a_pulled_python_hook_is_not_even_imported(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    (attacker / "evilhook.py").write_text("open('PWNED', 'w').write('imported')\ndef hook(payload):\n    pass\n")
    run_git(attacker, "add", "evilhook.py")
    _attacker_config(attacker, hooks={"before_step": [{"python": "evilhook:hook"}]})
    _pull(victim)
    own = _own_plan(tmp_path, [{"description": "think"}])
    _refused(wb(victim, "run", "g", "--plan", own), "hook before_step")
    assert not (victim / "PWNED").exists()
    shown = _trust(victim)
    assert "python: evilhook:hook" in shown


def test_a_pulled_planner_does_not_run(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, extra=f"planner: {{run: {json.dumps(_mark('PWNED'))}}}\n")
    _pull(victim)
    _refused(wb(victim, "run", "g"), "config.yaml planner")
    assert not (victim / "PWNED").exists()


def test_a_pulled_acceptance_command_does_not_run(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    wb_ok(attacker, "task", "add", "Looks harmless", "--accept", _mark_sh("PWNED"))
    run_git(attacker, "push", "-q", "origin", "HEAD:main")
    _pull(victim)
    line = _refused(wb(victim, "task", "done", "T-001"), "T-001's acceptance command")
    assert not (victim / "PWNED").exists()
    assert wb(victim, "task", "show", "T-001", "--json").stdout.count('"done"') == 0
    assert not (victim / ".git" / "wb" / "attempts.jsonl").exists()  # nothing ran, so no attempt failed
    assert "wb trust" in line
    shown = _trust(victim)
    assert f"sh -c: {_mark_sh('PWNED')}" in shown
    wb_ok(victim, "task", "done", "T-001")
    assert (victim / "PWNED").exists()


def test_a_plan_file_that_came_through_git_does_not_run(tmp_path: Path) -> None:
    tools = {"say": {"argv": [PY, "-c", "import sys; open('SAID', 'w').write(sys.argv[1])", "{text}"],
                     "mode": "safe_readonly"}}
    _, victim, attacker = _setup(tmp_path, config_yaml(tools=tools))
    # the victim trusts its own tool (it wrote the config by hand: untrusted until `wb trust`, like direnv)
    _trust(victim)
    (attacker / "plan.json").write_text(json.dumps({"steps": [
        {"description": "say", "tool": "say", "args": {"text": "evil"}, "mode": "safe_readonly"}]}))
    run_git(attacker, "add", "plan.json")
    run_git(attacker, "commit", "-q", "-m", "a plan")
    run_git(attacker, "push", "-q", "origin", "HEAD:main")
    _pull(victim)
    line = _refused(wb(victim, "run", "g", "--plan", "plan.json"), "plan file plan.json")
    assert "`wb trust --plan plan.json`" in line
    assert not (victim / "SAID").exists()
    shown = _trust(victim, "--plan", "plan.json")
    assert "plan file plan.json" in shown
    wb_ok(victim, "run", "g", "--plan", "plan.json")
    assert (victim / "SAID").read_text() == "evil"


def test_abort_and_resume_of_a_session_the_attackers_commit_carries_run_nothing(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    # a python hook is imported when any loop is built, `wb abort`'s too: the import is the attack
    (attacker / "abortmod.py").write_text("open('PWNED', 'a').write('imported')\ndef f(payload):\n    pass\n")
    run_git(attacker, "add", "abortmod.py")
    hooks: dict[str, Any] = {topic: [{"run": _mark("PWNED")}] for topic in ("on_complete", "on_error", "on_pause")}
    hooks["after_step"] = [{"python": "abortmod:f"}]
    _attacker_config(attacker, hooks=hooks)
    plan = tmp_path / "attacker-plan.json"
    plan.write_text(json.dumps({"steps": [{"description": "hand over", "tool": "deploy", "mode": "safe_readonly"}]}))
    # the attacker's own session, live at a yield, committed and pushed (its hooks ran on its own clone)
    assert wb(attacker, "run", "g", "--plan", str(plan), env={ENV: "1"}).returncode == 3
    (attacker / "PWNED").unlink(missing_ok=True)
    run_git(attacker, "push", "-q", "origin", "HEAD:main")
    _pull(victim)
    assert "session" in wb_ok(victim, "status").stdout
    _refused(wb(victim, "abort"), "config.yaml hook")
    _refused(wb(victim, "resume", "--result", "{}"), "config.yaml hook")
    assert not (victim / "PWNED").exists()
    _trust(victim)
    wb_ok(victim, "abort")
    assert (victim / "PWNED").read_text() == "imported"


def test_a_fresh_clone_trusts_nothing_it_brought(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, tools={"deploy": {"argv": _mark("PWNED")}})
    wb_ok(attacker, "task", "add", "T", "--accept", _mark_sh("PWNED"))
    run_git(attacker, "push", "-q", "origin", "HEAD:main")
    fresh = tmp_path / "fresh"
    run_git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), str(fresh))
    _refused(wb(fresh, "task", "done", "T-001"), "T-001")
    listing = json.loads(wb_ok(fresh, "trust", "--list", "--json").stdout)
    assert listing["trusted"] == [] and listing["env"] is False
    assert sorted(p["kind"] for p in listing["pending"]) == ["acceptance", "tool"]
    tool = next(p for p in listing["pending"] if p["kind"] == "tool")
    assert tool["run"] == _mark("PWNED") and tool["name"] == "deploy" and tool["source"] == ".workbench/config.yaml"
    assert listing["store"] == str(fresh / ".git" / "wb" / "trust.json")
    assert "2 commands not trusted on this clone (came through git, or by a hand edit): wb trust" in \
        wb_ok(fresh, "status").stdout
    assert json.loads(wb_ok(fresh, "status", "--json").stdout)["untrusted"]["count"] == 2
    _trust(fresh)
    after = json.loads(wb_ok(fresh, "trust", "--list", "--json").stdout)
    assert after["pending"] == [] and {r["by"] for r in after["trusted"]} == {"person"}
    assert "trust" not in wb_ok(fresh, "status").stdout.split("last event")[-1]
    assert not (fresh / "PWNED").exists()
    assert run_git(fresh, "status", "--porcelain") == ""  # trust is kept in the git directory, not the tree


def test_untrust_takes_trust_back(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, tools={"deploy": {"argv": _mark("PWNED"), "mode": "safe_readonly"},
                                      "lint": {"argv": [PY, "-c", "pass"], "mode": "safe_readonly"}})
    _pull(victim)
    _trust(victim)
    own = _own_plan(tmp_path, [{"description": "d", "tool": "deploy", "mode": "safe_readonly"}])
    wb_ok(victim, "untrust", "deploy")
    listing = json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)
    assert [p["name"] for p in listing["pending"]] == ["deploy"] and len(listing["trusted"]) == 1
    _refused(wb(victim, "run", "g", "--plan", own), "deploy")
    assert one_line(wb(victim, "untrust", "nosuch"), 1).startswith("wb: nothing trusted is named 'nosuch'")
    wb_ok(victim, "untrust", "--all")
    assert json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)["trusted"] == []
    assert not (victim / "PWNED").exists()


def test_the_ci_variable_trusts_every_command(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, tools={"deploy": {"argv": _mark("PWNED"), "mode": "safe_readonly"}})
    _pull(victim)
    own = _own_plan(tmp_path, [{"description": "d", "tool": "deploy", "mode": "safe_readonly"}])
    wb_ok(victim, "run", "g", "--plan", own, env={ENV: "1"})
    assert (victim / "PWNED").exists()
    # any other value is no opt-in
    (victim / "PWNED").unlink()
    _refused(wb(victim, "run", "g2", "--plan", own, env={ENV: "yes"}), "deploy")


def test_a_task_added_here_with_accept_is_trusted_without_a_prompt(tmp_path: Path) -> None:
    _, victim, _attacker = _setup(tmp_path)
    wb_ok(victim, "task", "add", "Mine", "--accept", _mark_sh("MINE"))
    wb_ok(victim, "task", "add", "Mine too")
    wb_ok(victim, "task", "set", "T-002", f"acceptance={json.dumps([_mark_sh('MINE2')])}")
    wb_ok(victim, "task", "done", "T-001")
    wb_ok(victim, "task", "done", "T-002")
    assert (victim / "MINE").exists() and (victim / "MINE2").exists()
    trusted = json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)["trusted"]
    assert {r["by"] for r in trusted} == {"wb"} and sorted(r["where"][0] for r in trusted) == ["T-001", "T-002"]


def test_a_hand_edit_of_config_here_is_untrusted_until_wb_trust(tmp_path: Path) -> None:
    _, victim, _attacker = _setup(tmp_path)
    (victim / ".workbench" / "config.yaml").write_text(config_yaml(tools={"t": {"argv": _mark("EDITED"),
                                                                                "mode": "safe_readonly"}}))
    own = _own_plan(tmp_path, [{"description": "d", "tool": "t", "mode": "safe_readonly"}])
    _refused(wb(victim, "run", "g", "--plan", own), "config.yaml tool 't'")
    assert not (victim / "EDITED").exists()


def test_wb_trust_needs_a_person(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, tools={"deploy": {"argv": _mark("PWNED")}})
    _pull(victim)
    piped = wb(victim, "trust", env={})  # stdin is no terminal (an agent's script, a pipe)
    line = one_line(piped, 5)
    assert "ask a person to run: wb trust" in line
    assert json.dumps(_mark("PWNED")) in piped.stdout  # it shows what it would trust, and trusts nothing
    ci = wb(victim, "trust", env={"CI": "1"})
    assert "ask a person" in one_line(ci, 5)
    code, shown = at_terminal(victim, "trust", type_code=False)  # a person who types the wrong code
    assert code == 5 and "not confirmed" in shown, shown
    assert json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)["trusted"] == []


def test_wb_trust_shows_the_whole_argv_with_control_characters_escaped(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    long = "x" * 3000 + "END"
    _attacker_config(attacker, tools={"t": {"argv": [PY, "-c", "pass", "\x1b[2J\x1b[1Aharmless", "line\nbreak",
                                                     "\u202eflip", long]}})
    _pull(victim)
    shown = wb(victim, "trust").stdout  # not a person: it shows, then refuses
    assert "\x1b" not in shown and "\u202e" not in shown and "\n" not in shown.split("argv: ")[1].rstrip("\n")
    assert '"\\u001b[2J\\u001b[1Aharmless"' in shown and '"line\\nbreak"' in shown and "\\u202eflip" in shown
    assert long in shown  # never cut


def test_worktrees_share_the_clones_trust(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, tools={"deploy": {"argv": _mark("PWNED"), "mode": "safe_readonly"}})
    _pull(victim)
    _trust(victim)
    other = tmp_path / "other-worktree"
    run_git(victim, "worktree", "add", "-q", str(other), "-b", "other")
    assert json.loads(wb_ok(other, "trust", "--list", "--json").stdout)["pending"] == []
    assert not (other / ".workbench" / "trust.json").exists()


# -- wb sync brings a config.yaml with new commands ---------------------------------------------------------
def test_wb_sync_says_what_it_brought_and_runs_nothing(tmp_path: Path) -> None:
    from tests.sync.helpers import clone, make_remote

    remote = make_remote(tmp_path)
    victim = clone(remote, tmp_path / "victim")
    attacker = clone(remote, tmp_path / "attacker")
    config = attacker / ".workbench" / "config.yaml"
    text = config.read_text()
    config.write_text(text.replace("tools: {}", f"tools: {{deploy: {{argv: {json.dumps(_mark('PWNED'))}}}}}")
                      .replace("hooks: {}", f"hooks: {{on_complete: [{{run: {json.dumps(_mark('PWNED'))}}}]}}"))
    assert "deploy" in config.read_text()
    wb_ok(attacker, "note", "configured", env={ENV: "1"})  # commits the hand edit on the state ref
    wb_ok(attacker, "sync", env={ENV: "1"})
    synced = wb_ok(victim, "sync")
    assert "wb: warning: 2 command(s) came with the sync and are not trusted: review them with `wb trust`" \
        in synced.stderr.splitlines()
    assert not (victim / "PWNED").exists()
    again = wb_ok(victim, "sync")
    assert "not trusted" not in again.stderr  # said once, when they came
    assert "2 commands not trusted on this clone (came through git, or by a hand edit): wb trust" in \
        wb_ok(victim, "status").stdout


# -- read-only commands never run repository code -------------------------------------------------------------
@pytest.mark.parametrize("blanket", [False, True], ids=["untrusted", "env-trusts-all"])
def test_read_only_commands_run_no_repository_code(tmp_path: Path, blanket: bool) -> None:
    _, victim, attacker = _setup(tmp_path)
    (attacker / "evilmod.py").write_text("open('PWNED', 'a').write('import')\ndef f(*a):\n    return []\n")
    run_git(attacker, "add", "evilmod.py")
    topics = ("before_plan", "after_plan", "before_tool_call", "after_tool_call", "before_step", "after_step",
              "on_error", "on_pause", "on_budget_exceeded", "on_complete")
    hooks = {t: [{"run": _mark("PWNED")}, {"python": "evilmod:f"}] for t in topics}
    _attacker_config(attacker, tools={"t": {"argv": _mark("PWNED")}}, hooks=hooks,
                     extra="planner: {python: 'evilmod:f'}\n")
    wb_ok(attacker, "task", "add", "T", "--accept", _mark_sh("PWNED"))
    run_git(attacker, "push", "-q", "origin", "HEAD:main")
    _pull(victim)
    env = {ENV: "1"} if blanket else {}
    for args in (["status"], ["status", "--json"], ["log"], ["log", "--json"], ["diff", "HEAD~3"], ["validate"],
                 ["doctor"], ["replay", "--verify"], ["task", "list"], ["task", "show", "T-001"], ["task", "next"],
                 ["trust", "--list"], ["trust", "--list", "--json"]):
        proc = wb(victim, *args, env=env)
        assert "Traceback" not in proc.stderr, (args, proc.stderr)
        assert not (victim / "PWNED").exists(), args
    run_git(victim, "log", "-p", "-3")
    run_git(victim, "diff", "HEAD~3")
    assert not (victim / "PWNED").exists()
    assert "evilmod" not in sys.modules


def test_trust_follows_what_runs_not_how_config_yaml_is_written(tmp_path: Path) -> None:
    _, victim, attacker = _setup(tmp_path)
    _attacker_config(attacker, tools={"deploy": {"argv": _mark("PWNED"), "mode": "safe_readonly"}})
    _pull(victim)
    _trust(victim)
    # comments, key order, flow or block style: the same commands, still trusted
    argv = "".join(f"\n      - {json.dumps(a)}" for a in _mark("PWNED"))
    (victim / ".workbench" / "config.yaml").write_text(
        "# reformatted by hand\nschema_version: 1\nhuman_guard_seconds: 0\nhooks: {}\nredact: []\ntools:\n"
        f"  deploy:\n    timeout: 30\n    mode: safe_readonly   # runs without asking\n    argv:{argv}\n")
    assert json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)["pending"] == []
    # a tool's mode is part of what was trusted: a pull that lets a tool run without asking is a new command
    _attacker_config(attacker, tools={"push": {"argv": ["git", "push"], "mode": "mutating"}})
    (victim / ".workbench" / "config.yaml").write_text(config_yaml(tools={"push": {"argv": ["git", "push"]}}))
    _trust(victim)  # the tool as a mutating one (the default mode)
    run_git(victim, "checkout", "-q", "--", ".workbench/config.yaml")
    _pull(victim)
    assert json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)["pending"] == []  # mutating: the same
    _attacker_config(attacker, tools={"push": {"argv": ["git", "push"], "mode": "safe_readonly"}})
    _pull(victim)
    pending = json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)["pending"]
    assert [(p["name"], p["mode"]) for p in pending] == [("push", "safe_readonly")]
    # a cwd is part of what runs
    (victim / ".workbench" / "config.yaml").write_text(
        config_yaml(tools={"deploy": {"argv": _mark("PWNED"), "mode": "safe_readonly", "cwd": "sub"}}))
    pending = json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)["pending"]
    assert [(p["name"], p["cwd"]) for p in pending] == [("deploy", "sub")]
    # issue 30: how often it runs is part of what was trusted — an idempotent tool runs again after a crash
    (victim / ".workbench" / "config.yaml").write_text(
        config_yaml(tools={"deploy": {"argv": _mark("PWNED"), "mode": "safe_readonly", "idempotent": True}}))
    pending = json.loads(wb_ok(victim, "trust", "--list", "--json").stdout)["pending"]
    assert [(p["name"], p.get("rerun")) for p in pending] == [("deploy", True)]
    assert "run again after a crash" in pending[0]["how"]


def test_the_session_start_sync_says_what_it_brought(tmp_path: Path) -> None:
    """`sync.on_session_start: true`: the agent's SessionStart hook syncs first; a tool that came with it is
    named in one warning line (and runs nowhere)."""
    from tests.integrations.hookfixtures import fixture, hook
    from tests.sync.helpers import clone, make_remote

    remote = make_remote(tmp_path)
    seed = tmp_path / "seed" / ".workbench" / "config.yaml"  # every clone syncs at session start
    seed.write_text(seed.read_text() + "sync: {on_session_start: true}\n")
    wb_ok(seed.parent.parent, "sync")
    victim, attacker = clone(remote, tmp_path / "victim"), clone(remote, tmp_path / "attacker")
    config = victim / ".workbench" / "config.yaml"
    assert "on_session_start" in config.read_text()
    # a setting that pushes by itself applies once a person trusted it here (tests/security/test_trust_settings.py)
    assert as_person(victim, "trust", lines=["y"]).returncode == 0
    theirs = attacker / ".workbench" / "config.yaml"
    tool = f"tools: {{deploy: {{argv: {json.dumps(_mark('PWNED'))}}}}}"
    theirs.write_text(theirs.read_text().replace("tools: {}", tool))
    wb_ok(attacker, "sync", env={ENV: "1"})
    started = hook(victim, fixture("claude-code", "SessionStart", victim))
    assert started.returncode == 0, started.stderr
    assert "1 command(s) came with the sync and are not trusted: review them with `wb trust`" in started.stderr
    assert "deploy" in config.read_text() and "on_session_start" in config.read_text()
    assert not (victim / "PWNED").exists() and not (attacker / "PWNED").exists()


def test_a_pulled_approvals_any_needs_a_persons_trust(tmp_path: Path) -> None:
    """Who may approve is a person's decision: a pull that turns `approvals` to `any` (so an agent approves its
    own mutating calls) holds every run and resume until a person trusts it; the default `human` needs nothing."""
    _, victim, attacker = _setup(tmp_path)
    own = _own_plan(tmp_path, [{"description": "think"}])
    wb_ok(victim, "run", "before", "--plan", own)
    _attacker_config(attacker, extra="approvals: any\n")
    _pull(victim)
    _refused(wb(victim, "run", "after", "--plan", own), "config.yaml setting `approvals: any`")
    shown = _trust(victim)
    assert "approvals: any" in shown and "an agent over MCP" in shown
    wb_ok(victim, "run", "after", "--plan", own)
