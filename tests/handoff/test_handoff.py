"""The handoff packet and resume's view of what changed (issue 16), on real git and the real CLI."""

from __future__ import annotations

import json

from tests import stored
from tests.conftest import files_only_because
from tests.person import as_person
from tests.stored import FILES
from workbench.model import schemas


def packet(repo):
    return json.loads((repo / ".workbench" / "handoff.json").read_text())


def events(repo):
    return stored.events(repo)


def test_handoff_twice_is_identical_and_committed_once(bench, repo, wb, git, wb_hashes, commits):
    bench.add_task("Parser", acceptance=["true"])
    bench.start_task("T-001")
    r = wb(repo, "handoff")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("wrote .workbench/handoff.md and handoff.json")
    data = packet(repo)
    schemas.check("handoff", data, "handoff.json")
    assert data["next_action"] == {"text": "finish T-001: Parser", "command": "wb task done T-001"}
    if FILES:
        assert git(repo, "status", "--porcelain", "--", ".workbench") == ""  # committed like any other state
        assert git(repo, "log", "-1", "--format=%s").startswith("wb: handoff:")
    assert events(repo)[-1]["type"] == "handoff.write"
    files, count = wb_hashes(repo), commits(repo)
    md = (repo / ".workbench" / "handoff.md").read_bytes()

    r = wb(repo, "handoff")
    assert r.returncode == 0 and r.stdout.startswith("unchanged:")
    assert wb_hashes(repo) == files and commits(repo) == count  # same workbench, same packet: nothing written
    assert (repo / ".workbench" / "handoff.md").read_bytes() == md
    assert bench.handoff() == data  # the API agrees
    assert wb(repo, "validate").returncode == 0
    assert wb(repo, "replay", "--verify").returncode == 0


def test_handoff_on_a_dirty_tree_lists_the_risks(bench, repo, wb, git):
    stored.write_config(repo / ".workbench" / "config.yaml",
                        "schema_version: 1\nhandoff:\n  stray: ['*.tmp', 'scratch/**']\n  branches: [main]\n")
    git(repo, "add", ".workbench/config.yaml")
    git(repo, "commit", "-qm", "config")
    bench.add_task("Parser")
    bench.add_task("Docs")
    bench.start_task("T-001")
    bench.block_task("T-002", "waiting for the API key")
    (repo / "app.py").write_text("print('changed')\n")
    (repo / "notes.tmp").write_text("scratch\n")
    assert wb(repo, "handoff").returncode == 0
    risks = {(r["kind"], r["detail"]) for r in packet(repo)["risks"]}
    kinds = [r["kind"] for r in packet(repo)["risks"]]
    assert kinds[0] == "dirty_tree"  # the clean-state check comes first
    assert ("dirty_tree", "2 uncommitted change(s) outside .workbench/: app.py, notes.tmp") in risks
    assert ("stray_file", "notes.tmp (matches handoff.stray in config.yaml)") in risks
    assert ("blocker", "T-002: waiting for the API key") in risks
    assert ("unfinished_task", "T-001 in_progress: Parser") in risks
    assert packet(repo)["changed_files"]["uncommitted"] == ["app.py", "notes.tmp"]
    md = (repo / ".workbench" / "handoff.md").read_text()
    assert "**dirty_tree**" in md and "- app.py (uncommitted)" in md
    # another branch, then a detached HEAD: each is a risk, not hidden
    git(repo, "checkout", "-qb", "feature")
    assert wb(repo, "handoff").returncode == 0
    assert "unexpected_branch" in [r["kind"] for r in packet(repo)["risks"]]
    git(repo, "checkout", "-q", "--detach")
    assert "detached_head" in [r["kind"] for r in bench.handoff()["risks"]]
    # status leads with the packet's next action
    git(repo, "checkout", "-q", "feature")
    status = wb(repo, "status").stdout.splitlines()
    assert status[0].startswith("handoff") and "finish T-001: Parser" in status[0]
    assert json.loads(wb(repo, "status", "--json").stdout)["handoff"]["path"] == ".workbench/handoff.md"


def test_a_broken_packet_fails_validate(bench, repo, wb):
    bench.handoff()
    data = packet(repo)
    data["risks"] = [{"kind": "nonsense", "detail": ""}]
    (repo / ".workbench" / "handoff.json").write_text(json.dumps(data))
    r = wb(repo, "validate")
    assert r.returncode == 5 and "handoff.json: risks[0].kind" in r.stderr


PLAN = ("steps:\n  - description: Deploy\n    tool: deploy\n    args: {env: staging}\n"
        "  - description: Smoke test\n    tool: smoke\n")


def test_resume_after_the_person_committed_in_between(bench, repo, wb, git):
    (repo / "plan.yaml").write_text(PLAN)
    git(repo, "add", "plan.yaml")
    git(repo, "commit", "-qm", "the plan")
    plan_commit = git(repo, "rev-parse", "HEAD").strip()
    bench.add_task("Ship", acceptance=["true"])
    bench.start_task("T-001")
    r = wb(repo, "run", "Ship it", "--plan", "plan.yaml")
    assert r.returncode == 3, r.stdout + r.stderr
    state = bench.wb.load(detect_human=False).docs.state
    where = state["session"]["pending"]["where"]
    assert where["code_head"] == plan_commit and where["branch"] == "main" and where["worktree"] == "main"
    assert where["dirty_files"] == 0
    # the person commits while the session waits
    (repo / "app.py").write_text("print('fixed by hand')\n")
    git(repo, "commit", "-qam", "a fix by the person")
    fix = git(repo, "rev-parse", "--short=10", "HEAD").strip()
    r = wb(repo, "resume", "--result", '{"ok": true}')
    assert r.returncode == 3, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "since the session yielded: 1 new commit(s): " \
        f"{fix} a fix by the person"
    assert lines[1] == "since the session yielded: 1 file(s) changed: app.py"
    resumed = [e for e in events(repo) if e["type"] == "session.resume"][-1]
    assert resumed["payload"]["changed"]["new_commits"][0]["subject"] == "a fix by the person"
    assert resumed["payload"]["changed"]["files_changed"] == ["app.py"]
    # on another branch, resume says so plainly
    git(repo, "checkout", "-qb", "elsewhere")
    r = wb(repo, "resume", "--result", '{"ok": true}')
    assert r.returncode == 0, r.stdout + r.stderr
    assert "since the session yielded: the branch is elsewhere, not main as when the session yielded" in r.stdout
    # the session ended: the handoff packet was written at its end
    data = packet(repo)
    assert data["session"]["kind"] == "harness" and data["session"]["goal"] == "Ship it"
    assert "complete: goal_met" in data["summary"]
    assert [c["source"] for c in data["commands"]["last"]] == ["harness", "harness"]
    assert data["changed_files"]["committed"] == ["app.py"]
    assert data["commits"][0]["subject"] == "a fix by the person"
    assert wb(repo, "replay", "--verify").returncode == 0
    assert wb(repo, "validate").returncode == 0


def test_failures_are_listed(bench, repo, wb):
    bench.add_task("Parser", acceptance=["echo boom; exit 2"])
    bench.start_task("T-001")
    assert as_person(repo, "task", "done", "T-001", "--force").returncode == 0  # a person forces it
    data = bench.handoff()
    assert data["failures"]["items"] == [{"seq": 4, "kind": "acceptance_failed", "what": "T-001",
                                          "error": "`echo boom; exit 2` exited 2"}]
    assert {"kind": "red_check", "detail": "T-001: `echo boom; exit 2` exited 2 (forced done)"} in data["risks"]
    assert data["proof"] == [{"task": "T-001", "seq": 4, "forced": True, "head": data["proof"][0]["head"]}]
    assert "**FORCED**" in (repo / ".workbench" / "handoff.md").read_text()


def test_since_says_plainly_when_the_worktree_or_history_differs(repo, git):
    from workbench.git.changes import since, where_now

    then = where_now(repo)
    assert since(repo, then)["changed"] is False
    assert since(repo, {**then, "worktree": "wt-feature"})["notes"] == [
        "this is worktree main, not wt-feature where the session yielded"]
    (repo / "app.py").write_text("print('amended')\n")
    git(repo, "commit", "-qa", "--amend", "-m", "rewritten")  # the commit the session yielded on is gone
    found = since(repo, then)
    assert found["changed"] and any("no longer contains" in n for n in found["notes"]), found
    # a linked worktree is named by its own name
    git(repo, "worktree", "add", "-q", str(repo.parent / "wt-two"), "-b", "two")
    assert where_now(repo.parent / "wt-two")["worktree"] == "wt-two"


def test_an_aborted_session_leaves_a_packet_too(bench, repo, wb, git):
    (repo / "plan.yaml").write_text(PLAN)
    assert wb(repo, "run", "Ship it", "--plan", "plan.yaml").returncode == 3
    assert wb(repo, "abort", "--reason", "wrong plan").returncode == 0
    data = packet(repo)
    assert "abort: wrong plan" in data["summary"]
    if FILES:  # in the commit that ended it (SQLite commits nothing: the packet is written after its COMMIT)
        assert git(repo, "status", "--porcelain", "--", ".workbench") == ""
        assert git(repo, "log", "-1", "--format=%s").startswith("wb: session aborted")
    assert wb(repo, "handoff").stdout.startswith("unchanged:")  # the same workbench: the same packet


def test_a_refused_done_is_a_failed_attempt_in_the_packet(bench, repo, wb, git, wb_hashes, commits):
    """issue 16 §3: a `wb task done` whose acceptance fails is refused and changes nothing in .workbench/ —
    yet the handoff lists it among the failed attempts, and the task stays an open risk until it is done."""
    bench.add_task("Parser", acceptance=["echo boom >&2; exit 2"])
    bench.start_task("T-001")
    files, count = wb_hashes(repo), commits(repo)
    refused = wb(repo, "task", "done", "T-001")
    assert refused.returncode == 5
    assert wb_hashes(repo) == files and commits(repo) == count  # a refusal changes nothing
    if FILES:  # (a SQLite workbench's .workbench/ is untracked until someone commits its config.yaml)
        assert git(repo, "status", "--porcelain") == ""  # and shows nothing
    data = bench.handoff()
    [failure] = data["failures"]["items"]
    assert failure["kind"] == "acceptance_refused" and failure["what"] == "T-001"
    assert "echo boom >&2; exit 2" in failure["error"] and "exit" in failure["error"]
    assert any(r["kind"] == "red_check" and r["detail"].startswith("T-001: acceptance fails:")
               and r["detail"].endswith("(not done)") for r in data["risks"]), data["risks"]
    schemas.check("handoff", data, "handoff.json")
    assert bench.handoff() == data  # still idempotent
    # once it is done, the refused attempt stays in the history of the session, but is no longer a risk
    assert as_person(repo, "task", "set", "T-001", "acceptance=true").returncode == 0
    bench.done_task("T-001")
    after = bench.handoff()
    assert [f["kind"] for f in after["failures"]["items"]] == ["acceptance_refused"]
    assert not any(r["detail"].startswith("T-001: acceptance fails") for r in after["risks"])


def _history(repo, kind, total):
    """Generated history (bench/_gen.py): `total` events in the log, folded into the snapshots, committed."""
    import subprocess
    import sys
    from pathlib import Path

    gen = Path(__file__).resolve().parents[2] / "bench" / "_gen.py"
    subprocess.run([sys.executable, str(gen), str(repo), kind, str(total)], check=True, capture_output=True)


@files_only_because("its long history is made by bench/_gen.py, which writes the files backend's files")
def test_a_handoff_after_long_history_describes_the_latest_session(bench, repo, wb):
    from workbench.api import Bench
    from workbench.ops.handoff import WINDOW

    bench.add_task("Long done", acceptance=["true"])
    bench.start_task("T-001")
    bench.done_task("T-001")
    bench.run("an old session", steps=[{"description": "Think"}])
    _history(repo, "note", WINDOW + 500)
    bench = Bench.open(repo)
    bench.run("ship the parser", steps=[{"description": "Plan it"}])
    bench.add_task("Parser", acceptance=["true"])
    bench.add_task("Docs")
    bench.start_task("T-002")
    assert wb(repo, "handoff").returncode == 0
    data = packet(repo)
    assert data["session"]["kind"] == "harness" and data["session"]["goal"] == "ship the parser"
    assert data["session"]["began_at_event"] > WINDOW
    assert [t["id"] for t in data["tasks"]["open"]] == ["T-002", "T-003"]
    assert data["next_action"] == {"text": "finish T-002: Parser", "command": "wb task done T-002"}
    assert data["proof"] == [] and data["describes"]["last_event"] == events(repo)[-2]["seq"]


@files_only_because("its long history is made by bench/_gen.py, which writes the files backend's files")
def test_without_a_session_a_handoff_reads_back_a_window_of_events(bench, repo, wb):
    """A workbench only ever written through the API has no session start: the packet describes the last WINDOW
    events (it described the whole history, every task.done of it a proof), and its summary says so."""
    from workbench.api import Bench
    from workbench.ops.handoff import WINDOW

    bench.add_task("Long done", acceptance=["true"])
    bench.start_task("T-001")
    bench.done_task("T-001")
    _history(repo, "note", WINDOW + 500)
    bench = Bench.open(repo)
    bench.add_task("Recent", acceptance=["true"])
    bench.start_task("T-002")
    bench.done_task("T-002")
    bench.add_task("Open")
    assert wb(repo, "handoff").returncode == 0
    data = packet(repo)
    assert data["session"] is None
    assert data["summary"].startswith(f"no session start in the last {WINDOW} events; {WINDOW} event(s), "
                                      "1 task(s) done, 0 failure(s); 2 done, 1 todo")
    assert [p["task"] for p in data["proof"]] == ["T-002"]
    assert [t["id"] for t in data["tasks"]["open"]] == ["T-003"]
    assert wb(repo, "handoff").stdout.startswith("unchanged:")  # still idempotent
