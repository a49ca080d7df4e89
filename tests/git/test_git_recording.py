"""Git recording (CONTRACT §3): one commit per mutation holding only .workbench/, the user's work untouched,
and the safe outcomes for unborn branches, merges in progress, detached HEADs, `git.commit: off` and
`git.ref`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import stored
from tests.conftest import about_git
from workbench.api import Bench, init

pytestmark = about_git  # the git commits wb makes of .workbench/

WB = ".workbench/"


def user_view(git, repo: Path) -> dict[str, str]:
    """Everything git says about the user's own changes, outside .workbench/."""
    status = [line for line in git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
              if WB not in line]
    return {
        "staged": git(repo, "diff", "--cached", "--", ".", ":!.workbench"),
        "unstaged": git(repo, "diff", "--", ".", ":!.workbench"),
        "status": "\n".join(status),
        "index": "\n".join(line for line in git(repo, "ls-files", "-s").splitlines() if WB not in line),
    }


def names_per_commit(git, repo: Path, rev_range: str) -> list[list[str]]:
    """The paths each commit in rev_range touches, newest first."""
    out = git(repo, "log", "--format=@@%H", "--name-only", "-z", rev_range)
    chunks = [c for c in out.split("@@") if c.strip("\0\n")]
    result = []
    for chunk in chunks:
        lines = chunk.replace("\0", "\n").split("\n")
        result.append([name for name in lines[1:] if name])
    return result


def dirty_the_repo(repo: Path, git) -> None:
    """One staged file, one edited-but-unstaged file, one file with both a staged and an unstaged change."""
    (repo / "staged.txt").write_text("staged content\n")
    git(repo, "add", "staged.txt")
    (repo / "app.py").write_text("print('edited, not staged')\n")
    (repo / "README.md").write_text("# a project\n\nstaged line\n")
    git(repo, "add", "README.md")
    (repo / "README.md").write_text("# a project\n\nstaged line\nunstaged line\n")


def test_twenty_mutations_make_twenty_workbench_only_commits(repo, git, wb, commits):
    dirty_the_repo(repo, git)
    before = user_view(git, repo)
    assert "A  staged.txt" in before["status"] and " M app.py" in before["status"]
    assert "MM README.md" in before["status"]

    r = wb(repo, "init")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    start = commits(repo)
    start_sha = git(repo, "rev-parse", "HEAD").strip()

    # 20 mutations: most through the API (fast), some through fresh Bench objects and the CLI, so both the
    # in-process parent cache and a cold process are exercised.
    bench = Bench.open(repo)
    t1 = bench.add_task("Write the parser", acceptance=["true"])["id"]  # 1
    t2 = bench.add_task("Write the printer", depends_on=[t1])["id"]  # 2
    bench.start_task(t1)  # 3
    bench.note("Chose a hand-written parser: the grammar is tiny.")  # 4
    bench.set_state({"next_action": "finish the parser"})  # 5
    bench.done_task(t1)  # 6
    bench.block_task(t2, "waiting for the API review")  # 7
    bench.set_task(t2, {"title": "Write the pretty printer"})  # 8
    assert wb(repo, "task", "add", "Review the parser", "--kind", "review", "--reviews", t1).returncode == 0  # 9
    assert wb(repo, "note", "a note from the CLI").returncode == 0  # 10
    bench = Bench.open(repo)
    bench.set_state({"assumptions": ["python 3.11"], "touched_files": ["app.py"]})  # 11
    bench.start_task(t2)  # 12
    assert wb(repo, "set", "next_action=print everything").returncode == 0  # 13
    t4 = bench.add_task("Docs", owner="human")["id"]  # 14
    bench.set_task(t4, {"acceptance": ["true", "test -f staged.txt"]})  # 15
    assert wb(repo, "task", "start", t4).returncode == 0  # 16
    bench.done_task(t4)  # 17
    bench.set_task(t2, {"status": "cancelled"})  # 18
    assert wb(repo, "task", "block", "T-003", "--reason", "needs a reviewer").returncode == 0  # 19
    bench.set_state({"blockers": []})  # 20

    assert commits(repo) - start == 20
    git(repo, "merge-base", "--is-ancestor", start_sha, "HEAD")  # raises unless HEAD descends from it
    touched = names_per_commit(git, repo, f"{start_sha}..HEAD")
    assert len(touched) == 20
    for names in touched:
        assert names, "a commit with no changes"
        assert all(name.startswith(WB) for name in names), names

    # the wb commits carry the user's committed files along, and never the staged-only one
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "app.py" in tree and "README.md" in tree and "staged.txt" not in tree
    assert git(repo, "show", "HEAD:app.py") == "print('hello')\n"

    after = user_view(git, repo)
    assert after == before
    porcelain = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert WB not in porcelain
    assert (repo / "app.py").read_text() == "print('edited, not staged')\n"
    assert git(repo, "show", ":README.md") == "# a project\n\nstaged line\n"

    assert wb(repo, "validate").returncode == 0
    r = wb(repo, "replay", "--verify")
    assert r.returncode == 0, r.stdout + r.stderr


def test_commit_messages_have_a_summary_and_event_trailers(bench, repo, git):
    task = bench.add_task("Write the parser")
    bench.start_task(task["id"])
    subject = git(repo, "log", "-1", "--format=%s").strip()
    assert subject == f"wb: {task['id']} todo → in_progress"
    trailers = git(repo, "log", "-1", "--format=%(trailers:key=Wb-Event,valueonly)").strip()
    assert trailers == str(bench.last.seqs[-1])
    assert bench.last.commit == git(repo, "rev-parse", "HEAD").strip()
    assert bench.last.warnings == []


def test_a_users_commit_between_mutations_is_kept(bench, repo, git, commits):
    bench.add_task("one")
    (repo / "feature.py").write_text("x = 1\n")
    git(repo, "add", "feature.py")
    git(repo, "commit", "-q", "-m", "user: feature")
    user_commit = git(repo, "rev-parse", "HEAD").strip()
    bench.add_task("two")  # same Bench: its cached parent is stale now
    assert git(repo, "rev-parse", "HEAD~1").strip() == user_commit
    assert git(repo, "show", "HEAD:feature.py") == "x = 1\n"
    assert names_per_commit(git, repo, "-1") == [[".workbench/board.json", ".workbench/events.jsonl",
                                                  ".workbench/state.md"]]
    assert WB not in git(repo, "status", "--porcelain")


def test_a_deleted_workbench_file_leaves_the_index_too(bench, repo, git):
    (repo / ".workbench" / "artifacts" / "report.txt").write_text("big output\n")
    bench.note("with an artifact")
    assert ".workbench/artifacts/report.txt" in git(repo, "ls-files")
    (repo / ".workbench" / "artifacts" / "report.txt").unlink()
    bench.note("artifact gone")
    assert ".workbench/artifacts/report.txt" not in git(repo, "ls-files")
    assert ".workbench/artifacts/report.txt" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert WB not in git(repo, "status", "--porcelain")


# -- unusual repository states ---------------------------------------------------------------------------


def test_init_on_an_unborn_branch_makes_a_root_commit_with_only_the_workbench(tmp_path, new_repo, git, wb, commits):
    repo = new_repo(tmp_path / "fresh", commit=False)
    (repo / "user.txt").write_text("mine\n")
    git(repo, "add", "user.txt")
    staged_before = git(repo, "ls-files", "-s")
    r = wb(repo, "init")
    assert r.returncode == 0, r.stderr
    assert commits(repo) == 1
    assert git(repo, "rev-list", "--parents", "HEAD").split() == [git(repo, "rev-parse", "HEAD").strip()]
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert tree and all(name.startswith(WB) for name in tree)
    assert "A  user.txt" in git(repo, "status", "--porcelain").splitlines()
    index = [line for line in git(repo, "ls-files", "-s").splitlines() if WB not in line]
    assert "\n".join(index) + "\n" == staged_before
    assert WB not in git(repo, "status", "--porcelain")


def test_outside_a_git_repository_is_an_error(tmp_path, wb, error_line):
    plain = tmp_path / "plain"
    plain.mkdir()
    r = wb(plain, "init")
    assert r.returncode == 1
    assert "not inside a git repository" in error_line(r.stderr)
    assert not (plain / ".workbench").exists()


def make_conflicted_merge(repo: Path, git) -> None:
    (repo / "conflict.txt").write_text("base\n")
    git(repo, "add", "conflict.txt")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "conflict.txt").write_text("theirs\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "conflict.txt").write_text("ours\n")
    git(repo, "commit", "-q", "-am", "ours")
    git(repo, "merge", "other", check=False)
    assert (repo / ".git" / "MERGE_HEAD").exists()


def test_mid_merge_records_without_touching_the_tree_and_commits_after(bench, repo, git, wb, commits):
    """Mid-merge wb neither commits nor writes the work tree (a write there makes `git merge --abort` fail):
    the mutation waits in the git directory, shows in wb's reads, and is written and committed after."""
    make_conflicted_merge(repo, git)
    head = git(repo, "rev-parse", "HEAD").strip()
    index = git(repo, "ls-files", "-s", "--", ".", ":!.workbench")
    unmerged = git(repo, "ls-files", "-u")
    assert unmerged

    r = wb(repo, "task", "add", "Resolve the merge")
    assert r.returncode == 0, r.stderr
    line = r.stderr.strip()
    assert len(r.stderr.splitlines()) == 1
    assert line.startswith("wb: warning: recorded, not yet committed: a merge is in progress; ")
    assert "T-001" not in (repo / ".workbench" / "board.json").read_text()  # git's tree, untouched
    assert git(repo, "status", "--porcelain", "--", WB) == ""
    shown = wb(repo, "task", "show", "T-001")
    assert shown.returncode == 0 and "Resolve the merge" in shown.stdout  # yet wb knows it
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert (repo / ".git" / "MERGE_HEAD").exists()
    assert git(repo, "ls-files", "-s", "--", ".", ":!.workbench") == index
    assert git(repo, "ls-files", "-u") == unmerged

    (repo / "conflict.txt").write_text("resolved\n")
    git(repo, "add", "conflict.txt")
    git(repo, "commit", "-q", "--no-edit")
    merge = git(repo, "rev-parse", "HEAD").strip()
    assert not (repo / ".git" / "MERGE_HEAD").exists()

    r = wb(repo, "note", "merge resolved")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert git(repo, "rev-parse", "HEAD~1").strip() == merge
    names = names_per_commit(git, repo, "-1")[0]
    assert names and all(n.startswith(WB) for n in names)
    assert ".workbench/board.json" in names  # the task added mid-merge is committed now
    assert WB not in git(repo, "status", "--porcelain")
    assert wb(repo, "replay", "--verify").returncode == 0


@pytest.mark.parametrize("operation", ["bisect", "cherry-pick", "rebase"])
def test_other_operations_in_progress_do_not_commit(bench, repo, git, operation):
    if operation == "bisect":
        git(repo, "bisect", "start")
        expected = "a bisect is in progress"
    else:
        (repo / "c.txt").write_text("base\n")
        git(repo, "add", "c.txt")
        git(repo, "commit", "-q", "-m", "base")
        git(repo, "checkout", "-q", "-b", "side")
        (repo / "c.txt").write_text("side\n")
        git(repo, "commit", "-q", "-am", "side")
        git(repo, "checkout", "-q", "main")
        (repo / "c.txt").write_text("main\n")
        git(repo, "commit", "-q", "-am", "main")
        if operation == "cherry-pick":
            git(repo, "cherry-pick", "side", check=False)
            expected = "a cherry-pick is in progress"
        else:
            git(repo, "rebase", "side", check=False)
            expected = "a rebase is in progress"
    refs_before = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")
    head_before = (repo / ".git" / "HEAD").read_text()
    bench.add_task("during " + operation)
    assert bench.last.commit is None
    assert bench.last.warnings and bench.last.warnings[0].startswith("recorded, not yet committed: " + expected)
    assert git(repo, "status", "--porcelain", "--", ".workbench") == ""  # the work tree is git's until it ends
    assert git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads") == refs_before
    assert (repo / ".git" / "HEAD").read_text() == head_before


def test_detached_head_records_without_touching_the_tree(bench, repo, git, wb):
    git(repo, "checkout", "-q", "--detach")
    head = git(repo, "rev-parse", "HEAD").strip()
    main = git(repo, "rev-parse", "main").strip()
    r = wb(repo, "task", "add", "While detached")
    assert r.returncode == 0
    assert r.stderr.startswith("wb: warning: recorded, not yet committed: HEAD is detached")
    assert len(r.stderr.splitlines()) == 1
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "rev-parse", "main").strip() == main
    assert "While detached" not in (repo / ".workbench" / "board.json").read_text()  # checkout main still works
    assert "While detached" in wb(repo, "task", "list").stdout
    git(repo, "checkout", "-q", "main")
    assert wb(repo, "note", "back on main").returncode == 0
    assert "While detached" in git(repo, "show", "main:.workbench/board.json")


def write_config(repo: Path, text: str) -> None:
    (repo / ".workbench").mkdir(exist_ok=True)
    (repo / ".workbench" / "config.yaml").write_text("schema_version: 1\n" + text)


def test_git_commit_off_never_commits(repo, git, commits):
    write_config(repo, "git:\n  commit: off\n")
    before = commits(repo)
    b, created, last = init(repo)
    assert created and last.commit is None
    t = b.add_task("no commits please")
    b.start_task(t["id"])
    b.note("still none")
    assert commits(repo) == before
    assert stored.board(repo)["tasks"][0]["status"] == "in_progress"
    assert b.last.commit is None and b.last.warnings == []


def test_git_ref_records_state_on_its_own_branch(repo, git, commits):
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    write_config(repo, "git:\n  ref: wb-state\n")
    head_file = (repo / ".git" / "HEAD").read_text()
    main = git(repo, "rev-parse", "main").strip()
    index = git(repo, "ls-files", "-s")

    b, _created, last = init(repo)
    assert last.commit == git(repo, "rev-parse", "refs/heads/wb-state").strip()
    b.add_task("on the side branch")
    b.note("and a note")

    assert commits(repo, "refs/heads/wb-state") == 3
    for sha in git(repo, "rev-list", "refs/heads/wb-state").split():
        assert git(repo, "ls-tree", "--name-only", sha).split() == [".workbench"]
    assert "on the side branch" in git(repo, "show", "wb-state:.workbench/board.json")
    assert (repo / ".git" / "HEAD").read_text() == head_file
    assert git(repo, "rev-parse", "main").strip() == main
    assert git(repo, "ls-files", "-s") == index
