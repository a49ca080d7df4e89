"""The first write after a pull brought another clone's state.md and board.json (issue 33's cost.pulled_task_add):
what it reads of them is another clone's bytes, validated as a hand edit is, however it is read — state.md in the
subset of YAML wb writes without ruamel, board.json one changed task at a time against the board wb last wrote
and verified here — and refused in the same words a whole check says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.test_startup import PROBE  # runs wb and prints the modules it imported
from tests.conftest import about_files, make_repo, run_git, run_wb

pytestmark = about_files  # state.md and board.json as files, pulled from another clone



def two_clones(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo")
    assert run_wb(repo, "init").returncode == 0
    for i in range(3):
        assert run_wb(repo, "task", "add", f"here {i}").returncode == 0
    other = tmp_path / "other"
    run_git(tmp_path, "clone", "-q", str(repo), str(other))
    return repo, other


def pull(repo: Path, other: Path) -> None:
    run_git(repo, "pull", "-q", "--ff-only", str(other), "HEAD")


def probe(cwd: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert "MODULES " in proc.stderr, proc.stderr
    err, _, modules = proc.stderr.rpartition("\nMODULES ")
    proc.stderr = err
    return proc, set(modules.split())


def test_the_first_write_after_a_pull_reads_state_md_without_ruamel(tmp_path: Path) -> None:
    repo, other = two_clones(tmp_path)
    assert run_wb(other, "task", "add", "from the other clone").returncode == 0
    pull(repo, other)
    proc, modules = probe(repo, "task", "add", "after the pull")
    assert proc.returncode == 0, proc.stderr
    assert not [m for m in modules if m.startswith("ruamel")]
    titles = [t["title"] for t in json.loads((repo / ".workbench" / "board.json").read_text())["tasks"]]
    assert titles[-2:] == ["from the other clone", "after the pull"]


def test_a_pulled_state_md_that_breaks_the_schema_is_refused(tmp_path: Path) -> None:
    repo, other = two_clones(tmp_path)
    state = other / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("status: idle", "status: dozing"))
    run_git(other, "commit", "-qam", "a state the schema refuses")
    pull(repo, other)
    out = run_wb(repo, "task", "add", "after the pull")
    assert out.returncode != 0
    assert "state.md: status" in out.stderr and "dozing" in out.stderr, out.stderr


def test_a_pulled_board_with_a_task_the_schema_refuses_is_refused(tmp_path: Path) -> None:
    """The other clone's task, added by wb and then edited by hand there (a status no one has): checked although
    every other task is one this clone verified, and refused in the whole check's words."""
    from workbench.model import schemas
    from workbench.model.boardfile import parse_board

    repo, other = two_clones(tmp_path)
    assert run_wb(other, "task", "add", "from the other clone").returncode == 0
    board = other / ".workbench" / "board.json"
    text = board.read_text()
    line = next(n for n, line in enumerate(text.split("\n")) if "from the other clone" in line)
    lines = text.split("\n")
    lines[line] = lines[line].replace('"status": "todo"', '"status": "dozing"')
    board.write_text("\n".join(lines))
    run_git(other, "commit", "-qam", "a task the schema refuses")
    pull(repo, other)
    out = run_wb(repo, "task", "add", "after the pull")
    assert out.returncode != 0
    try:
        schemas.check("board", parse_board((repo / ".workbench" / "board.json").read_bytes()), "board.json")
    except Exception as err:  # noqa: BLE001 - the whole check's words
        words = str(err)
    assert words in out.stderr and "dozing" in words, out.stderr


def test_whether_a_pulled_file_is_committed_is_asked_by_blob_id(tmp_path: Path) -> None:
    """humanedit asks whether state.md and board.json hold what is committed by their blob ids (the trees read
    in-process when loose, as after this pull): the id is the one of the bytes `git cat-file` gives."""
    from workbench.store.workbench import Workbench

    repo, other = two_clones(tmp_path)
    assert run_wb(other, "task", "add", "from the other clone").returncode == 0
    pull(repo, other)
    git = Workbench(repo).git
    for name in ("board.json", "state.md", "events.jsonl"):
        committed = git.committed_file(f".workbench/{name}")
        assert committed is not None
        for ref in ("HEAD", "refs/heads/" + (git.symbolic_head() or "").removeprefix("refs/heads/")):
            assert git.committed_wb_blob(name, ref) == git.blob_id(committed)
    assert git.committed_wb_blob("no-such-file", "HEAD") is None
    assert git.committed_wb_blob("board.json", "refs/heads/no-such-branch") is None
