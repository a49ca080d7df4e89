"""Hook payloads as the clients document them (one JSON file per event under fixtures/hooks/CLIENT/), and the
real `wb hook` process that reads them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.conftest import TEST_BACKEND, run_git, spawn_wb

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
FILES = TEST_BACKEND == "files"  # the files backend: git commits of .workbench/ to count, files in git's view


def fixture(client: str, event: str, cwd: Path) -> dict[str, Any]:
    """The documented payload of `event`, for an agent working in `cwd`."""
    text = (FIXTURES / client / f"{event}.json").read_text()
    return json.loads(text.replace("{cwd}", str(cwd)))


def fixture_events(client: str) -> list[str]:
    return sorted(p.stem for p in (FIXTURES / client).glob("*.json"))


def hook(repo: Path, payload: Any, client: str = "claude-code", *, cwd: Path | None = None,
         env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """One hook, as the client runs it: a real process, the payload on a real stdin pipe."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return spawn_wb(cwd or repo, "hook", client, input=data, env=env, timeout=60)


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc


def _opened(repo: Path, read: Any) -> Any:
    from workbench.store.opening import discover

    wb = discover(repo)
    try:
        return read(wb)
    finally:
        storage = getattr(wb, "storage", None)  # store/sqlitedb.SqliteWorkbench: its connection
        if storage is not None:
            storage.close()


def events(repo: Path) -> list[dict[str, Any]]:
    """Every event of the workbench at `repo`, oldest first, the chain checked: from events.jsonl or the
    database, whichever backend keeps it."""
    return _opened(repo, lambda wb: [event for _line, event in wb.log.iter_all()])  # type: ignore[no-any-return]


def event_bytes(repo: Path) -> bytes:
    """Every event line as stored (events.jsonl's bytes, or the database's rows), newline-terminated."""
    return _opened(repo, lambda wb: wb.log.complete_bytes())  # type: ignore[no-any-return]


def snapshots(repo: Path) -> tuple[bytes, bytes]:
    """(state.md, board.json) as stored: the files, or the database's rows."""
    from workbench.store.backend import FilesStorage

    def read(wb: Any) -> Any:
        return (getattr(wb, "storage", None) or FilesStorage(wb)).read_snapshots()

    return _opened(repo, read)  # type: ignore[no-any-return]


def board(repo: Path) -> dict[str, Any]:
    """board.json as stored, parsed."""
    return json.loads(snapshots(repo)[1])  # type: ignore[no-any-return]


def state_text(repo: Path) -> str:
    """state.md as stored: its frontmatter and decision log."""
    return snapshots(repo)[0].decode("utf-8")


def stored(repo: Path) -> tuple[dict[str, str], bytes, tuple[bytes, bytes]]:
    """Everything the workbench keeps, to compare before and after a refused write: the files of .workbench/,
    the event lines and the snapshots (on SQLite, the database's; on files, the same files again)."""
    from tests.conftest import hash_workbench

    return hash_workbench(repo), event_bytes(repo), snapshots(repo)



def git_dir(repo: Path) -> Path:
    return Path(run_git(repo, "rev-parse", "--path-format=absolute", "--git-dir").strip())


def spool_lines(repo: Path) -> list[dict[str, Any]]:
    path = git_dir(repo) / "wb" / "spool.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def status_porcelain(repo: Path) -> str:
    return run_git(repo, "status", "--porcelain", "--untracked-files=all")


def track_config(repo: Path) -> None:
    """On SQLite, commit .workbench/ (config.yaml and its .gitignore) as its user would: `wb init --backend
    sqlite` commits nothing, and the agent's `git add -A` would otherwise sweep config.yaml into its commit.
    On files, `wb init` committed it already."""
    if not FILES:
        run_git(repo, "add", ".workbench")
        if run_git(repo, "diff", "--cached", "--name-only").strip():  # the `bench` fixture may have committed it
            run_git(repo, "commit", "-q", "-m", "track the workbench's config.yaml")


def tree_status(repo: Path) -> str:
    """`git status` of what a hook must leave alone: everything on files (wb commits .workbench/ itself); on
    SQLite, everything outside .workbench/ (nothing of it is committed there: it stays untracked)."""
    if FILES:
        return status_porcelain(repo)
    return run_git(repo, "status", "--porcelain", "--untracked-files=all", "--", ":(exclude).workbench")
