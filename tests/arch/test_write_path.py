"""The one write path, kept true: only the store writes files (workbench/store/), and only the one commit policy
(workbench/store/commit.py) commits `.workbench/`. A module elsewhere that writes a file is on the allow-list
below with what it writes and why that is not `.workbench/` — or it calls the store's write functions
(`Workbench.transaction`, `write_workbench_file`, the cache writers), which this test does not flag."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "workbench"
STORE = PACKAGE / "store"

# module (relative to workbench/) → (the write calls it may make, what they write and why not via the store)
OUTSIDE_THE_STORE = {
    "git/objects.py": ({"open:w", "os.replace", "os.unlink"}, "git's own objects, in .git/objects (never .workbench/)"),
    "git/notes.py": ({"open:w", "os.replace", "unlink"},
                     "git's textconv cache: note objects in .git/objects, for refs/notes/textconv/* "
                     "(never .workbench/)"),
    "git/blobstat.py": ({"open:w", "os.replace", "os.unlink"},
                        "the blob ids of .workbench/'s files by stat, a cache in <git dir>/wb (never .workbench/)"),
    "git/sharedrefs.py": ({"open:w", "os.replace", "os.unlink"},
                          "the state ref's base, the sync-writing marker and the worktree's id, in <git dir>/wb "
                          "(never .workbench/)"),
    "git/userpolicy.py": ({"os.unlink"}, "the commit-msg hook's message file and the hooks' own index, temporary "
                                         "(never .workbench/)"),
    "integrations/agents_md.py": ({"atomic_write"}, "AGENTS.md at the repository root, outside .workbench/"),
    "ops/init.py": ({"atomic_write"}, "the agent's settings (`wb init --claude-code|--codex`), outside .workbench/"),
    "integrations/mcpserve.py": ({"open:w"}, "the MCP protocol stream: a duplicate of stdout (os.fdopen), not a file"),
    "git/spawn.py": ({"os.open:w", "open:w"}, "a git process's standard streams: /dev/null, and the pipe to its stdin "
                                             "(os.fdopen), not a file"),
    "api/loop.py": ({"write_text"}, "an inline plan (Bench.run(steps=...)), in a temporary directory outside the repo"),
    "cli/merge_driver.py": ({"write_bytes"}, "the merge result into the file git names (%A), outside .workbench/"),
    "ops/person.py": ({"os.open:w", "os.write"}, "the question to a person, on /dev/tty (a terminal, not a file)"),
    "cli/harness_view.py": ({"os.open:w", "os.write"}, "the inline Allow? [y/N], on /dev/tty (a terminal, not a file)"),
    "review/textconv_cache.py": ({"atomic_write"}, "the last render of a big log, kept in <git dir>/wb/textconv "
                                                   "(a per-machine cache, never .workbench/)"),
    "faults.py": ({"write_text"}, "a test-only marker outside the repository, when WB_PAUSE holds wb at a fault point"),
    "ops/demo.py": ({"write_text", "shutil.copy"},
                    "the demo's throwaway repository: its project file, and config.yaml copied in as a person "
                    "would edit it"),
    "cli/task.py": ({"write_text", "unlink"}, "`wb task edit`: the task's text for $EDITOR, kept in <git dir>/wb/edit "
                                              "until saved (a per-machine file, never .workbench/)"),
    "cli/diff.py": ({"write_text"}, "`wb diff -o FILE`: the rendered diff into the file the user names (refused "
                                    "inside .workbench/)"),
    "git/userfiles.py": ({"os.open:w", "os.write", "os.replace", "unlink"},
                         "a user's own file a hook wb ran changed, put back as it was (never .workbench/)"),
    "git/indexfile.py": ({"os.open:w", "os.write", "os.replace", "os.unlink"},
                         "the user's index: its .workbench/ entries, .git/index by way of .git/index.lock (never "
                         ".workbench/)"),
    "git/packs.py": ({"open:w", "os.open:w", "os.write", "os.replace", "os.unlink", "unlink", "write_text"},
                     "wb's own packs of its objects, in .git/objects/pack, and their journal and record in "
                     "<git dir>/wb (never .workbench/)"),
}

# calls that write, delete or replace a file: name → how it is spelled (function or method name)
WRITERS = {"atomic_write", "write_bytes", "write_text", "unlink", "truncate", "rmdir", "rename", "replace",
           "append_lines"}
OS_WRITERS = {"replace", "rename", "unlink", "remove", "ftruncate", "truncate", "pwrite", "write", "rmdir",
              "removedirs"}
SHUTIL_WRITERS = {"copy", "copy2", "copyfile", "copytree", "move", "rmtree"}
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _mode(call: ast.Call, position: int) -> str | None:
    """The mode of an open() call: "r" when it names none, None when it is not a constant (counted as a write)."""
    args = list(call.args)
    node = args[position] if len(args) > position else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    if node is None:
        return "r"
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def writes(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """(kind of write, line) for every call in `tree` that can write a file."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            if func.id == "open":
                mode = _mode(node, 1)
                if mode is None or any(c in mode for c in "wax+"):
                    yield "open:w", node.lineno
            elif func.id in WRITERS:
                yield func.id, node.lineno
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner == "os" and func.attr == "open":
                flags = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} & WRITE_FLAGS
                if flags:
                    yield "os.open:w", node.lineno
            elif owner == "os" and func.attr == "fdopen":
                mode = _mode(node, 1)
                if mode is None or any(c in mode for c in "wax+"):
                    yield "open:w", node.lineno
            elif owner == "os" and func.attr in OS_WRITERS:
                yield f"os.{func.attr}", node.lineno
            elif owner == "shutil" and func.attr in SHUTIL_WRITERS:
                yield f"shutil.{func.attr}", node.lineno
            elif func.attr == "open" and owner != "os":  # Path.open(mode); Bench.open(start) is no file
                mode = _mode(node, 0)
                if mode is not None and any(c in mode for c in "wax+"):
                    yield "open:w", node.lineno
            elif func.attr in WRITERS and owner not in ("str", "text", "value", "line", "name", "s"):
                if func.attr == "replace" and not _path_replace(node):
                    continue  # str.replace(old, new)
                yield func.attr, node.lineno


def _path_replace(call: ast.Call) -> bool:
    """`Path.replace(target)` takes one argument; `str.replace(old, new)` two or three."""
    return len(call.args) == 1 and not call.keywords


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_validators" in path.parts:
            continue
        yield path.relative_to(PACKAGE).as_posix(), path


def test_only_the_store_writes_files() -> None:
    found: list[str] = []
    for rel, path in _modules():
        if path.is_relative_to(STORE):
            continue
        allowed = OUTSIDE_THE_STORE.get(rel, (set(), ""))[0]
        for kind, line in writes(ast.parse(path.read_text(encoding="utf-8"))):
            if kind not in allowed:
                found.append(f"workbench/{rel}:{line}: {kind}")
    assert not found, ("a file written outside the store: write .workbench/ through Workbench.transaction() or "
                       "workbench.store.atomic.write_workbench_file, or (for a file outside .workbench/) add the "
                       "module to OUTSIDE_THE_STORE with the reason:\n" + "\n".join(found))


def test_the_allow_list_is_not_stale() -> None:
    """Each exception is still needed, and names a write its module makes."""
    for rel, (allowed, reason) in OUTSIDE_THE_STORE.items():
        path = PACKAGE / rel
        assert path.exists() and reason, rel
        kinds = {kind for kind, _line in writes(ast.parse(path.read_text(encoding="utf-8")))}
        assert allowed <= kinds, f"workbench/{rel}: no longer makes {sorted(allowed - kinds)}: drop it from the list"


def test_the_scan_sees_each_kind_of_write() -> None:
    """The checker itself: every way of writing a file that it looks for is found, and reading is not."""
    source = """
import os, shutil
from pathlib import Path
p = Path("x")
open(p, "w"); open(p, mode="ab"); p.open("w"); os.fdopen(3, "wb")
p.write_bytes(b""); p.write_text(""); p.unlink(); os.replace("a", "b"); p.replace("b")
os.open(p, os.O_WRONLY | os.O_CREAT); shutil.copy("a", "b"); atomic_write(p, b"")
open(p); open(p, "rb"); p.open(); os.open(p, os.O_RDONLY); "a".replace("a", "b"); p.read_bytes()
"""
    kinds = [kind for kind, _line in writes(ast.parse(source))]
    assert kinds.count("open:w") == 4
    assert {"write_bytes", "write_text", "unlink", "os.replace", "replace", "os.open:w", "shutil.copy",
            "atomic_write"} <= set(kinds)
    assert len(kinds) == 12, kinds


def test_only_the_commit_policy_commits_the_workbench() -> None:
    """`GitRepo.commit_workbench` is called from workbench/store/commit.py alone: "commit off", the trailers,
    redaction, the validation gate and the handling of git's errors are decided in one place."""
    callers = []
    for rel, path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "commit_workbench":
                callers.append(rel)
    assert callers == ["store/commit.py"], callers
