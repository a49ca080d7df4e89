"""What wb keeps outside the work tree survives the user's git (issue 29): `git worktree remove` deletes a linked
worktree's private git dir (`.git/worktrees/NAME/`), so what must outlive it (a SQLite workbench's database,
the files backend's pending journal) is kept in the common git dir, under `.git/wb/worktrees/<key>/`, where
a worktree re-added at the same path finds it. A workbench kept in the old place moves there on first open.

Every test runs real git (`worktree add/remove/prune`, `clean -fdx`) and the real `wb` CLI; the backend is
named by each test (`wb init --backend ...`), so the module runs the same on both passes of the suite.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from tests.conftest import run_git, run_wb
from tests.git_scenarios.helpers import assert_sound


def _sqlite_repo(repo: Path) -> None:
    out = run_wb(repo, "init", "--backend", "sqlite")
    assert out.returncode == 0, out.stderr
    assert run_git(repo, "status", "--porcelain") == ""  # config.yaml committed by wb init (issue 31)


def _notes(root: Path) -> list[str]:
    out = run_wb(root, "log", "--json", "--type", "note.add", "--all")
    assert out.returncode == 0, out.stdout + out.stderr
    return sorted(e["payload"]["text"] for e in json.loads(out.stdout))


def _events_in(db: Path) -> list[str]:
    conn = sqlite3.connect(str(db))
    try:
        return sorted(json.loads(line)["payload"]["text"] for (line,) in
                      conn.execute("SELECT line FROM events WHERE type = 'note.add'"))
    finally:
        conn.close()


def _private_git_dir(wt: Path) -> Path:
    return Path(run_git(wt, "rev-parse", "--absolute-git-dir").strip())


def test_a_sqlite_workbench_of_a_linked_worktree_survives_worktree_remove(repo: Path) -> None:
    _sqlite_repo(repo)
    wt = repo.parent / "wt"
    run_git(repo, "worktree", "add", "-q", "-b", "wt", str(wt))
    assert run_wb(wt, "init", "--backend", "sqlite").returncode == 0
    acknowledged = [f"note {i}" for i in range(25)]
    for text in acknowledged:
        out = run_wb(wt, "note", text)
        assert out.returncode == 0, out.stderr
    private = _private_git_dir(wt)
    assert not (private / "wb" / "workbench.sqlite3").exists(), "the database is still in the private git dir"
    run_git(repo, "worktree", "remove", "--force", str(wt))
    assert not private.exists()
    run_git(repo, "worktree", "prune")
    run_git(repo, "worktree", "add", "-q", str(wt), "wt")
    assert _notes(wt) == sorted(acknowledged)
    assert _notes(repo) == []  # the main worktree's workbench is its own


def test_a_database_in_the_old_place_moves_on_first_open(repo: Path) -> None:
    """A workbench made before this change, in `.git/worktrees/NAME/wb/`, opens and moves out of the private
    git dir on its first open, so a later `git worktree remove` does not take it."""
    _sqlite_repo(repo)
    wt = repo.parent / "wt"
    run_git(repo, "worktree", "add", "-q", "-b", "wt", str(wt))
    assert run_wb(wt, "init", "--backend", "sqlite").returncode == 0
    assert run_wb(wt, "note", "before the move").returncode == 0
    from workbench.store.spool import keep_dir_of

    kept = Path(keep_dir_of(str(wt), str(_private_git_dir(wt)))) / "workbench.sqlite3"
    old = _private_git_dir(wt) / "wb" / "workbench.sqlite3"
    # put it back where the older wb kept it, with its WAL and shared memory
    old.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{kept}{suffix}").exists():
            os.replace(f"{kept}{suffix}", f"{old}{suffix}")
    assert _events_in(old) == ["before the move"]
    out = run_wb(wt, "note", "after the move")
    assert out.returncode == 0, out.stderr
    assert kept.exists()
    assert not [p.name for p in old.parent.iterdir() if p.name.startswith("workbench.sqlite3")]
    assert _notes(wt) == ["after the move", "before the move"]
    run_git(repo, "worktree", "remove", "--force", str(wt))
    run_git(repo, "worktree", "add", "-q", str(wt), "wt")
    assert _notes(wt) == ["after the move", "before the move"]


def test_a_worktree_re_added_elsewhere_is_told_where_its_database_is(repo: Path) -> None:
    """Re-added at another path (or moved by hand), the worktree's key differs: one line names the database
    kept for the old path and the command that brings it."""
    _sqlite_repo(repo)
    wt = repo.parent / "wt"
    run_git(repo, "worktree", "add", "-q", "-b", "wt", str(wt))
    assert run_wb(wt, "init", "--backend", "sqlite").returncode == 0
    assert run_wb(wt, "note", "kept").returncode == 0
    run_git(repo, "worktree", "remove", "--force", str(wt))
    elsewhere = repo.parent / "elsewhere"
    run_git(repo, "worktree", "add", "-q", str(elsewhere), "wt")
    out = run_wb(elsewhere, "status")
    assert out.returncode != 0
    line = out.stderr.strip().splitlines()[-1]
    assert str(wt) in line and "mv " in line, out.stderr
    command = line[line.index("mv "):].split("`")[0]
    subprocess.run(["bash", "-c", command], check=True)
    assert _notes(elsewhere) == ["kept"]


def test_the_pending_journal_of_a_removed_worktree_is_kept(repo: Path) -> None:
    """Files backend: an event acknowledged only in the pending journal (written mid-rebase, where wb does not
    touch the work tree) outlives `git worktree remove` and lands when the worktree is added again."""
    assert run_wb(repo, "init", "--backend", "files").returncode == 0
    wt = repo.parent / "wt"
    run_git(repo, "worktree", "add", "-q", "-b", "wt", str(wt))
    assert run_wb(wt, "note", "committed").returncode == 0
    run_git(wt, "checkout", "-q", "--detach")  # a detached HEAD: events go to the journal alone
    out = run_wb(wt, "note", "journal only")
    assert out.returncode == 0, out.stderr
    assert not (_private_git_dir(wt) / "wb" / "pending.jsonl").exists(), "the journal is in the private git dir"
    run_git(repo, "worktree", "remove", "--force", str(wt))
    run_git(repo, "worktree", "prune")
    run_git(repo, "worktree", "add", "-q", str(wt), "wt")
    out = run_wb(wt, "note", "after")  # the first write on the branch lands the journal
    assert out.returncode == 0, out.stderr
    assert_sound(wt, acknowledged=["committed", "journal only", "after"])


def test_git_clean_fdx_takes_a_database_in_the_work_tree_and_wb_says_so(repo: Path) -> None:
    """`git clean -fdx` removes ignored files: a database named inside the work tree (`wb init --db`) goes with
    them. wb cannot stop git; it says in one line what happened and how to start again."""
    out = run_wb(repo, "init", "--backend", "sqlite", "--db", ".workbench/workbench.sqlite3")
    assert out.returncode == 0, out.stderr
    run_git(repo, "add", ".workbench")  # the database in .workbench/: wb commits nothing there, a person does
    run_git(repo, "commit", "-q", "-m", "config")
    assert run_wb(repo, "note", "in the work tree").returncode == 0
    run_git(repo, "clean", "-fdxq")
    out = run_wb(repo, "status")
    assert out.returncode != 0
    line = out.stderr.strip().splitlines()[-1]
    assert "git clean -x" in line and "wb init --backend sqlite" in line, out.stderr


def test_git_clean_fdx_leaves_the_default_places_alone(repo: Path) -> None:
    _sqlite_repo(repo)
    assert run_wb(repo, "note", "main").returncode == 0
    wt = repo.parent / "wt"
    run_git(repo, "worktree", "add", "-q", "-b", "wt", str(wt))
    assert run_wb(wt, "init", "--backend", "sqlite").returncode == 0
    assert run_wb(wt, "note", "linked").returncode == 0
    run_git(repo, "clean", "-fdxq")
    run_git(wt, "clean", "-fdxq")
    assert _notes(repo) == ["main"]
    assert _notes(wt) == ["linked"]


def test_a_worktree_added_again_at_its_path_keeps_its_name(repo: Path) -> None:
    """The worktree's name in a sync's task.renumber events (`wb task show OLD` resolves where it was renumbered)
    is kept with the journal: the same after `git worktree remove` and `add` at the same path."""
    from workbench.git.repo import GitRepo

    assert run_wb(repo, "init", "--backend", "files").returncode == 0
    wt = repo.parent / "wt"
    run_git(repo, "worktree", "add", "-q", "-b", "wt", str(wt))
    name = GitRepo(wt).worktree_id()
    run_git(repo, "worktree", "remove", "--force", str(wt))
    run_git(repo, "worktree", "add", "-q", str(wt), "wt")
    assert GitRepo(wt).worktree_id() == name
    assert GitRepo(repo).worktree_id() != name


def test_a_pending_journal_in_the_old_place_moves_on_first_open(repo: Path) -> None:
    """Files backend: a journal an older wb left in `.git/worktrees/NAME/wb/` (an event acknowledged on a detached
    HEAD) is moved out on the next command, and a later `git worktree remove` does not take it."""
    from workbench.store.spool import keep_dir_of

    assert run_wb(repo, "init", "--backend", "files").returncode == 0
    wt = repo.parent / "wt"
    run_git(repo, "worktree", "add", "-q", "-b", "wt", str(wt))
    run_git(wt, "checkout", "-q", "--detach")
    assert run_wb(wt, "note", "journal only").returncode == 0
    private = _private_git_dir(wt)
    kept = Path(keep_dir_of(str(wt), str(private)))
    for name in ("pending.jsonl", "committed.jsonl"):
        if (kept / name).exists():
            os.replace(kept / name, private / "wb" / name)  # where the older wb kept it
    assert (private / "wb" / "pending.jsonl").exists()
    out = run_wb(wt, "status")
    assert out.returncode == 0, out.stderr
    assert not (private / "wb" / "pending.jsonl").exists() and (kept / "pending.jsonl").exists()
    run_git(repo, "worktree", "remove", "--force", str(wt))
    run_git(repo, "worktree", "add", "-q", str(wt), "wt")
    assert run_wb(wt, "note", "after").returncode == 0
    assert_sound(wt, acknowledged=["journal only", "after"])
