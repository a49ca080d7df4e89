"""`wb init`: creates .workbench/, commits it, and is idempotent."""

from __future__ import annotations

import json


def test_init_creates_the_workbench_and_one_commit(repo, wb, git, commits):
    before = commits(repo)
    r = wb(repo, "init")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.startswith(f"Initialized a workbench in {repo / '.workbench'}")
    wbdir = repo / ".workbench"
    for name in ("config.yaml", "state.md", "board.json", "events.jsonl", "calls.jsonl", ".gitignore",
                 "artifacts/.gitkeep"):
        assert (wbdir / name).is_file(), name
    assert commits(repo) == before + 1
    assert git(repo, "log", "-1", "--format=%s").strip() == "wb: init"
    assert ".workbench/" not in git(repo, "status", "--porcelain", "--untracked-files=all")
    board = json.loads((wbdir / "board.json").read_text())
    assert board == {"schema_version": 1, "last_event": 1, "tasks": []}
    assert (wbdir / "events.jsonl").read_text().count("\n") == 1
    assert wb(repo, "validate").returncode == 0


def test_init_twice_changes_nothing(repo, wb, git, commits, wb_hashes):
    assert wb(repo, "init").returncode == 0
    count = commits(repo)
    files = wb_hashes(repo)
    r = wb(repo, "init")
    assert r.returncode == 0, r.stderr
    assert "nothing changed" in r.stdout
    assert r.stderr == ""
    assert commits(repo) == count
    tracked = {k: v for k, v in files.items() if not k.startswith(".cache/")}
    assert {k: v for k, v in wb_hashes(repo).items() if not k.startswith(".cache/")} == tracked


def test_init_json_and_from_a_subdirectory(repo, wb):
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    r = wb(sub, "init", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["workbench"] == str(repo)
    assert data["created"] is True
    assert isinstance(data["commit"], str) and len(data["commit"]) == 40
    assert data["warnings"] == []
    assert (repo / ".workbench").is_dir() and not (sub / ".workbench").exists()


def test_init_with_dash_C(repo, tmp_path, wb):
    r = wb(tmp_path, "-C", str(repo), "init")
    assert r.returncode == 0, r.stderr
    assert (repo / ".workbench" / "state.md").is_file()


def test_init_completes_a_half_made_workbench(repo, wb, git):
    assert wb(repo, "init").returncode == 0
    (repo / ".workbench" / "calls.jsonl").unlink()
    git(repo, "rm", "-q", "--cached", ".workbench/calls.jsonl")
    git(repo, "commit", "-q", "-m", "lost calls.jsonl")
    r = wb(repo, "init")
    assert r.returncode == 0, r.stderr
    assert (repo / ".workbench" / "calls.jsonl").exists()
    assert ".workbench/calls.jsonl" in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert ".workbench/" not in git(repo, "status", "--porcelain", "--untracked-files=all")
