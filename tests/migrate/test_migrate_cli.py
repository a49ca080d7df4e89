"""`wb migrate` end to end on the version-0 fixture, in real git repositories, through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import files_only, head_count, one_error_line, run_git, run_wb

from .conftest import tree_hashes, v0_repo_at


def events(repo: Path) -> list[dict]:
    return [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_text().splitlines()]


def outside_status(repo: Path) -> str:
    out = run_git(repo, "status", "--porcelain", "--untracked-files=all")
    return "\n".join(line for line in out.splitlines() if ".workbench/" not in line)


def assert_sound(repo: Path) -> None:
    for args in (("validate",), ("replay", "--verify")):
        r = run_wb(repo, *args)
        assert r.returncode == 0, (args, r.stdout, r.stderr)


def test_status_on_a_version_0_workbench_says_run_wb_migrate(v0_repo):
    r = run_wb(v0_repo, "status")
    assert r.returncode == 5
    assert one_error_line(r.stderr) == ("wb: state.md: no schema_version (a wb 0.0.x file, version 0; this wb "
                                        "reads 2); run `wb migrate`")


def test_dry_run_shows_the_changes_and_writes_nothing(v0_repo):
    before = tree_hashes(v0_repo)
    r = run_wb(v0_repo, "migrate", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert tree_hashes(v0_repo) == before, "--dry-run wrote something"
    out = r.stdout
    assert out.startswith("dry run: `wb migrate` would make these changes (nothing was written)\n")
    for line in ("config.yaml         0 → 1", "  + schema_version: 1", '  ~ git.commit: true → "every"',
                 "state.md            0 → 2", '  > risks → blockers: ["T-002: GET /api/health times out after 30s"]',
                 '  > current_task → active_task_id: "T-003"', '  - agent: "task-processor"',
                 "board.json          0 → 2", '  ~ tasks[T-001].status: "completed" → "done"',
                 '  + tasks[T-002].kind: "build"', "events.jsonl        created (version 1)",
                 "  + events: workbench.init, migration.apply", "calls.jsonl         created (version 1)"):
        assert line in out.splitlines(), line
    assert "committed" not in out


def test_dry_run_json(v0_repo):
    r = run_wb(v0_repo, "migrate", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["dry_run"] is True and data["changed"] is True and data["commit"] is None
    assert data["versions"] == {"config.yaml": 0, "state.md": 0, "board.json": 0, "events.jsonl": None,
                                "calls.jsonl": None}
    assert data["current"] == {"config.yaml": 1, "state.md": 2, "board.json": 2, "events.jsonl": 1,
                               "calls.jsonl": 1}
    files = {f["file"]: f for f in data["files"]}
    assert (files["state.md"]["from"], files["state.md"]["to"]) == (0, 2)
    assert {"op": "move", "path": "blockers", "from": "risks",
            "new": ["T-002: GET /api/health times out after 30s"]} in files["state.md"]["changes"]
    assert [e["type"] for e in data["events"]] == ["workbench.init", "migration.apply"]


def test_migrate_brings_version_0_to_the_current_formats(v0_repo):
    wbdir = v0_repo / ".workbench"
    (v0_repo / "README.md").write_text("# a project, edited\n")  # the user's own changes stay as they are
    (v0_repo / "staged.txt").write_text("staged\n")
    run_git(v0_repo, "add", "staged.txt")
    user = outside_status(v0_repo)
    count = head_count(v0_repo)

    r = run_wb(v0_repo, "migrate")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.startswith("migrated .workbench/\n") and "\ncommitted " in r.stdout
    assert_sound(v0_repo)

    # one commit, holding only .workbench/ paths; git status clean there; the user's changes untouched
    assert head_count(v0_repo) == count + 1
    assert run_git(v0_repo, "log", "-1", "--format=%s").startswith("wb: migrate config.yaml 0→1")
    assert "Wb-Event: 2" in run_git(v0_repo, "log", "-1", "--format=%b")
    paths = run_git(v0_repo, "show", "--name-only", "--format=", "HEAD").split()
    assert paths and all(p.startswith(".workbench/") for p in paths), paths
    assert sorted(paths) == [".workbench/" + name for name in (
        ".gitattributes", ".gitignore", "artifacts/.gitkeep", "board.json", "calls.jsonl", "config.yaml",
        "events.jsonl", "state.md")]
    assert ".workbench/" not in run_git(v0_repo, "status", "--porcelain", "--untracked-files=all")
    assert outside_status(v0_repo) == user
    assert not (wbdir / ".migrate.json").exists()
    # as `wb init` would have: git shows the workbench by meaning and merges it by id
    textconv = run_git(v0_repo, "config", "--local", "diff.wb-board.textconv")
    assert "wb/driver\" \"$@\"' wb-driver textconv board" in textconv

    # the log: an init, then migration.apply naming the versions
    log = events(v0_repo)
    assert [e["type"] for e in log] == ["workbench.init", "migration.apply"]
    apply = log[-1]["payload"]
    assert apply["from"] == {"config.yaml": 0, "calls.jsonl": None, "state.md": 0, "board.json": 0,
                             "events.jsonl": None}
    assert apply["to"] == {"config.yaml": 1, "calls.jsonl": 1, "state.md": 2, "board.json": 2, "events.jsonl": 1}
    # the files: current versions, the human's config comments kept
    assert "  commit: every          # wb 0.0.x: true = one commit per change" in (wbdir / "config.yaml").read_text()
    status = json.loads(run_wb(v0_repo, "status", "--json").stdout)
    assert status["active_task"]["id"] == "T-003"
    assert status["blockers"] == ["T-002: GET /api/health times out after 30s"]
    assert status["counters"]["tokens_consumed"] == 12450
    assert status["board"]["by_status"] == {"todo": 1, "in_progress": 1, "blocked": 1, "done": 1, "cancelled": 0}
    # what `wb init` would make: it finds nothing to add
    r = run_wb(v0_repo, "init")
    assert r.returncode == 0 and "nothing changed" in r.stdout, (r.stdout, r.stderr)
    assert head_count(v0_repo) == count + 1


def test_a_second_migrate_changes_nothing(v0_repo):
    assert run_wb(v0_repo, "migrate").returncode == 0
    count = head_count(v0_repo)
    before = tree_hashes(v0_repo)
    r = run_wb(v0_repo, "migrate")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("already current (config.yaml 1, state.md 2, board.json 2, events.jsonl 1, calls.jsonl 1): "
                        "nothing to migrate\n")
    assert head_count(v0_repo) == count
    assert tree_hashes(v0_repo) == before
    data = json.loads(run_wb(v0_repo, "migrate", "--json").stdout)
    assert data["changed"] is False and data["files"] == [] and data["commit"] is None


def test_the_migrated_workbench_takes_the_next_mutations(v0_repo):
    assert run_wb(v0_repo, "migrate").returncode == 0
    r = run_wb(v0_repo, "task", "add", "Write the postmortem")
    assert r.returncode == 0, r.stderr
    assert "T-005" in r.stdout
    assert run_wb(v0_repo, "task", "start", "T-002").returncode == 0
    assert run_wb(v0_repo, "note", "retrying the health check").returncode == 0
    assert_sound(v0_repo)
    assert [e["type"] for e in events(v0_repo)][-3:] == ["task.add", "task.start", "note.add"]


@files_only  # every file's bytes and git's commits; the SQLite one: test_migrate_sqlite.py
def test_a_current_workbench_is_left_alone(repo):
    assert run_wb(repo, "init").returncode == 0
    count = head_count(repo)
    before = tree_hashes(repo)
    r = run_wb(repo, "migrate")
    assert r.returncode == 0, r.stderr
    assert "nothing to migrate" in r.stdout
    assert head_count(repo) == count and tree_hashes(repo) == before


def test_a_version_0_event_log_is_upcast_and_kept(v0_repo):
    lines = [{"ts": "2026-03-25T14:30:00Z", "type": "session_start", "payload": {"budget": 50000}},
             {"ts": "2026-03-25T14:31:15Z", "type": "task_completed", "payload": {"task": "T-001"}}]
    log = v0_repo / ".workbench" / "events.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = run_wb(v0_repo, "migrate", "--dry-run")
    assert '  ~ lines: "2 pre-release lines" → "2 legacy.event events (seq 1-2, hash-chained)"' in r.stdout
    r = run_wb(v0_repo, "migrate")
    assert r.returncode == 0, r.stderr
    assert_sound(v0_repo)
    got = events(v0_repo)
    assert [(e["seq"], e["type"]) for e in got] == [(1, "legacy.event"), (2, "legacy.event"), (3, "migration.apply")]
    assert [e["payload"]["record"] for e in got[:2]] == lines


def test_a_version_0_workbench_without_config_yaml_stays_on_the_defaults(v0_repo):
    run_git(v0_repo, "rm", "-q", ".workbench/config.yaml")
    run_git(v0_repo, "commit", "-qm", "no settings")
    r = run_wb(v0_repo, "migrate")
    assert r.returncode == 0, r.stderr
    assert "config.yaml" not in r.stdout and not (v0_repo / ".workbench" / "config.yaml").exists()
    assert_sound(v0_repo)


def test_git_commit_off_migrates_without_a_commit(tmp_path):
    repo = v0_repo_at(tmp_path / "repo")
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("commit: true ", "commit: false"))
    run_git(repo, "commit", "-qam", "commit: false")
    count = head_count(repo)
    r = run_wb(repo, "migrate")
    assert r.returncode == 0, r.stderr
    assert "committed" not in r.stdout
    assert head_count(repo) == count
    assert "commit: off" in config.read_text()
    assert_sound(repo)


# -- refusals --------------------------------------------------------------------------------------------
def test_a_newer_board_is_refused_and_nothing_is_touched(v0_repo):
    board = v0_repo / ".workbench" / "board.json"
    board.write_text(json.dumps({"schema_version": 99, **json.loads(board.read_text())}))
    before = tree_hashes(v0_repo)
    for args in (("migrate",), ("migrate", "--dry-run")):
        r = run_wb(v0_repo, *args)
        assert r.returncode == 5, r.stdout
        line = one_error_line(r.stderr)
        assert line == ("wb: board.json: schema_version 99 is newer than this wb understands (2); upgrade wb. "
                        "Nothing was changed")
        assert tree_hashes(v0_repo) == before


@files_only  # edits .workbench/'s files and compares their bytes; SQLite: test_migrate_sqlite.py
@pytest.mark.parametrize("file, edit, version", [
    ("state.md", lambda t: t.replace("schema_version: 2", "schema_version: 3"), 3),
    ("config.yaml", lambda t: t.replace("schema_version: 1", "schema_version: 7"), 7),
    ("events.jsonl", lambda t: t + t.splitlines()[-1].replace('"schema_version":1', '"schema_version":3') + "\n", 3),
])
def test_a_newer_file_of_a_current_workbench_is_refused(repo, file, edit, version):
    assert run_wb(repo, "init").returncode == 0
    path = repo / ".workbench" / file
    path.write_text(edit(path.read_text()))
    before = tree_hashes(repo)
    r = run_wb(repo, "migrate")
    assert r.returncode == 5
    current = 2 if file == "state.md" else 1
    assert one_error_line(r.stderr).startswith(
        f"wb: {file}: schema_version {version} is newer than this wb understands ({current}); upgrade wb")
    assert tree_hashes(repo) == before


def test_a_file_the_migration_cannot_place_is_refused_before_anything_is_written(v0_repo):
    board = v0_repo / ".workbench" / "board.json"
    board.write_text(json.dumps({"owner": "me", **json.loads(board.read_text())}))
    before = tree_hashes(v0_repo)
    r = run_wb(v0_repo, "migrate")
    assert r.returncode == 5
    assert one_error_line(r.stderr) == "wb: board.json: (top level): unknown key 'owner' (not allowed by the schema)"
    assert {k: v for k, v in tree_hashes(v0_repo).items() if k != ".workbench/.lock"} == before


def test_migrate_outside_a_workbench(repo):
    r = run_wb(repo, "migrate")
    assert r.returncode == 1
    assert "run `wb init` first" in one_error_line(r.stderr)
