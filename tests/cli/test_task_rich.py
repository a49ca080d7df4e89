"""Issue 22 §1: a richer task — priority, labels, parent (an epic is done only once its children are), assignee,
comments — and `task list` filters, tree and paging, `task next` by priority, delete of a cancelled task."""

from __future__ import annotations

import json

from tests import stored


def listed(wb, repo, *args):
    r = wb(repo, "task", "list", *args, "--json")
    assert r.returncode == 0, r.stderr
    return [t["id"] for t in json.loads(r.stdout)]


def test_priority_labels_parent_assignee_filters_and_next(bench, repo, wb, error_line):
    assert wb(repo, "task", "add", "Epic: parser").returncode == 0  # T-001
    r = wb(repo, "task", "add", "Lexer", "--parent", "T-001", "--priority", "3", "--label", "core",
           "--label", "lexing", "--assignee", "ana", "--json")
    lexer = json.loads(r.stdout)
    assert lexer["priority"] == 3 and lexer["labels"] == ["core", "lexing"] and lexer["parent"] == "T-001"
    assert lexer["assignee"] == "ana"
    wb(repo, "task", "add", "Grammar", "--parent", "T-001", "--priority", "0", "--label", "core")  # T-003
    wb(repo, "task", "add", "Docs", "--depends-on", "T-002")  # T-004, priority 2 by default
    r = wb(repo, "task", "add", "Bad", "--priority", "7")
    assert r.returncode != 0 and "priority" in r.stderr, r.stderr
    r = wb(repo, "task", "add", "Orphan", "--parent", "T-099")
    assert r.returncode == 5 and "T-099" in error_line(r.stderr)

    # next: by priority, then board order (T-003 is priority 0)
    r = wb(repo, "task", "next", "--json")
    assert json.loads(r.stdout)["task"]["id"] == "T-003"

    assert listed(wb, repo, "--label", "core") == ["T-002", "T-003"]
    assert listed(wb, repo, "--priority", "0") == ["T-003"]
    assert listed(wb, repo, "--parent", "T-001") == ["T-002", "T-003"]
    assert listed(wb, repo, "--assignee", "ana") == ["T-002"]
    assert listed(wb, repo, "--search", "GRAM") == ["T-003"]
    assert listed(wb, repo, "--blocked") == ["T-004"]  # waits on T-002
    # issue 31: the epic T-001 is not ready while its children are open (the one rule of `wb task next`)
    assert listed(wb, repo, "--ready") == ["T-002", "T-003"]

    text = wb(repo, "task", "list").stdout
    assert "T-002 (todo)" in text.splitlines()[4]  # T-004's line shows what it waits on
    r = wb(repo, "task", "list", "--limit", "2")
    assert r.stdout.splitlines()[-1] == "2 more (wb task list --limit N, or --json)", r.stdout
    tree = wb(repo, "task", "list", "--tree").stdout.splitlines()[1:]
    assert tree[0].startswith("T-001") and tree[1].startswith("  T-002") and tree[2].startswith("  T-003"), tree

    assert wb(repo, "task", "set", "T-002", "priority=1", "labels=[\"core\"]").returncode == 0
    assert json.loads(wb(repo, "task", "show", "T-002", "--json").stdout)["priority"] == 1

    # comments: an event each, shown by task show
    assert wb(repo, "task", "comment", "T-002", "Use a table-driven lexer").returncode == 0
    shown = wb(repo, "task", "show", "T-002").stdout
    assert "Use a table-driven lexer" in shown
    log = stored.events(repo)
    assert log[-1]["type"] == "task.comment" and log[-1]["payload"] == {"id": "T-002",
                                                                          "text": "Use a table-driven lexer"}

    # an epic is done only when its children are done or cancelled
    r = wb(repo, "task", "done", "T-001")
    assert r.returncode == 5 and "T-002 (todo)" in error_line(r.stderr) and "T-003" in error_line(r.stderr)
    for tid in ("T-003", "T-002"):
        assert wb(repo, "task", "start", tid).returncode == 0
        assert wb(repo, "task", "done", tid).returncode == 0
    assert wb(repo, "task", "done", "T-001").returncode == 0
    assert wb(repo, "replay", "--verify").returncode == 0


def test_delete_only_a_cancelled_task(bench, repo, wb, error_line):
    bench.add_task("Keep")
    bench.add_task("Drop")
    r = wb(repo, "task", "delete", "T-002")
    assert r.returncode == 5 and "cancelled" in error_line(r.stderr)
    assert wb(repo, "task", "set", "T-002", "status=cancelled").returncode == 0
    r = wb(repo, "task", "delete", "T-002")
    assert r.returncode == 0, r.stderr
    assert listed(wb, repo) == ["T-001"]
    assert "T-002" in listed(wb, repo, "--all")  # in the archive, not lost
    assert wb(repo, "replay", "--verify").returncode == 0


def test_import_takes_the_new_fields_and_refuses_comments(bench, repo, wb, tmp_path):
    good = tmp_path / "tasks.json"
    good.write_text(json.dumps([{"title": "Lexer", "priority": 0, "labels": ["core"], "assignee": "ana"}]))
    assert wb(repo, "task", "import", str(good)).returncode == 0
    task = json.loads(wb(repo, "task", "show", "T-001", "--json").stdout)
    assert (task["priority"], task["labels"], task["assignee"]) == (0, ["core"], "ana")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"title": "X", "comments": [{"text": "hi"}]}]))
    r = wb(repo, "task", "import", str(bad))
    assert r.returncode == 5 and "comments" in r.stderr, r.stderr
