"""The scope contract of a task and the proof of done (issue 16), on real git: an agent that touches a forbidden
file is refused at `done`, one that moves the goalposts after start is refused, a forced done says so."""

from __future__ import annotations

import json

import pytest

from tests import stored
from tests.person import as_person
from tests.stored import FILES
from workbench.model.scope import evaluate, matches


def board(repo):
    return stored.board(repo)


def events(repo):
    return stored.events(repo)


@pytest.mark.parametrize(("glob", "path", "hit"), [
    ("src/auth/**", "src/auth/login.py", True),
    ("src/auth/**", "src/auth/deep/x.py", True),
    ("src/auth/**", "src/authz.py", False),
    ("src/auth/", "src/auth/login.py", True),
    ("src/auth", "src/auth/login.py", True),
    ("*.lock", "deps/poetry.lock", True),
    ("/*.lock", "deps/poetry.lock", False),
    ("/*.lock", "poetry.lock", True),
    ("**/migrations/*.sql", "db/migrations/001.sql", True),
    ("**/migrations/*.sql", "migrations/001.sql", True),
    ("docs/*.md", "docs/a/b.md", False),
    ("te?t.py", "src/test.py", True),
])
def test_globs_are_gitignore_style(glob, path, hit):
    assert matches(glob, path) is hit


def test_severity_per_glob_family():
    scope = {"allowed": ["src/**"], "forbidden": ["secrets/**"], "outside": "warn",
             "severity": [{"glob": "ci/**", "level": "block"}]}
    verdict = evaluate(scope, ["src/a.py", "README.md", "ci/run", "secrets/key"])
    assert verdict["forbidden"] == [{"path": "secrets/key", "glob": "secrets/**"}]
    assert verdict["findings"] == [
        {"path": "README.md", "rule": "outside_allowed", "severity": "warn"},
        {"path": "ci/run", "rule": "outside_allowed", "severity": "block", "glob": "ci/**"},
    ]


def test_agent_touching_a_forbidden_file_is_refused_at_done(bench, repo, wb, git, wb_hashes, error_line):
    (repo / "migrations").mkdir()
    (repo / "migrations" / "001.sql").write_text("create table t;\n")
    git(repo, "add", "migrations")
    git(repo, "commit", "-qm", "a migration")
    r = wb(repo, "task", "add", "Auth", "--allow", "src/auth/**", "--forbid", "migrations/**",
           "--accept", "true", "--actor", "agent")
    assert r.returncode == 0, r.stderr
    assert board(repo)["tasks"][0]["scope"] == {"allowed": ["src/auth/**"], "forbidden": ["migrations/**"]}
    before = git(repo, "rev-parse", "HEAD").strip()
    assert wb(repo, "task", "start", "T-001", "--actor", "agent").returncode == 0
    assert board(repo)["tasks"][0]["start_head"] == before  # task.start records the HEAD it started at
    # the agent commits a change to a forbidden file, and leaves another one uncommitted
    (repo / "migrations" / "001.sql").write_text("drop table t;\n")
    git(repo, "commit", "-qam", "agent: tweak the migration")
    (repo / "migrations" / "002.sql").write_text("-- new\n")
    files = wb_hashes(repo)

    r = wb(repo, "task", "done", "T-001", "--actor", "agent")
    assert r.returncode == 5
    line = error_line(r.stderr)
    assert "migrations/001.sql (forbidden: migrations/**)" in line
    assert "migrations/002.sql (forbidden: migrations/**)" in line
    assert "ask a person" in line and "wb task done T-001 --force" in line and "--actor" not in line
    assert wb_hashes(repo) == files  # a refusal changes nothing
    assert board(repo)["tasks"][0]["status"] == "in_progress"
    # an agent's --force does not pass the scope
    assert wb(repo, "task", "done", "T-001", "--force", "--actor", "agent").returncode == 5


def test_outside_allowed_is_a_recorded_finding(bench, repo, wb, git):
    bench.add_task("Auth", acceptance=["echo checked"], scope={"allowed": ["src/**"]})
    bench.start_task("T-001")
    (repo / "README.md").write_text("# changed\n")
    r = wb(repo, "task", "done", "T-001", "--actor", "agent")
    assert r.returncode == 0, r.stderr
    done = [e for e in events(repo) if e["type"] == "task.done"][-1]
    assert done["payload"]["scope"]["findings"] == [
        {"path": "README.md", "rule": "outside_allowed", "severity": "warn"}]
    check = done["payload"]["acceptance"][0]
    # the proof: exit, duration, digest and tail of the output, the whole in artifacts/, and HEAD
    assert check["exit"] == 0 and check["seconds"] >= 0 and check["output_tail"] == "checked\n"
    artifact = repo / check["artifact"]["path"]
    assert artifact.read_bytes() == b"checked\n"
    import hashlib

    assert check["sha256"] == hashlib.sha256(b"checked\n").hexdigest()
    # HEAD before the state commit (on SQLite, which commits nothing, HEAD)
    assert done["payload"]["head"] == git(repo, "rev-parse", "HEAD~1" if FILES else "HEAD").strip()
    shown = wb(repo, "task", "show", "T-001").stdout
    assert "warn: README.md" in shown and "$ echo checked" in shown
    if not FILES:
        return  # wb diff shows what a commit of .workbench/ changed
    assert git(repo, "status", "--porcelain", "--", ".workbench") == ""  # the artifact is committed
    diff = wb(repo, "diff", "HEAD~1", "HEAD").stdout
    assert "proof of done" in diff and "scope warn: README.md" in diff


def test_block_severity_refuses(bench, repo, wb):
    bench.add_task("Auth", scope={"allowed": ["src/**"], "outside": "block"})
    bench.start_task("T-001")
    (repo / "app.py").write_text("print('changed')\n")
    r = wb(repo, "task", "done", "T-001", "--actor", "agent")
    assert r.returncode == 5 and "app.py (outside allowed: block)" in r.stderr


def test_agent_editing_acceptance_after_start_is_refused(bench, repo, wb, error_line):
    bench.add_task("Parser", acceptance=["pytest -q"], scope={"forbidden": ["vendor/**"]})
    # before the start, the agent may still shape its task
    assert wb(repo, "task", "set", "T-001", "acceptance=pytest -q tests", "--actor", "agent").returncode == 0
    bench.start_task("T-001")
    r = wb(repo, "task", "set", "T-001", "acceptance=true", "--actor", "agent")
    assert r.returncode == 5
    line = error_line(r.stderr)
    assert "needs a person" in line and "ask a person to run: wb task set T-001 'acceptance=[\"true\"]'" in line
    r = wb(repo, "task", "set", "T-001", 'scope={"forbidden": []}', "--actor", "agent")
    assert r.returncode == 5 and "scope" in r.stderr
    with pytest.raises(Exception, match="needs a person"):
        bench.set_task("T-001", {"acceptance": []}, actor="agent")
    assert board(repo)["tasks"][0]["acceptance"] == ["pytest -q tests"]
    # the person's command works; an agent's "recorded reason" is no way around it (issue 19)
    assert as_person(repo, "task", "set", "T-001", "acceptance=true").returncode == 0
    r = wb(repo, "task", "set", "T-001", "--forbid", "docs/**", "--override", "the person asked in chat",
           "--actor", "agent")
    assert r.returncode == 5 and "ask a person" in r.stderr, r.stderr
    r = as_person(repo, "task", "set", "T-001", "--forbid", "docs/**", "--override", "the person asked in chat")
    assert r.returncode == 0, r.output
    assert board(repo)["tasks"][0]["scope"]["forbidden"] == ["vendor/**", "docs/**"]
    last = events(repo)[-1]
    assert last["type"] == "task.set" and last["payload"]["override"] == "the person asked in chat"
    # the other fields stay the agent's
    assert wb(repo, "task", "set", "T-001", "title=Parser v2", "--actor", "agent").returncode == 0


def test_forced_done_is_shown_as_forced(bench, repo, wb):
    bench.add_task("Parser", acceptance=["echo nope; exit 1"])
    bench.start_task("T-001")
    r = as_person(repo, "task", "done", "T-001", "--force")
    assert r.returncode == 0 and "(forced)" in r.output, r.output
    assert "FORCED" in wb(repo, "task", "show", "T-001").stdout
    assert "done (forced)" in wb(repo, "task", "list").stdout
    assert board(repo)["tasks"][0]["proof"]["forced"] is True
    last = ("HEAD~1", "HEAD") if FILES else ("@-1", "now")  # the forced done: the last commit / the last event
    diff = wb(repo, "diff", *last).stdout
    assert "FORCED" in diff
    data = json.loads(wb(repo, "diff", *last, "--format", "json").stdout)
    assert data["done"][0]["forced"] is True and data["done"][0]["checks"][0]["exit"] == 1


def test_replay_and_validate_after_scope_and_proof(bench, repo, wb):
    bench.add_task("Auth", acceptance=["true"], scope={"allowed": ["src/**"], "approvals_required": ["deploy"]})
    bench.start_task("T-001")
    (repo / "app.py").write_text("x\n")
    bench.done_task("T-001")
    assert wb(repo, "validate").returncode == 0
    r = wb(repo, "replay", "--verify")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_hook_question_forbidden_for_active_task(bench, repo):
    from workbench.ops.scope import forbidden_for_active_task

    bench.add_task("Auth", scope={"forbidden": ["migrations/**", "*.lock"]})
    assert forbidden_for_active_task(bench.wb, "migrations/001.sql") is None  # not started: no active task
    bench.start_task("T-001")
    reason = forbidden_for_active_task(bench.wb, repo / "migrations" / "001.sql")
    assert reason is not None and "migrations/**" in reason and "T-001" in reason
    assert "*.lock" in (forbidden_for_active_task(bench.wb, "deps/poetry.lock") or "")
    assert forbidden_for_active_task(bench.wb, "src/app.py") is None
    assert forbidden_for_active_task(bench.wb, "/elsewhere/migrations/x") is None
