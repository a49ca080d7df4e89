"""What a start-up imports: `wb status` and the common writes run without typer, click, rich, ruamel.yaml or
jsonschema; `wb --help` imports only the commands it shows; the typer-free parser of cli/writes.py binds
arguments exactly as typer does. Never timed: speed is measured by bench/run.py, as ratios to `python -c pass`.
"""

from __future__ import annotations

import functools
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import about_git
from tests.stored import FILES

# Libraries a fast path has no need of: the CLI framework, its renderer, the YAML round-trip parser and the
# schema library (the compiled validators in workbench/_validators check what wb writes).
HEAVY = ("typer", "click", "rich", "shellingham", "ruamel", "jsonschema", "textual")

PROBE = (
    "import sys\n"
    "from workbench.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    "sys.exit(code)\n"
)


def run_probe(cwd: Path, *argv: str, input: str | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `wb ARGV` in a real process; return it and the modules it had imported when it finished."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=cwd, capture_output=True, text=True,
                          input=input, timeout=120)
    assert "MODULES " in proc.stderr, proc.stderr
    err, _, modules = proc.stderr.rpartition("\nMODULES ")
    proc.stderr = err
    return proc, set(modules.split())


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def command_modules() -> dict[str, tuple[str, bool]]:
    """{module: (command, hidden)} for every command of the app."""
    from workbench.cli.app import COMMANDS

    return {f"workbench.cli.{module}": (name, hidden) for name, module, _attr, hidden in COMMANDS}


def test_status_imports_no_framework_no_yaml_no_schema_library_and_writes_nothing(bench, repo):
    bench.add_task("Write the parser")
    for argv in (["status"], ["status", "--json"], ["-C", str(repo), "status"]):
        proc, modules = run_probe(repo if argv[0] != "-C" else repo.parent, *argv)
        assert proc.returncode == 0, proc.stderr
        assert "Write the parser" not in proc.stderr
        assert heavy(modules) == [], f"wb {' '.join(argv)} imports {heavy(modules)}"
        assert "workbench.cli.app" not in modules
        # a reader takes no lock, runs no git, writes no file; dataclasses would bring inspect, ast and dis
        for name in ("workbench.store.transaction", "workbench.store.lock", "subprocess", "tempfile",
                     "dataclasses", "inspect"):
            assert name not in modules, f"wb {' '.join(argv)} imports {name}"
        assert not any(m.startswith("workbench.harness") for m in modules)


def test_task_list_imports_neither_the_write_path_nor_typing(bench, repo):
    """`wb task list` reads: it imports no lock, no transaction, no hand-edit detection and no config reader, and
    (on the files backend) not `typing`, whose import was a tenth of a 2,000-task list (issue 33), nor the layers
    of git/ that record a commit (refs, objects, identity and signing, the state ref): a read asks git only where
    its directories are (git/discovery.py). Nor the reducer (the documents it folds into are model/docs.py) nor
    the atomic writer, whose bytes a run would read and unmarshal for nothing."""
    bench.add_task("Write the parser")
    bench.add_task("Test the parser", depends_on=["T-001"])
    for argv in (["task", "list"], ["task", "list", "--json"], ["task", "list", "--blocked", "--status", "todo"]):
        proc, modules = run_probe(repo, *argv)
        assert proc.returncode == 0, proc.stderr
        assert "Test the parser" in proc.stdout
        assert heavy(modules) == [], f"wb {' '.join(argv)} imports {heavy(modules)}"
        assert "workbench.cli.app" not in modules
        for name in ("workbench.store.transaction", "workbench.store.lock", "subprocess", "dataclasses"):
            assert name not in modules, f"wb {' '.join(argv)} imports {name}"
        if FILES:  # the SQLite backend's reader is its own (store/sqlitedb.py)
            for name in ("typing", "workbench.store.humanedit", "workbench.store.config", "workbench.git.packs",
                         "workbench.git.repo", "workbench.git.refs", "workbench.git.objects",
                         "workbench.git.userpolicy", "workbench.git.sharedrefs", "copy", "weakref",
                         "workbench.model.reducer", "workbench.store.atomic"):
                assert name not in modules, f"wb {' '.join(argv)} imports {name}"


def test_a_fast_command_leaves_the_cycle_collector_as_it_found_it(bench, repo, monkeypatch):
    """The fast paths run without the cycle collector (cli/main.py) and give it back as it was: a caller in the
    same process (a test, a script calling `main`) keeps collecting, or keeps not collecting."""
    import gc

    from workbench.cli.main import main

    monkeypatch.chdir(repo)
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assert main(["task", "add", "Write the parser"]) == 0
            assert gc.isenabled() is enabled
            assert main(["task", "list"]) == 0
            assert gc.isenabled() is enabled
            assert main(["task", "start", "T-404"]) != 0  # an error on the fast path gives it back too
            assert gc.isenabled() is enabled
            assert gc.get_freeze_count() == 0  # only a process about to exit (argv None) skips the last pass
    finally:
        gc.enable()


@pytest.mark.parametrize(("argv", "needs"), [
    (["task", "add", "Write the parser", "--accept", "true", "--json"], ()),
    (["task", "start", "T-001"], ()),
    (["task", "block", "T-001", "--reason", "waiting for the grammar"], ("ruamel",)),  # a list in state.md
    (["task", "done", "T-001"], ()),
    (["note", "Chose a hand-written parser"], ()),
    (["set", "next_action=Write the tests", "--json"], ()),
    (["--debug", "-C", "REPO", "task", "add", "From elsewhere"], ()),
])
def test_the_common_writes_import_no_framework_and_still_commit(bench, repo, git, argv, needs):
    if argv[0] != "task" or argv[1] != "add":
        bench.add_task("Write the parser")
    argv = [str(repo) if a == "REPO" else a for a in argv]
    head = git(repo, "rev-parse", "HEAD")
    proc, modules = run_probe(repo.parent if "-C" in argv else repo, *argv)
    assert proc.returncode == 0, proc.stderr
    unneeded = [m for m in heavy(modules) if m.split(".")[0] not in needs]
    assert unneeded == [], f"wb {' '.join(argv)} imports {unneeded}"
    if FILES and "ruamel" not in needs:  # typing only for the type checker (issue 33); ruamel imports it itself
        assert "typing" not in modules, f"wb {' '.join(argv)} imports typing"
    assert "workbench.cli.app" not in modules
    assert not any(m.startswith("workbench.harness") for m in modules)
    if FILES:
        assert git(repo, "rev-parse", "HEAD") != head  # committed, as through typer
        assert git(repo, "status", "--porcelain", "--", ".workbench") == ""


def test_what_the_fast_path_is_unsure_of_goes_to_typer(bench, repo):
    for argv, code, says in (
        (["task", "add", "--help"], 0, "Usage: wb task add"),
        (["task", "add"], 2, "Missing argument 'TITLE'"),
        (["task", "add", "x", "--jso"], 2, "Did you mean '--json'?"),
        (["task", "block", "T-001"], 2, "Missing option '--reason'"),
    ):
        proc, modules = run_probe(repo, *argv)
        assert proc.returncode == code, proc.stderr
        assert says in proc.stdout + proc.stderr
        assert "typer" in modules


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h"]])
def test_the_help_imports_the_commands_it_shows_and_no_other(tmp_path, argv):
    proc, modules = run_probe(tmp_path, *argv)
    assert proc.returncode == (2 if not argv else 0), proc.stderr
    commands = command_modules()
    imported = {commands[m][0] for m in modules if m in commands}
    shown = {name for name, hidden in commands.values() if not hidden}
    assert imported == shown, f"wb {' '.join(argv)} imports {sorted(imported - shown)}"
    for name in shown:
        assert f" {name} " in proc.stdout, name


@pytest.mark.parametrize("argv", [["task", "--help"], ["task"], ["task", "add", "--help"], ["note", "--help"]])
def test_a_command_s_help_imports_that_command_alone(tmp_path, argv):
    proc, modules = run_probe(tmp_path, *argv)
    assert "Usage: wb " + argv[0] in proc.stdout, proc.stdout + proc.stderr
    commands = command_modules()
    assert {commands[m][0] for m in modules if m in commands} == {argv[0]}


# -- the typer-free parser binds what typer binds ------------------------------------------------------


@functools.cache
def click_command(path: tuple[str, ...]) -> Any:
    import typer

    from workbench.cli.app import app

    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    return cmd


def test_the_fast_parameters_are_the_typer_commands_parameters() -> None:
    import inspect

    import click

    from workbench.cli import writes

    for path, (params, body) in writes.FAST.items():
        cmd = click_command(path)
        defaults = {n: p.default for n, p in inspect.signature(getattr(writes, body)).parameters.items()}
        arguments = [(p.name, p.nargs) for p in cmd.params if isinstance(p, click.Argument)]
        assert tuple(arguments) == params.arguments, path
        assert all(p.required for p in cmd.params if isinstance(p, click.Argument)), path
        options: dict[str, tuple[str, str]] = {}
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.name == "help":
                continue
            assert not p.secondary_opts and len(p.opts) == 1, (path, p.opts)
            counted = isinstance(p.type, click.IntRange) and p.type.min == 1 and p.type.max is None
            kind = "flag" if p.is_flag else "multi" if p.multiple else "count" if counted else "value"
            options[p.opts[0]] = (str(p.name), kind)
            if not p.required:
                expected = p.default if kind != "multi" else None
                assert defaults[str(p.name)] == expected, (path, p.name, p.default)
        assert options == params.options, path
        assert tuple(sorted(str(p.name) for p in cmd.params if getattr(p, "required", False)
                            and isinstance(p, click.Option))) == tuple(sorted(params.required)), path


def click_binds(path: tuple[str, ...], args: list[str]) -> dict[str, Any] | None:
    """What typer's click command binds for `args`, or None when it refuses them (or shows its help)."""
    import click

    cmd = click_command(path)
    try:
        ctx = cmd.make_context(" ".join(["wb", *path]), list(args))
    except (click.exceptions.Exit, click.ClickException):
        return None
    return {k: list(v) if isinstance(v, tuple) else v for k, v in ctx.params.items()}


def fast_binds(path: tuple[str, ...], args: list[str]) -> dict[str, Any] | None:
    import inspect

    from workbench.cli import writes

    params, body = writes.FAST[path]
    values = writes.parse(params, args)
    if values is None:
        return None
    defaults = {n: p.default for n, p in inspect.signature(getattr(writes, body)).parameters.items()
                if n != "chdir" and p.default is not inspect.Parameter.empty}
    return {**defaults, **values}


def same(fast: dict[str, Any], click: dict[str, Any]) -> bool:
    norm = {k: (v or None) if isinstance(v, list) else v for k, v in click.items()}
    return {k: (v or None) if isinstance(v, list) else v for k, v in fast.items()} == norm


COMMON = [
    (("task", "add"), ["Write the parser"]),
    (("task", "add"), ["--kind", "review", "Review it", "--reviews=T-001", "--json"]),
    (("task", "add"), ["x", "--accept", "pytest -q", "--accept", "ruff check", "--depends-on", "T-001"]),
    (("task", "add"), ["--", "--a title that starts with dashes"]),
    (("task", "add"), ["x", "--owner", "human", "--owner", "builder", "--description", ""]),
    (("task", "start"), ["T-001", "--actor", "agent"]),
    (("task", "done"), ["--force", "T-001"]),
    (("task", "block"), ["T-001", "--reason", "why"]),
    (("note",), ["a", "decision", "--actor=human"]),
    (("note",), ["-"]),
    (("set",), ["next_action=go on", "assumptions=[\"a\"]", "--json"]),
    (("task", "list"), []),
    (("task", "list"), ["--json"]),
    (("task", "list"), ["--status", "todo", "--blocked", "--limit", "5", "--label=x", "--all", "--tree"]),
]


@pytest.mark.parametrize(("path", "args"), COMMON)
def test_common_arguments_take_the_fast_path_and_bind_as_in_typer(path, args):
    fast, click = fast_binds(path, args), click_binds(path, args)
    assert fast is not None and click is not None
    assert same(fast, click), (fast, click)


def test_any_arguments_bind_as_in_typer_or_go_to_typer() -> None:
    """Random argument lists from the tokens that matter: whenever the fast parser binds, typer binds the
    same; whenever typer refuses (or shows its help), the fast parser leaves it to typer."""
    from workbench.cli import writes

    tokens = ["x", "T-001", "-", "--", "-h", "--help", "-x", "--bogus", "--json", "--json=1", "--force",
              "--force=yes", "--actor", "--actor=agent", "agent", "--kind", "--kind=", "--kind=review", "--reason",
              "--reason=r", "--accept", "--accept=true", "--depends-on", "--jso", "--own", "a=b", "-C", "", "--owner",
              "--limit", "--limit=0", "--limit=3", "05", "-1", "--status", "--ready", "--tree"]
    rng = random.Random(20260)
    for path in writes.FAST:
        for _ in range(200):
            args = [rng.choice(tokens) for _ in range(rng.randint(0, 6))]
            fast, click = fast_binds(path, args), click_binds(path, args)
            if fast is not None:
                assert click is not None and same(fast, click), (path, args, fast, click)


# -- a commit reads its parent without git when it can --------------------------------------------------


@about_git
@pytest.mark.parametrize("packed", [False, True])
def test_a_commit_reads_its_parent_from_loose_objects_or_through_git_when_packed(bench, repo, git, packed):
    """A new process's first commit reads the parent's trees from the loose objects wb wrote (no `git
    cat-file`); after `git gc` packed them, through git. Either way the commit carries the hand edit's
    trailer, keeps the root tree, and leaves the index clean after a file left .workbench/."""
    from workbench.api import Bench

    bench.add_task("one")
    if packed:
        git(repo, "gc", "-q")
        assert "count: 0" in git(repo, "count-objects", "-v")
    head = git(repo, "rev-parse", "HEAD").strip()
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + "# a comment by hand\n")
    (repo / ".workbench" / "artifacts" / ".gitkeep").unlink()
    fresh = Bench.open(repo)  # nothing remembered of the last commit, as in a new `wb` process
    fresh.add_task("two")
    assert git(repo, "rev-parse", "HEAD^").strip() == head
    assert "Wb-Also-Changed: config.yaml" in git(repo, "log", "-1", "--format=%B")
    assert {"README.md", "app.py", ".workbench"} <= set(git(repo, "ls-tree", "--name-only", "HEAD").split())
    assert "artifacts/.gitkeep" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert git(repo, "status", "--porcelain") == ""
    git(repo, "fsck", "--strict")


@about_git
def test_a_packed_parent_is_read_through_git_once_per_process(bench, repo, git, monkeypatch):
    """issue 33: the check of sealed files and the commit both need the parent's trees; once its objects are
    packed (as wb's own packing leaves them: the refs stay loose), git reads them once per process, not once
    per caller (each read was one `git cat-file --batch` per tree level)."""
    from workbench.api import Bench
    from workbench.git import objects as gitrepo

    bench.add_task("one")
    git(repo, "repack", "-a", "-d", "-q")
    git(repo, "prune-packed")
    asked: list[tuple[str, ...]] = []
    real = gitrepo.cat_batch

    def counting(cwd, specs):
        asked.append(tuple(specs))
        return real(cwd, specs)

    monkeypatch.setattr(gitrepo, "cat_batch", counting)
    Bench.open(repo).add_task("two")
    assert asked, "the packed parent was not read through git"
    assert len(asked) == len(set(asked)), asked
    assert git(repo, "status", "--porcelain") == ""


@about_git
def test_a_task_add_runs_two_git_processes_also_after_wbs_packing(repo, git, tmp_path):
    """issue 33: one `wb task add` runs `git config -z --list` (identity and signing) and `git update-ref
    --stdin`, and no other git (the index update is written in-process: git/indexfile.py) — also once wb's
    packing has moved the unchanged artifacts/ subtree into a pack (it was then read through two `git cat-file
    --batch` per add). Counted, not timed: GIT_TRACE names every git command."""
    import os

    from tests.conftest import run_wb

    assert run_wb(repo, "init").returncode == 0
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace("\ngit:\n", "\ngit:\n  pack_every: 4\n", 1))
    for i in range(9):  # past two pack runs: artifacts/ is in wb's pack
        assert run_wb(repo, "task", "add", f"warm-up {i}").returncode == 0
    assert list((repo / ".git" / "objects" / "pack").glob("pack-*.idx"))
    # no more pack runs (a pack run is its own git, and the add after it reads its packed parent through git)
    config.write_text(config.read_text().replace("pack_every: 4", "pack_every: 0", 1))
    assert run_wb(repo, "task", "add", "after the last pack run").returncode == 0
    commands = []
    for i in range(2):
        trace = tmp_path / f"trace-{i}"
        added = run_wb(repo, "task", "add", f"counted {i}", env={**os.environ, "GIT_TRACE": str(trace)})
        assert added.returncode == 0, added.stderr
        commands.append(sorted(line.split("built-in: git ", 1)[1].split()[0]
                               for line in trace.read_text().splitlines() if "built-in: git " in line))
    assert commands == [["config", "update-ref"]] * 2
    assert git(repo, "status", "--porcelain") == ""
    git(repo, "fsck", "--strict")
