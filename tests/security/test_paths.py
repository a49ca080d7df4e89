"""Paths from plans, tool results and artifacts stay inside `.workbench/`: `..`, absolute paths and symbolic
links (`.workbench` itself, `artifacts/`, `events.jsonl`, a tool `cwd`) are refused, and nothing is written or
committed outside."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import TEST_BACKEND

from .helpers import PY, config_yaml, events, init_workbench, marker, one_line, plan, run_git, wb, wb_ok

BIG = [PY, "-c", "print('x' * 20000)"]  # more than INLINE_LIMIT: goes to artifacts/


def _outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "id_rsa").write_text("PRIVATE KEY\n")
    return out


def _listing(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_artifacts_symlinked_outside_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    init_workbench(repo, config_yaml(tools={"big": {"argv": BIG, "mode": "safe_readonly"}}))
    arts = repo / ".workbench" / "artifacts"
    if arts.is_dir():  # (a SQLite workbench makes it with the first artifact)
        for child in arts.iterdir():
            child.unlink()
        arts.rmdir()
    arts.symlink_to(outside, target_is_directory=True)
    before = _listing(outside)
    name = plan(repo, [{"description": "big output", "tool": "big"}])
    line = one_line(wb(repo, "run", "goal", "--plan", name), 5)
    assert "artifacts is a symbolic link" in line
    assert _listing(outside) == before


def test_artifacts_replaced_by_a_link_mid_session_is_not_followed(tmp_path: Path) -> None:
    """Defence in depth: the tool box itself refuses to write through a linked artifacts/."""
    from workbench.harness.loop import ToolError
    from workbench.harness.tools import ToolBox

    outside = _outside(tmp_path)
    root = tmp_path / "repo"
    (root / ".workbench").mkdir(parents=True)
    arts = root / ".workbench" / "artifacts"
    arts.symlink_to(outside, target_is_directory=True)
    box = ToolBox({"big": {"argv": BIG}}, root, arts)
    spec = box.spec("big")
    assert spec is not None
    with pytest.raises(ToolError, match="symbolic link"):
        box.run(spec, {}, "S:s1:1")
    assert _listing(outside) == {"id_rsa": b"PRIVATE KEY\n"}


@pytest.mark.parametrize("key", ["S:../../../../../tmp/evil:1", "S:/etc/passwd:1", "../..", "a/../../b"])
def test_artifact_names_never_leave_artifacts(tmp_path: Path, key: str) -> None:
    from workbench.harness.tools import ToolBox

    root = tmp_path / "repo"
    arts = root / ".workbench" / "artifacts"
    arts.mkdir(parents=True)
    box = ToolBox({"big": {"argv": BIG}}, root, arts)
    spec = box.spec("big")
    assert spec is not None
    result = box.run(spec, {}, key)
    path = (root / result["stdout_artifact"]["path"]).resolve()
    assert path.parent == arts.resolve()


def test_workbench_dir_symlinked_outside_is_refused(repo: Path, tmp_path: Path) -> None:
    """A clone can carry `.workbench -> ~/.ssh`: wb would write there and commit what it holds."""
    outside = _outside(tmp_path)
    (repo / ".workbench").symlink_to(outside, target_is_directory=True)
    before = _listing(outside)
    head = run_git(repo, "rev-parse", "HEAD")
    for args in (["init"], ["status"], ["note", "x"], ["task", "add", "t"], ["doctor", "--fix"]):
        line = one_line(wb(repo, *args), 5)
        assert ".workbench is a symbolic link" in line
    assert _listing(outside) == before
    assert run_git(repo, "rev-parse", "HEAD") == head
    assert "id_rsa" not in run_git(repo, "log", "--all", "--stat")


@pytest.mark.parametrize("name", ["events.jsonl", "state.md", "config.yaml", ".lock", ".cache"])
def test_workbench_files_symlinked_outside_are_refused(repo: Path, tmp_path: Path, name: str) -> None:
    outside = _outside(tmp_path)
    init_workbench(repo, config_yaml())
    target = outside / "id_rsa"
    link = repo / ".workbench" / name
    if link.is_dir():
        import shutil

        shutil.rmtree(link)
        target = outside
    elif link.exists():
        link.unlink()
    link.symlink_to(target)
    before = _listing(outside)
    line = one_line(wb(repo, "note", "hello"), 5)
    assert f".workbench/{name} is a symbolic link" in line
    assert _listing(outside) == before


@pytest.mark.parametrize("name", ["events.jsonl", "calls.jsonl", "state.md", "board.json", "config.yaml", ".lock",
                                  ".cache", "artifacts", ".gitignore", ".gitattributes"])
def test_every_workbench_entry_is_checked_for_links(tmp_path: Path, name: str) -> None:
    from workbench.errors import Refused
    from workbench.store.workbench import Workbench

    root = tmp_path / "repo"
    (root / ".workbench").mkdir(parents=True)
    (root / ".workbench" / name).symlink_to(tmp_path)
    with pytest.raises(Refused, match="symbolic link"):
        Workbench(root)


@pytest.mark.parametrize("cwd", ["../..", "..", "/", "/tmp", "sub/../../..", "link", "link/.."])
def test_tool_cwd_cannot_leave_the_repository_in_process(tmp_path: Path, cwd: str) -> None:
    from workbench.harness.loop import ToolError
    from workbench.harness.tools import ToolBox

    owned = marker()
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "link").symlink_to(tmp_path, target_is_directory=True)
    box = ToolBox({"t": {"argv": ["touch", str(owned)], "cwd": cwd}}, root, root / ".workbench" / "artifacts")
    spec = box.spec("t")
    assert spec is not None
    with pytest.raises(ToolError, match="leaves the repository"):
        box.run(spec, {}, "S:s1:1")
    assert not owned.exists()


@pytest.mark.parametrize("cwd", ["../..", "link"])
def test_tool_cwd_cannot_leave_the_repository(repo: Path, tmp_path: Path, cwd: str) -> None:
    owned = marker()
    (repo / "link").symlink_to(tmp_path, target_is_directory=True)  # a link inside the repo pointing out
    (repo / "sub").mkdir()
    init_workbench(repo, config_yaml(tools={"t": {"argv": ["touch", str(owned)], "mode": "safe_readonly",
                                                  "cwd": cwd, "on_error": "continue"}}))
    name = plan(repo, [{"description": "escape", "tool": "t"}])
    wb_ok(repo, "run", "goal", "--plan", name)
    errors = [e["payload"]["error"] for e in events(repo) if e["type"] == "tool.error"]
    assert errors and "leaves the repository" in errors[0]
    assert not owned.exists()  # refused before it ran


def test_tool_cwd_inside_the_repository_is_fine(repo: Path) -> None:
    (repo / "sub").mkdir()
    init_workbench(repo, config_yaml(tools={"pwd": {"argv": [PY, "-c", "import os; print(os.getcwd())"],
                                                    "mode": "safe_readonly", "cwd": "sub"}}))
    name = plan(repo, [{"description": "pwd", "tool": "pwd"}])
    wb_ok(repo, "run", "goal", "--plan", name)
    results = [e["payload"]["result"] for e in events(repo) if e["type"] == "tool.result"]
    assert Path(results[0]["stdout"].strip()).resolve() == (repo / "sub").resolve()


@pytest.mark.parametrize("bad", ["../evil", "/abs", "a/b", "..\\x", "x y", "", "a" * 65, "~root"])
def test_plan_ids_and_tool_names_are_plain_names(bad: str) -> None:
    from workbench.errors import Refused
    from workbench.harness.planners import steps_from_plan

    for step in ({"id": bad, "description": "d"}, {"description": "d", "tool": bad}):
        with pytest.raises(Refused):
            steps_from_plan({"steps": [step]}, "plan.json")


def test_plan_path_names_refused_through_the_cli(repo: Path) -> None:
    init_workbench(repo, config_yaml())
    for step in ({"id": "../evil", "description": "d"}, {"description": "d", "tool": "/bin/sh"}):
        (repo / "plan.json").write_text(json.dumps({"steps": [step]}))
        one_line(wb(repo, "run", "goal", "--plan", "plan.json"), 5)


def test_artifact_paths_in_a_supplied_result_are_never_opened(repo: Path) -> None:
    """A human (or a hostile script) may supply any result: its paths are recorded as data, never read."""
    init_workbench(repo, config_yaml())
    name = plan(repo, [{"description": "deploy", "tool": "deploy"}])
    wb_ok(repo, "run", "goal", "--plan", name, code=3)
    result = {"stdout_artifact": {"path": "../../../../../../etc/passwd", "sha256": "0" * 64, "bytes": 1},
              "stderr_artifact": {"path": "/etc/shadow"}}
    wb_ok(repo, "resume", "--result", json.dumps(result))
    back = "HEAD~3" if TEST_BACKEND == "files" else "@-3"  # three commits back / three events back (SQLite)
    for args in (["status"], ["log"], ["diff", back], ["validate"], ["replay", "--verify"]):
        proc = wb_ok(repo, *args)
        assert "root:" not in proc.stdout
    assert not any(p.name in ("passwd", "shadow") for p in (repo / ".workbench").rglob("*"))


def test_no_file_is_written_outside_the_workbench(repo: Path, tmp_path: Path) -> None:
    """A whole session with big tool output touches nothing but .workbench/ (and git's own objects)."""
    init_workbench(repo, config_yaml(tools={"big": {"argv": BIG, "mode": "safe_readonly"}}))
    name = plan(repo, [{"description": "big", "tool": "big"}, {"description": "human", "tool": "deploy"}])
    before = {p for p in repo.rglob("*") if ".git" not in p.parts}
    wb_ok(repo, "run", "goal", "--plan", name, code=3)
    wb_ok(repo, "resume", "--result", '{"ok": true}')
    after = {p for p in repo.rglob("*") if ".git" not in p.parts}
    assert all(p.is_relative_to(repo / ".workbench") for p in after - before), sorted(after - before)
    assert os.listdir(repo / ".workbench" / "artifacts")
