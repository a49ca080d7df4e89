"""`wb task import FILE`: many tasks in one validated transaction and one commit (issue 20, goal 5)."""

from __future__ import annotations

import json

import pytest

from tests import stored
from tests.stored import FILES
from workbench.api import Bench

CHECKLIST = """\
# Parser work

Prose at the margin is skipped, and so are blank lines and headings.

- [ ] Write the parser
  id: T-101
  accept: pytest -q tests/test_parser.py
  accept: ruff check .
  description: a tiny grammar
- [ ] Document it
  depends: T-101, T-001
  owner: human
- [x] Read the spec
- [-] Drop the old parser
* [ ] Review the parser
  kind: review
  reviews: T-101
"""


def board(repo):
    return stored.board(repo)


def test_a_markdown_checklist_is_one_commit_of_valid_tasks(bench, repo, wb, git, commits):
    bench.add_task("Already on the board")
    before = commits(repo)
    (repo / "tasks.md").write_text(CHECKLIST)
    r = wb(repo, "task", "import", "tasks.md")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "imported 5 tasks: T-002…T-006\n"
    assert commits(repo) == before + FILES  # one commit (none on SQLite)
    if FILES:
        assert git(repo, "log", "-1", "--format=%s").strip() == "wb: import 5 tasks (T-002…T-006)"
        assert git(repo, "status", "--porcelain", "--", ".workbench").strip() == ""
    tasks = {t["id"]: t for t in board(repo)["tasks"]}
    parser, docs, spec, drop, review = (tasks[f"T-00{i}"] for i in range(2, 7))
    assert parser["title"] == "Write the parser" and parser["status"] == "todo"
    assert parser["acceptance"] == ["pytest -q tests/test_parser.py", "ruff check ."]
    assert parser["description"] == "a tiny grammar"
    assert docs["depends_on"] == ["T-002", "T-001"]  # the file's T-101 is the task it allocated
    assert docs["owner"] == "human"
    assert spec["status"] == "done" and drop["status"] == "cancelled"
    assert review["kind"] == "review" and review["reviews"] == "T-002" and review["owner"] == "reviewer"
    assert "T-101" not in tasks
    events = json.loads(wb(repo, "log", "--json", "--type", "task.add").stdout)
    assert [e["payload"]["task"]["id"] for e in events] == ["T-001", "T-002", "T-003", "T-004", "T-005", "T-006"]
    assert {e["actor"] for e in events[1:]} == {"agent"}  # the tests' stdin is no terminal: an agent's import
    assert wb(repo, "validate").returncode == 0
    replayed = wb(repo, "replay", "--verify", "--json")
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["matches"] is True
    # what the import brought is trusted on this clone, as `wb task add --accept` is
    assert wb(repo, "task", "next", "--json").returncode == 0


def test_a_json_task_list_keeps_its_own_names_for_dependencies(bench, repo, wb):
    data = [{"id": "T-050", "title": "Parser", "acceptance": ["true"], "created_at": "2020-01-01T00:00:00Z"},
            {"title": "Docs", "depends_on": ["T-050"], "description": "how to use it"},
            {"title": "Review", "kind": "review", "reviews": "T-050"}]
    (repo / "tasks.json").write_text(json.dumps(data))
    r = wb(repo, "task", "import", "tasks.json", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == ["T-001", "T-002", "T-003"]
    tasks = board(repo)["tasks"]
    assert tasks[1]["depends_on"] == ["T-001"] and tasks[2]["reviews"] == "T-001"
    assert tasks[0]["created_at"] != "2020-01-01T00:00:00Z"  # the import's own time: it is added now
    # a board.json's shape works too: {"tasks": [...]}
    (repo / "more.json").write_text(json.dumps({"tasks": [{"title": "After", "depends_on": ["T-002"]}]}))
    r = wb(repo, "task", "import", "more.json", "--json")
    assert json.loads(r.stdout) == ["T-004"] and board(repo)["tasks"][3]["depends_on"] == ["T-002"]


@pytest.mark.parametrize(("text", "line", "says"), [
    ("- [ ] ok\n- [ ] also ok\n  colour: blue\n", 3, "unknown key 'colour'"),
    ("- [ ] ok\n- plain bullet\n", 2, "a list item without a checkbox"),
    ("- [ ] ok\n  - [ ] nested\n", 2, "nested checklist item"),
    ("- [ ] ok\n- [?] maybe\n", 2, "[?]: a checkbox is"),
    ("- [ ] ok\n-[ ] squashed\n", 2, "not a checklist item"),
    ("- [ ] ok\n  just some words\n", 2, "each line is `key: value`"),
    ("- [ ] first\n  depends: T-102\n- [ ] second\n  id: T-102\n", 2, "T-102 comes later in the file"),
    ("- [ ] first\n- [ ] second\n  depends: T-009\n", 3, "no task T-009 on the board or above in the file"),
    ("- [ ] first\n- [x] done\n  accept: make test\n", 2, "done, with acceptance commands"),
    ("- [ ] first\n- [ ]   \n", 2, "title must say something"),
    ("- [ ] first\n- [ ] second\n  owner: nobody\n", 3, "owner: \"nobody\" is not one of"),
    ("- [ ] a\n  id: T-7\n", 2, "is not a task id"),
])
def test_a_bad_markdown_line_refuses_the_whole_import_naming_it(bench, repo, wb, git, wb_hashes, error_line,
                                                                text, line, says):
    bench.add_task("On the board")
    (repo / "tasks.md").write_text(text)
    files, head = wb_hashes(repo), git(repo, "rev-parse", "HEAD")
    r = wb(repo, "task", "import", "tasks.md")
    assert r.returncode == 5, r.stderr
    message = error_line(r.stderr).removeprefix("wb: ")
    assert message.startswith(f"tasks.md: line {line}: ") and says in message, message
    assert message.endswith("nothing was imported")
    assert wb_hashes(repo) == files and git(repo, "rev-parse", "HEAD") == head
    assert [t["id"] for t in board(repo)["tasks"]] == ["T-001"]


@pytest.mark.parametrize(("data", "says"), [
    ([{"title": "a"}, {"title": "b", "status": "finished"}], '[1].status: "finished" is not one of'),
    ([{"title": "a"}, {"title": "b", "colour": "blue"}], "[1]: "),
    ([{"title": "a"}, "b"], "[1]: a task is a JSON object, not str"),
    ([{"title": "a"}, {"title": "b", "proof": {}}], "[1].proof: kept by wb"),
    ([{"title": "a"}, {"title": "b", "status": "in_progress"}], "[1].status: in_progress: a task is imported as"),
    ([{"title": "a"}, {"title": "b", "acceptance": "make"}], "[1].acceptance: "),
    ({"title": "a"}, "expected a JSON list of tasks"),
])
def test_a_bad_json_entry_refuses_the_whole_import_naming_its_index(bench, repo, wb, wb_hashes, error_line,
                                                                    data, says):
    (repo / "tasks.json").write_text(json.dumps(data))
    files = wb_hashes(repo)
    r = wb(repo, "task", "import", "tasks.json")
    assert r.returncode == 5, r.stderr
    message = error_line(r.stderr).removeprefix("wb: ")
    assert says in message and message.startswith("tasks.json: "), message
    assert wb_hashes(repo) == files and board(repo)["tasks"] == []


def test_broken_json_names_the_line_and_a_missing_file_is_a_usage_error(bench, repo, wb, error_line):
    (repo / "tasks.json").write_text('[\n  {"title": "a"},\n  {"title": }\n]\n')
    r = wb(repo, "task", "import", "tasks.json")
    assert r.returncode == 5 and error_line(r.stderr).startswith("wb: tasks.json: line 3 column"), r.stderr
    r = wb(repo, "task", "import", "no-such.md")
    assert r.returncode == 2 and "cannot read no-such.md" in r.stderr


def test_stdin_is_read_for_a_dash_and_the_format_is_sniffed(bench, repo, wb):
    r = wb(repo, "task", "import", "-", "--json", input="- [ ] from a pipe\n  accept: true\n", process=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == ["T-001"]
    r = wb(repo, "task", "import", "-", input='[{"title": "json from a pipe"}]', process=True)
    assert r.returncode == 0 and r.stdout == "imported 1 task: T-002\n", r.stderr
    r = wb(repo, "task", "import", "-", "--format", "markdown", input="# nothing here\n", process=True)
    assert r.returncode == 0 and "nothing to import" in r.stdout
    assert [t["title"] for t in board(repo)["tasks"]] == ["from a pipe", "json from a pipe"]


def test_an_agent_cannot_import_as_a_human(bench, repo, wb, wb_hashes):
    (repo / "tasks.md").write_text("- [ ] a\n")
    files = wb_hashes(repo)
    r = wb(repo, "task", "import", "tasks.md", "--actor", "human")
    assert r.returncode == 5 and "needs a person" in r.stderr
    assert wb_hashes(repo) == files


def test_five_thousand_tasks_import_in_one_commit_that_validates_and_replays(bench, repo, wb, commits, tmp_path):
    lines = []
    for i in range(1, 5001):
        if i <= 4800:
            lines.append(f"- [x] done task {i}\n  id: T-{i:03d}")
        else:
            lines.append(f"- [ ] open task {i}\n  id: T-{i:03d}\n  accept: true\n  depends: T-{i - 1:03d}")
    big = tmp_path / "big.md"
    big.write_text("\n".join(lines) + "\n")
    before = commits(repo)
    r = wb(repo, "task", "import", str(big), process=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "imported 5000 tasks: T-001…T-5000\n"
    assert commits(repo) == before + FILES  # one commit (none on SQLite)
    on_board = board(repo)["tasks"]
    assert on_board[-1]["depends_on"] == ["T-4999"]
    # most of the 4,800 done tasks went on to the board's archive (archive.keep) in the same commit
    tasks = on_board + Bench.open(repo).list_archived()
    assert len(tasks) == 5000 and sum(t["status"] == "done" for t in tasks) == 4800
    assert len({t["id"] for t in tasks}) == 5000
    assert len(on_board) < 5000
    assert wb(repo, "validate", process=True, timeout=300).returncode == 0
    replayed = wb(repo, "replay", "--verify", "--json", process=True, timeout=300)
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["matches"] is True


MORE = """\
- [ ] Parser epic
  id: T-100
- [ ] Lexer
  priority: 1
  labels: core, lexing
  label: fast
  parent: T-100
  assignee: ana
- [ ] Tokens
  parent: T-001
  priority: 0
"""


def test_a_checklist_carries_priority_labels_parent_and_assignee_as_json_does(bench, repo, wb):
    """Issue 31: README's task fields, from a checklist (`unknown key 'priority'` before), as the JSON import
    sets them."""
    bench.add_task("On the board")
    (repo / "more.md").write_text(MORE)
    r = wb(repo, "task", "import", "more.md")
    assert r.returncode == 0, r.stderr
    tasks = {t["id"]: t for t in board(repo)["tasks"]}
    epic, lexer, tokens = tasks["T-002"], tasks["T-003"], tasks["T-004"]
    assert "priority" not in epic and "parent" not in epic
    assert lexer["priority"] == 1 and lexer["labels"] == ["core", "lexing", "fast"]
    assert lexer["parent"] == "T-002" and lexer["assignee"] == "ana"  # the file's T-100 is the epic it added
    assert tokens["parent"] == "T-001" and tokens["priority"] == 0
    # the same tasks as JSON make the same board
    as_json = [{"title": "Parser epic", "id": "T-100"},
               {"title": "Lexer", "priority": 1, "labels": ["core", "lexing", "fast"], "parent": "T-100",
                "assignee": "ana"},
               {"title": "Tokens", "parent": "T-001", "priority": 0}]
    (repo / "more.json").write_text(json.dumps(as_json))
    r = wb(repo, "task", "import", "more.json", "--json")
    assert json.loads(r.stdout) == ["T-005", "T-006", "T-007"], r.stderr
    again = {t["id"]: t for t in board(repo)["tasks"]}
    keys = ("priority", "labels", "assignee")
    assert {k: again["T-006"].get(k) for k in keys} == {k: lexer.get(k) for k in keys}
    assert again["T-006"]["parent"] == "T-005" and again["T-007"]["parent"] == "T-001"
    listed = wb(repo, "task", "list", "--parent", "T-002", "--label", "core", "--assignee", "ana")
    assert listed.returncode == 0 and "Lexer" in listed.stdout, listed.stderr


@pytest.mark.parametrize(("text", "line", "says"), [
    ("- [ ] a\n  priority: high\n", 2, "priority: \"high\" is not a priority (0 highest … 4 lowest)"),
    ("- [ ] a\n  priority: 7\n", 2, "priority: 7 is greater than the maximum of 4"),
    ("- [ ] a\n  parent: T-009\n", 2, "no task T-009 on the board or above in the file"),
    ("- [ ] a\n  labels: core, core\n", 2, "labels: "),
    ("- [ ] a\n  assignee: ana\n  assignee: bo\n", 3, "assignee: said twice for one task"),
])
def test_a_bad_checklist_field_names_its_line(bench, repo, wb, error_line, text, line, says):
    (repo / "more.md").write_text(text)
    r = wb(repo, "task", "import", "more.md")
    assert r.returncode == 5, r.stderr
    message = error_line(r.stderr).removeprefix("wb: ")
    assert message.startswith(f"more.md: line {line}: ") and says in message, message
    assert board(repo)["tasks"] == []


def test_the_checklist_docs_tasks_md_shows_imports_as_it_says(bench, repo, wb):
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "tasks.md").read_text()
    (repo / "more.md").write_text(re.search(r"```markdown\n(.*?)```", doc, re.S).group(1))
    r = wb(repo, "task", "import", "more.md")
    assert r.returncode == 0, r.stderr
    lexer = board(repo)["tasks"][1]
    assert (lexer["parent"], lexer["priority"], lexer["labels"], lexer["assignee"]) == ("T-001", 1, ["core", "lexing"],
                                                                                     "ana")
    said = re.search(r"`(more\.md: line 6: [^`]+)`", doc).group(1)
    lines = doc.split("```markdown\n")[1].split("```")[0].splitlines()
    lines[5] = "  priority: high"
    (repo / "more.md").write_text("\n".join(lines) + "\n")
    r = wb(repo, "task", "import", "more.md")
    assert r.returncode == 5 and r.stderr == f"wb: {said}\n"
