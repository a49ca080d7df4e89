"""Shared helpers of the reliability tests: throwaway git repos, real `wb` subprocesses, and the readers that
check a workbench from the outside (the files on disk, the event log, git)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests import stored
from tests.conftest import spawn_wb

BIN = Path(sys.executable).parent
WB = str(BIN / "wb") if (BIN / "wb").exists() else (shutil.which("wb") or "wb")

# titles and texts of the mutations acknowledged (exit 0) before any crash
ACKED_TASKS = {"T-001": "acked first", "T-002": "acked second"}
ACKED_NOTE = "acked note before the crash"


def base_env(**extra: str) -> dict[str, str]:
    """A clean environment: a fixed git identity, no global or system git config, no wb test knobs."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WB_", "GIT_")) or k == "WB_TRUST_REPO_COMMANDS"}  # the suite trusts its commands
    env.update(
        GIT_AUTHOR_NAME="Reliability Test",
        GIT_AUTHOR_EMAIL="rel@example.invalid",
        GIT_COMMITTER_NAME="Reliability Test",
        GIT_COMMITTER_EMAIL="rel@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        WB_LOCK_TIMEOUT="20",  # a stale lock would show up as a failure, not as a hang
        NO_COLOR="1",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # recompiling wb on every call would triple its start-up time
    env.update(extra)
    return env


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=base_env(), text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


def wb(repo: Path, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed `wb` script as a real process (crashes, locks and fault points need one)."""
    return spawn_wb(repo, *args, env=base_env(**env), timeout=timeout, argv=[WB])


def wb_ok(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = wb(repo, *args)
    assert proc.returncode == 0, f"wb {' '.join(args)} exited {proc.returncode}: {proc.stderr}{proc.stdout}"
    return proc


def wb_parallel(repo: Path, *commands: Sequence[str]) -> list[subprocess.CompletedProcess[str]]:
    """Run read-only wb commands side by side (they take no lock) and wait for all."""
    procs = [subprocess.Popen([WB, *cmd], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=base_env(), stdin=subprocess.DEVNULL) for cmd in commands]
    out = []
    for cmd, proc in zip(commands, procs, strict=True):
        stdout, stderr = proc.communicate(timeout=60)
        out.append(subprocess.CompletedProcess([WB, *cmd], proc.returncode, stdout, stderr))
    return out


def make_repo(path: Path, *, user_changes: bool = True) -> Path:
    """A git repo with one commit and, when asked, a staged new file and an unstaged edit of the user's."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# project\n")
    (path / "src.py").write_text("print('v1')\n")
    git(path, "add", "README.md", "src.py")
    git(path, "commit", "-q", "-m", "initial commit")
    if user_changes:
        (path / "staged.txt").write_text("staged by the user\n")
        git(path, "add", "staged.txt")
        (path / "src.py").write_text("print('v2, not staged')\n")
        (path / "untracked.txt").write_text("untracked\n")
    return path


def status_outside(repo: Path) -> list[str]:
    """`git status --porcelain` of everything outside .workbench/."""
    out = git(repo, "status", "--porcelain", "--untracked-files=all")
    return sorted(line for line in out.splitlines() if not line[3:].startswith(".workbench"))


def assert_init_left_user_alone(before: list[str], after: list[str]) -> None:
    """`wb init` may add its own .gitattributes (diff and merge drivers, left for the user to commit); every
    other path outside .workbench/ keeps its status."""
    assert set(before) <= set(after), f"wb init changed the user's files: {before} -> {after}"
    extra = set(after) - set(before)
    assert all(line.endswith(" .gitattributes") for line in extra), f"wb init left {sorted(extra)}"


def status_workbench(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".workbench")


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def commit_count(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD").strip())


def paths_changed_since(repo: Path, base: str) -> list[str]:
    return git(repo, "diff", "--name-only", base, "HEAD").split()


def event_lines(repo: Path) -> tuple[list[dict[str, Any]], bytes]:
    """The complete lines of events.jsonl, and the bytes after the last newline (a torn tail)."""
    # files: events.jsonl's bytes, a torn tail and all; SQLite: the event rows (a row is whole or absent)
    raw = (repo / ".workbench" / "events.jsonl").read_bytes() if stored.FILES else stored.event_bytes(repo)
    cut = raw.rfind(b"\n") + 1
    return [json.loads(line) for line in raw[:cut].splitlines()], raw[cut:]


def assert_log_sound(repo: Path) -> list[dict[str, Any]]:
    """Seqs 1..N without gaps, unique ids, the hash chain intact, no torn tail, no cut-short batch."""
    import hashlib

    events, torn = event_lines(repo)
    assert torn == b"", f"torn tail left in events.jsonl: {torn[:80]!r}"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), "event seqs have a gap or repeat"
    assert len({e["id"] for e in events}) == len(events), "duplicate event ids"
    raw_lines = ((repo / ".workbench" / "events.jsonl").read_bytes() if stored.FILES
                 else stored.event_bytes(repo)).splitlines()
    prev = None
    for line, event in zip(raw_lines, events, strict=True):
        assert event.get("prev") == prev, f"hash chain broken at seq {event['seq']}"
        prev = hashlib.sha256(line).hexdigest()
    assert not events[-1].get("more"), "the log ends inside a batch"
    return events


def board(repo: Path) -> dict[str, Any]:
    return stored.board(repo)


def state_md(repo: Path) -> str:
    return stored.state_text(repo)


def assert_ids_unique(tasks: list[dict[str, Any]]) -> None:
    ids = [t["id"] for t in tasks]
    assert len(ids) == len(set(ids)), f"duplicate task ids: {sorted(ids)}"


def workbench_bytes(repo: Path) -> dict[str, bytes]:
    """Every file under .workbench/ except the lock file, for byte-identity checks."""
    base = repo / ".workbench"
    return {p.relative_to(base).as_posix(): p.read_bytes()
            for p in sorted(base.rglob("*")) if p.is_file() and p.name != ".lock"}


def wait_for_line(proc: subprocess.Popen[str], expected: str) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == expected, f"helper said {line!r}; stderr: {proc.stderr.read() if proc.stderr else ''}"


def assert_every_writers_adds_landed(repo: Path, writers: int, each: int, prefix: str) -> list[str]:
    """`writers` processes each added `each` tasks titled `{prefix}-NN` (prefix formatted with `w`, the
    writer's number): the board holds every one once, ids in order, each writer's own in the order it made them;
    validate and replay --verify pass; the log holds init, then one task.add per task in board order. Returns
    the titles in board order."""
    total = writers * each
    tasks = board(repo)["tasks"]
    assert len(tasks) == total
    assert_ids_unique(tasks)
    assert [t["id"] for t in tasks] == [f"T-{i:03d}" for i in range(1, total + 1)]
    titles = [t["title"] for t in tasks]
    expected = [f"{prefix.format(w=w)}-{i:02d}" for w in range(writers) for i in range(each)]
    assert sorted(titles) == sorted(expected), "lost update"
    for w in range(writers):  # each writer's own adds land in the order it made them
        mine = [title for title in titles if title.startswith(prefix.format(w=w) + "-")]
        assert mine == sorted(mine)
    validate, verify = wb_parallel(repo, ["validate"], ["replay", "--verify"])
    assert validate.returncode == 0, validate.stderr + validate.stdout
    assert verify.returncode == 0, verify.stderr + verify.stdout
    events = assert_log_sound(repo)
    assert [e["seq"] for e in events] == list(range(1, total + 2))
    assert [e["type"] for e in events] == ["workbench.init"] + ["task.add"] * total
    assert [e["payload"]["task"]["title"] for e in events[1:]] == titles
    return titles
