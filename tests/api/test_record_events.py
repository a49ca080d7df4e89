"""`Bench.record_events` and `Bench.import_tasks`: the bulk paths of the Python API (issue 20, goal 5)."""

from __future__ import annotations

import pytest

from tests import stored
from tests.stored import FILES
from workbench.errors import Refused, UsageError


def events_of(repo):
    return stored.events(repo)


def test_many_events_are_one_transaction_and_one_commit(bench, repo, commits, git):
    before, seq = commits(repo), len(events_of(repo))
    batch = [{"type": "agent.tool_call", "payload": {"tool": "Bash", "n": i}} for i in range(300)]
    logged = bench.record_events(batch)
    assert [e["payload"]["n"] for e in logged] == list(range(300))
    assert [e["seq"] for e in logged] == list(range(seq + 1, seq + 301))
    assert commits(repo) == before + FILES and (bench.last.commit is not None) == FILES
    if FILES:
        assert git(repo, "log", "-1", "--format=%s").strip() == "wb: record 300 events (agent.tool_call)"
    assert bench.validate() == [] and bench.replay().mismatches == []
    assert bench.record_events([]) == [] and commits(repo) == before + FILES


@pytest.mark.parametrize(("bad", "error", "says"), [
    ({"type": "task.add", "payload": {}}, Refused, "events[2]: event type task.add: wb folds it"),
    ({"type": "Not A Type", "payload": {}}, UsageError, "events[2]: event type 'Not A Type'"),
    ({"type": "agent.x", "payload": ["a list"]}, UsageError, "events[2]: an event payload is a JSON object"),
    ({"type": "agent.x", "payload": {}, "seq": 9}, UsageError, "events[2]: unknown key seq"),
    ("agent.x", UsageError, "events[2]: an event is a mapping"),
])
def test_one_bad_event_refuses_them_all(bench, repo, commits, wb_hashes, bad, error, says):
    files, before = wb_hashes(repo), commits(repo)
    batch = [{"type": "agent.ok", "payload": {"i": 0}}, {"type": "agent.ok", "payload": {"i": 1}}, bad,
             {"type": "agent.ok", "payload": {"i": 3}}]
    with pytest.raises(error) as raised:
        bench.record_events(batch)
    assert str(raised.value).startswith(says)
    assert wb_hashes(repo) == files and commits(repo) == before


def test_record_events_redacts_and_clips_as_record_event_does(bench, repo):
    logged = bench.record_events([{"type": "agent.note", "payload": {"text": "x" * 5000}}])
    assert logged[0]["payload"]["text"]["truncated"] is True


def test_import_tasks_takes_a_list_and_refuses_by_index(bench, repo, wb_hashes):
    added = bench.import_tasks([{"title": "Parser", "id": "T-900", "acceptance": ["true"]},
                                {"title": "Docs", "depends_on": ["T-900"]}])
    assert [t["id"] for t in added] == ["T-001", "T-002"] and added[1]["depends_on"] == ["T-001"]
    assert bench.last.summary == "import 2 tasks (T-001…T-002)"
    files = wb_hashes(repo)
    with pytest.raises(Refused, match=r"^tasks: \[1\]: a task's title must say something"):
        bench.import_tasks([{"title": "fine"}, {"title": 7}])
    assert wb_hashes(repo) == files
    assert bench.import_tasks([]) == [] and bench.last.commit is None


def test_small_and_large_payloads_are_redacted_alike(bench, repo, monkeypatch):
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("redact: []", "redact: [DEPLOY_TOKEN]"))
    monkeypatch.setenv("DEPLOY_TOKEN", "s3cr3t-value")
    from workbench.api import Bench

    fresh = Bench.open(repo)
    token = "ghp_" + "A1b2C3d4" * 5  # a GitHub token's format, recognised without being listed
    logged = fresh.record_events([
        {"type": "agent.small", "payload": {"cmd": "deploy --token s3cr3t-value", token: (1, 2)}},
        {"type": "agent.large", "payload": {"result": "a" * 2040 + "s3cr3t-value" + "b" * 3000}},
    ])
    text = stored.event_bytes(repo).decode()
    assert "s3cr3t" not in text and token not in text
    assert logged[0]["payload"] == {"cmd": "deploy --token [redacted]", "[redacted]": [1, 2]}  # a key too
    assert logged[1]["payload"]["result"]["truncated"] is True
