"""The command line's verbs in the Python API: `Bench.run`, `resume`, `abort`, `doctor`, `diff`, `migrate` and
`record_event`, on real git repositories, each giving what the CLI gives for the same workbench."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

from tests import stored
from tests.conftest import files_only, run_git, run_wb
from tests.migrate.conftest import v0_repo_at
from tests.stored import FILES
from workbench.api import Bench, diff, init
from workbench.errors import Busy, NotFound, Refused, UsageError

ROOT = Path(__file__).resolve().parents[2]
STEPS = [{"description": "Read the issue"},
         {"description": "Say hello", "tool": "greet"},
         {"description": "Deploy to staging", "tool": "deploy", "args": {"env": "staging"}}]


def configure(repo: Path, text: str) -> None:
    """Change config.yaml and commit it, as a user sets wb up before a session."""
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("tools: {}", text))
    run_git(repo, "add", ".workbench/config.yaml")
    run_git(repo, "commit", "-q", "-m", "configure wb")


def with_greet(repo: Path) -> None:
    """A mutating tool, and `approvals: any`: a script drives these sessions (a person's: test_person_only.py)."""
    configure(repo, "tools:\n  greet: {argv: [python3, -c, \"print('hi')\"], mode: mutating}")
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("approvals: human", "approvals: any"))
    run_git(repo, "commit", "-q", "-am", "approvals: any")


def wb_json(repo: Path, *args: str, code: int = 0) -> dict:
    r = run_wb(repo, *args)
    assert r.returncode == code, (args, r.stdout, r.stderr)
    data: dict = json.loads(r.stdout)
    return data


def stamped(data: dict) -> str:
    """`data` as JSON with the times a migration stamps (now, to the millisecond) as NOW."""
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", "NOW", json.dumps(data, sort_keys=True))


def clean(repo: Path) -> bool:
    """Every change of the workbench committed: on files, git's view of .workbench/; on SQLite (whose records
    are the database's, and whose handoff and artifacts git never sees committed) the write lock free at once."""
    from workbench.store.backend import is_sqlite_config

    if not is_sqlite_config(repo / ".workbench" / "config.yaml"):  # a files workbench (the v0 one is, always)
        return run_git(repo, "status", "--porcelain", "--", ".workbench").strip() == ""
    with stored.holding_lock(repo):
        return True


# -- run, resume, abort ----------------------------------------------------------------------------------
def test_run_to_a_yield_then_resume_to_done(bench: Bench, repo: Path) -> None:
    with_greet(repo)
    approval = bench.run("Ship it", steps=STEPS)
    assert approval.done is False and approval.kind == "approval"
    assert approval.reason == "approval_required:greet"
    pending = wb_json(repo, "status", "--json")["pending"]
    assert pending["kind"] == "approval" and "wb resume --approve" in pending["command"]
    assert clean(repo), "the yield is committed"

    with pytest.raises(Busy, match="`wb resume` continues it"):
        bench.run("Another goal", steps=STEPS)
    with pytest.raises(UsageError, match="approve or deny, not both"):
        bench.resume(approve=True, deny=True)
    with pytest.raises(UsageError, match="waits for approval"):
        bench.resume()

    tool_result = bench.resume(approve=True, yield_id=approval.yield_id)
    assert tool_result.done is False and tool_result.kind == "tool_result"
    assert tool_result.reason == "tool_result_required:deploy" and tool_result.payload["args"] == {"env": "staging"}
    done = bench.resume(result={"ok": True})
    assert done.done is True and done.reason == "goal_met"
    assert [s["status"] for s in done.steps] == ["done", "done", "done"]

    assert wb_json(repo, "status", "--json")["session"] is None
    assert bench.log()[-1]["type"] == "session.complete"
    deploy = [e["payload"] for e in bench.log(type="tool.result") if e["payload"]["index"] == 2]
    assert deploy[-1]["result"] == {"ok": True}
    assert clean(repo) and bench.validate() == [] and bench.replay().mismatches == []


def test_a_plan_file_a_budget_pause_and_extend(bench: Bench, repo: Path) -> None:
    plan = repo / "plan.json"
    plan.write_text(json.dumps({"steps": [{"description": "one"}, {"description": "two"}]}))
    with pytest.raises(UsageError, match="not both"):
        bench.run("g", plan=plan, steps=STEPS)
    paused = bench.run("g", plan=str(plan), max_turns=1)
    assert paused.done is False and paused.kind == "pause"
    assert wb_json(repo, "status", "--json")["pending"]["kind"] == "pause"
    with pytest.raises(UsageError, match="--extend takes turns=N"):
        bench.resume(extend={"lunch": 5})
    done = bench.resume(extend={"turns": 5})
    assert done.done is True and [s["status"] for s in done.steps] == ["done", "done"]


def test_extend_takes_the_cli_items_too(bench: Bench, repo: Path) -> None:
    plan = repo / "plan.json"
    plan.write_text(json.dumps({"steps": [{"description": "one"}, {"description": "two"}]}))
    assert bench.run("g", plan=plan, max_turns=1).kind == "pause"
    assert bench.resume(extend=["turns=5"]).done is True


def test_abort_ends_the_waiting_session_as_wb_abort_does(bench: Bench, repo: Path) -> None:
    with_greet(repo)
    assert bench.run("Ship it", steps=STEPS).kind == "approval"
    result = bench.abort("changed my mind")
    assert result.done is True
    assert [s["status"] for s in result.steps][:1] == ["done"]  # the first step ran before the yield
    aborts = bench.log(type="session.abort")
    assert len(aborts) == 1 and aborts[0]["payload"]["reason"] == "changed my mind"
    assert wb_json(repo, "status", "--json")["session"] is None
    assert clean(repo)
    with pytest.raises(Refused, match="no live session to abort"):
        bench.abort("again")
    r = run_wb(repo, "abort")
    assert r.returncode == Refused.exit_code and r.stderr.strip() == "wb: no live session to abort"


def test_resume_without_a_session_is_refused(bench: Bench) -> None:
    with pytest.raises(Refused, match="no session to resume"):
        bench.resume()


# -- doctor ------------------------------------------------------------------------------------------------
@files_only  # a torn events.jsonl; SQLite's doctor: tests/ops/test_doctor_sqlite.py
def test_doctor_finds_a_torn_log_and_fix_repairs_it(bench: Bench, repo: Path) -> None:
    bench.note("kept")
    log = repo / ".workbench" / "events.jsonl"
    good = log.read_bytes()
    with open(log, "ab") as fh:
        fh.write(b'{"schema_version":1,"seq":3,"id":"01')
    (repo / ".workbench" / ".tmp-x-state.md").write_text("half")

    report = bench.doctor()
    assert not report.healthy
    assert {f.code for f in report.findings} >= {"torn_tail", "temp_files"}
    assert not any(f.fixed for f in report.findings) and log.read_bytes() != good
    cli = wb_json(repo, "doctor", "--json", code=1)
    assert cli == {"healthy": False, "findings": [f.as_dict() for f in report.findings]}

    fixed = bench.doctor(fix=True)
    assert fixed.healthy and all(f.fixed for f in fixed.findings)
    assert log.read_bytes() == good
    assert not (repo / ".workbench" / ".tmp-x-state.md").exists()
    assert bench.doctor().findings == []
    assert wb_json(repo, "doctor", "--json") == {"healthy": True, "findings": []}


# -- diff --------------------------------------------------------------------------------------------------
@files_only  # two git commits; log points on both backends: tests/review/test_diff_logpoints.py
def test_diff_between_two_commits_is_what_wb_diff_json_prints(bench: Bench, repo: Path) -> None:
    bench.add_task("First")
    a = run_git(repo, "rev-parse", "HEAD").strip()
    bench.note("Chose TOML: no implicit typing.")
    bench.set_state({"next_action": "Write the parser"})
    bench.start_task("T-001")
    b = run_git(repo, "rev-parse", "HEAD").strip()

    data = bench.diff(a, b)
    assert data["changed"] is True
    assert [c["new"] for c in data["state"]["fields"] if c["field"] == "next_action"] == ["Write the parser"]
    assert [e["text"] for e in data["state"]["decision_log"]["added"]] == ["Chose TOML: no implicit typing."]
    assert [t["id"] for t in data["board"]["changed"]] == ["T-001"]
    assert data["events"]["by_type"] == {"note.add": 1, "state.set": 1, "task.start": 1}
    assert json.loads(json.dumps(data)) == wb_json(repo, "diff", "--format", "json", a, b)
    assert bench.diff(f"{a}..{b}") == data
    assert diff(repo, a, b) == data  # the module-level function, from a path

    assert bench.diff()["changed"] is False  # HEAD against the working tree: everything is committed
    assert bench.diff(a, b, all_fields=True)["state"]["fields"] != data["state"]["fields"]
    with pytest.raises(UsageError, match="a second revision needs a first"):
        bench.diff(None, b)


def test_diff_needs_no_workbench(tmp_path: Path, new_repo) -> None:  # type: ignore[no-untyped-def]
    unborn = new_repo(tmp_path / "unborn", commit=False)
    assert diff(unborn)["changed"] is False
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    with pytest.raises(NotFound, match="not inside a git repository"):
        diff(nowhere)


# -- migrate -----------------------------------------------------------------------------------------------
def test_migrate_a_version_0_workbench_as_wb_migrate_does(tmp_path: Path) -> None:
    api_repo = v0_repo_at(tmp_path / "api")
    cli_repo = tmp_path / "cli"
    shutil.copytree(api_repo, cli_repo, symlinks=True)
    bench = Bench.open(api_repo)

    dry = bench.migrate(dry_run=True)
    assert dry.dry_run and dry.changed and dry.commit is None
    assert clean(api_repo), "a dry run writes nothing"
    cli_dry = wb_json(cli_repo, "migrate", "--dry-run", "--json")
    assert stamped({**dry.to_json(), "workbench": None}) == stamped({**cli_dry, "workbench": None})

    report = bench.migrate()
    assert report.changed and not report.dry_run
    assert report.commit == run_git(api_repo, "rev-parse", "HEAD").strip()
    assert [e["type"] for e in report.events][-1] == "migration.apply"
    cli = wb_json(cli_repo, "migrate", "--json")
    assert [(f["file"], f["from"], f["to"]) for f in report.files] == \
        [(f["file"], f["from"], f["to"]) for f in cli["files"]]
    assert [e["type"] for e in report.events] == [e["type"] for e in cli["events"]]

    again = Bench.open(api_repo).migrate()
    assert not again.changed and again.commit is None
    assert Bench.open(api_repo).validate() == []
    assert clean(api_repo)


# -- record_event ------------------------------------------------------------------------------------------
def test_record_event_logs_clips_and_commits(bench: Bench, repo: Path) -> None:
    event = bench.record_event("agent.note", {"text": "hello"})
    assert event["type"] == "agent.note" and event["payload"] == {"text": "hello"}
    assert bench.last.commit == (run_git(repo, "rev-parse", "HEAD").strip() if FILES else None)
    assert bench.last.summary == "agent.note" and bench.last.seqs == [event["seq"]]
    assert bench.log(type="agent")[-1]["payload"] == {"text": "hello"}
    assert wb_json(repo, "status", "--json")["last_event"]["type"] == "agent.note"

    long = bench.record_event("agent.tool_result", {"result": "x" * 5000})["payload"]["result"]
    assert long["truncated"] is True and long["text"] == "x" * 2048 and long["bytes"] == 5000

    head = run_git(repo, "rev-parse", "HEAD").strip()
    bench.record_event("agent.tool_call", {"tool": "Bash"}, commit=False)
    assert run_git(repo, "rev-parse", "HEAD").strip() == head and (not clean(repo) or not FILES)
    bench.note("next write commits both")
    assert clean(repo)  # (on SQLite: nothing of it is a file in .workbench/)

    for folded in ("tool.call", "session.start", "task.add", "note.add"):
        with pytest.raises(Refused, match="choose a type of your own"):
            bench.record_event(folded, {})
    with pytest.raises(UsageError, match="dotted lower-case"):
        bench.record_event("Agent Thing", {})
    with pytest.raises(UsageError, match="actor"):
        bench.record_event("agent.note", {}, actor="robot")
    assert bench.validate() == [] and bench.replay().mismatches == []


def test_record_event_redacts_before_it_clips(bench: Bench, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("redact: []", "redact: [DEPLOY_TOKEN]"))
    monkeypatch.setenv("DEPLOY_TOKEN", "s3cr3t-value")
    fresh = Bench.open(repo)
    # the secret straddles the clip: clipped first, its head would be kept and its sha256 would be of it
    text = "a" * 2040 + "s3cr3t-value" + "b" * 3000
    fresh.record_event("agent.tool_result", {"result": text, "s3cr3t-value": 1})
    logged = stored.event_bytes(repo).decode()
    assert "s3cr3t" not in logged
    assert "[redacted]" in logged


# -- the CLI and the MCP server use the verbs -------------------------------------------------------------
CALLERS = ["workbench/cli/run.py", "workbench/cli/resume.py", "workbench/cli/abort.py", "workbench/cli/doctor.py",
           "workbench/cli/diff.py", "workbench/cli/migrate.py", "workbench/cli/hook.py",
           "workbench/integrations/mcpcalls.py", "workbench/integrations/mcpserve.py"]
BELOW_THE_VERBS = {"workbench.harness.bound", "workbench.ops.doctor", "workbench.migrate.apply",
                   "workbench.review.diff", "workbench.store.workbench"}


@pytest.mark.parametrize("module", CALLERS)
def test_the_cli_and_the_mcp_server_call_the_verbs_not_what_is_below_them(module: str) -> None:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            used |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            used |= {a.name for a in node.names}
    assert used & BELOW_THE_VERBS == set()


def test_every_verb_is_documented() -> None:
    doc = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    public = [name for name in dir(Bench) if not name.startswith("_")]  # every family of verbs (workbench/api/)
    missing = [name for name in public if f"{name}(" not in doc and f".{name}" not in doc]
    assert missing == [], f"docs/api.md does not show Bench.{', Bench.'.join(missing)}"


def test_init_then_the_verbs_on_a_fresh_repository(new_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = new_repo(tmp_path / "fresh")
    bench, created, _last = init(repo)
    assert created
    assert bench.doctor().healthy
    assert bench.migrate(dry_run=True).changed is False
    assert bench.diff(*(("HEAD~1", "HEAD") if FILES else ("@0", "now")))["board"]["added"] == []
