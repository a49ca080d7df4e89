"""wb never changes a user's file (issue 29): with `git.run_hooks: true`, wb's state commit runs the repository's
hooks, and a hook that reformats the work tree (a formatter over every file, not only the ones it is given)
would rewrite the user's staged, unstaged and untracked files. wb records their bytes and modes (and the
user's index) before the hooks run, compares after, puts back exactly what a hook changed, refuses that commit
(the write stays acknowledged: its events are in the log, the next write commits them) and says in one line
which hook changed which file.

Real git, a real hook script, the real `wb` CLI; about git's commits, so files backend only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.conftest import about_git, run_git, run_wb
from tests.git_scenarios.helpers import assert_sound

pytestmark = about_git

_REFORMAT_ALL = """#!/bin/sh
# a formatter over the whole work tree (not the files it is given), then the re-stage such hooks do
for f in $(git ls-files --cached --others --exclude-standard -- ':!.workbench'); do
  case "$f" in
    *.py) sed -i "s/print(/print (/" "$f" ;;
    *.md) printf 'formatted\\n' >> "$f" ;;
  esac
done
chmod +x app.py
rm -f gone.py
git add -A
env -u GIT_INDEX_FILE git add app.py  # and the user's own index
"""


def _with_hook(repo: Path, name: str, script: str) -> None:
    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("\ngit:\n", "\ngit:\n  run_hooks: true\n", 1))
    assert run_wb(repo, "note", "config recorded").returncode == 0
    hook = repo / ".git" / "hooks" / name
    hook.write_text(script)
    hook.chmod(0o755)


def _users_files(repo: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if rel.startswith((".git/", ".workbench/")) or rel in (".git", ".workbench") or path.is_dir():
            continue
        out[rel] = (path.read_bytes(), stat.S_IMODE(os.lstat(path).st_mode))
    return out


def _users_index(repo: Path) -> str:
    return "\n".join(line for line in run_git(repo, "ls-files", "-s").splitlines() if ".workbench/" not in line)


def _user_work(repo: Path) -> None:
    (repo / "staged.py").write_text("print('staged')\n")
    run_git(repo, "add", "staged.py")
    (repo / "staged.py").write_text("print('staged, then changed')\n")  # staged and unstaged both
    (repo / "app.py").write_text("print('x')\n")  # unstaged
    (repo / "untracked.py").write_text("print('untracked')\n")
    (repo / "gone.py").write_text("print('untracked, deleted by the hook')\n")
    (repo / "ignored.log").write_text("ignored\n")
    (repo / ".gitignore").write_text("*.log\n")


def test_a_pre_commit_hook_that_reformats_the_users_files_changes_none_of_them(repo: Path) -> None:
    _with_hook(repo, "pre-commit", _REFORMAT_ALL)
    _user_work(repo)
    before, index = _users_files(repo), _users_index(repo)
    status = run_git(repo, "status", "--porcelain", "--", ":!.workbench")
    note = run_wb(repo, "note", "hooked")
    assert note.returncode == 0, note.stderr
    assert _users_files(repo) == before, "a hook run by wb changed the user's files"
    assert _users_index(repo) == index
    assert run_git(repo, "status", "--porcelain", "--", ":!.workbench") == status
    line = next(x for x in note.stderr.splitlines() if "pre-commit hook changed" in x)
    for name in ("app.py", "staged.py", "untracked.py", "gone.py", "README.md", "the index"):
        assert name in line, line
    assert "ignored.log" not in line
    # acknowledged all the same: in the log, and committed by the next write once the hook is fixed
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    assert run_wb(repo, "note", "after").returncode == 0
    assert_sound(repo, acknowledged=["hooked", "after"])
    assert _users_files(repo) == before


def test_a_commit_msg_hook_that_rewrites_a_users_file_is_undone_too(repo: Path) -> None:
    _with_hook(repo, "commit-msg", "#!/bin/sh\nprintf 'touched\\n' >> README.md\n")
    (repo / "app.py").write_text("print('x')\n")
    before = _users_files(repo)
    note = run_wb(repo, "note", "hooked")
    assert note.returncode == 0, note.stderr
    assert _users_files(repo) == before
    assert "commit-msg hook changed README.md" in note.stderr, note.stderr


def test_a_hook_that_leaves_the_users_files_alone_still_commits(repo: Path) -> None:
    _with_hook(repo, "pre-commit", "#!/bin/sh\ngit add -u\nexit 0\n")
    _user_work(repo)
    before = _users_files(repo)
    note = run_wb(repo, "note", "hooked")
    assert note.returncode == 0, note.stderr
    assert "hook changed" not in note.stderr and "not yet committed" not in note.stderr, note.stderr
    assert _users_files(repo) == before
    assert "hooked" in run_git(repo, "show", "HEAD:.workbench/events.jsonl")
