"""Helpers of the fuzz tests: a resettable workbench, the one assertion every fuzzed input must pass, and
strategies for hostile documents.

The assertion (`exercise`): loading, validating, showing the status of, and writing to a workbench holding
the fuzzed file either succeeds or raises a `WorkbenchError` with exit code 5 and a one-line message — never
another exception — and a refused write leaves every workbench file byte-identical.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.conftest import call_wb, hash_workbench

IDENTITY = {"GIT_AUTHOR_NAME": "Fuzz", "GIT_AUTHOR_EMAIL": "fuzz@example.invalid",
            "GIT_COMMITTER_NAME": "Fuzz", "GIT_COMMITTER_EMAIL": "fuzz@example.invalid"}

# Modest example counts: the whole folder runs in well under 90 s. A longer hunt:
# `WB_FUZZ_EXAMPLES=2000 pytest tests/fuzz` (the command-line cases get a tenth of that).
EXAMPLES = int(os.environ.get("WB_FUZZ_EXAMPLES", "50"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large, HealthCheck.large_base_example])
FEW = settings(FUZZ, max_examples=max(5, EXAMPLES // 10))


class Sandbox:
    """A repo with a workbench that a test resets to its first bytes between hypothesis examples."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.wb_dir = root / ".workbench"
        from workbench.model.layout import Paths

        self.cache_dir = Paths(root).cache  # wb's caches, in the git directory
        self.initial = self._read_all()
        self.initial_cache = {p.name: p.read_bytes() for p in sorted(self.cache_dir.glob("*")) if p.is_file()}
        self.head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                   check=True).stdout.strip()

    def _read_all(self) -> dict[str, bytes]:
        return {p.relative_to(self.wb_dir).as_posix(): p.read_bytes()
                for p in sorted(self.wb_dir.rglob("*")) if p.is_file() and not p.is_symlink()}

    def reset(self) -> None:
        # the branch back to the template's commit too: a work tree's log behind HEAD is one the user's git took
        # committed lines from, which the next write refuses (store/logprefix.py)
        subprocess.run(["git", "reset", "-q", self.head], cwd=self.root, check=True)
        for path in sorted(self.wb_dir.rglob("*"), reverse=True):
            rel = path.relative_to(self.wb_dir).as_posix()
            if path.is_symlink() or (path.is_file() and rel not in self.initial):
                path.unlink()
        for rel, data in self.initial.items():
            path = self.wb_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_bytes() != data:
                path.write_bytes(data)
        if self.cache_dir.is_dir():  # the snapshot copies come back as they were; the memos are dropped
            for memo in self.cache_dir.iterdir():
                if memo.name not in self.initial_cache or memo.name not in ("state.json", "state.body", "board.json"):
                    memo.unlink()
        for name, data in self.initial_cache.items():
            if name in ("state.json", "state.body", "board.json"):
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                (self.cache_dir / name).write_bytes(data)

    def path(self, name: str) -> Path:
        return self.wb_dir / name

    def write(self, name: str, data: bytes | str) -> None:
        self.path(name).write_bytes(data.encode("utf-8") if isinstance(data, str) else data)

    def original(self, name: str) -> bytes:
        return self.initial[name]

    def hashes(self) -> dict[str, str]:
        return hash_workbench(self.root)


def refused_or_ok(fn: Callable[[], Any]) -> tuple[Any, Exception | None]:
    """Run `fn`: its result, or the WorkbenchError it raised (which must be a one-line exit-5 refusal).
    Any other exception propagates and fails the test."""
    from workbench.errors import WorkbenchError

    try:
        return fn(), None
    except WorkbenchError as err:
        message = str(err)
        assert err.exit_code == 5, f"{type(err).__name__} (exit {err.exit_code}): {message}"
        assert message and "\n" not in message and "\r" not in message, repr(message)
        assert "Traceback" not in message and "internal error" not in message, message
        return None, err


def exercise(root: Path, *, write: bool = True) -> Exception | None:
    """Load, validate, show and (with `write`) write to the workbench at `root`, as a fresh process would.
    Returns the refusal of the load (None when it loads)."""
    from workbench.api import Bench, replay, status_of, validate_workbench
    from workbench.store.workbench import Workbench

    before = hash_workbench(root)
    _loaded, refusal = refused_or_ok(lambda: Workbench(root).load())
    problems = validate_workbench(Workbench(root))
    for problem in problems:
        assert isinstance(problem, str) and "\n" not in problem, repr(problem)
    if refusal is not None:
        assert problems, f"load refuses ({refusal}) but validate finds nothing"
    refused_or_ok(lambda: status_of(Workbench(root)))
    refused_or_ok(lambda: replay(Workbench(root)))
    assert hash_workbench(root) == before, "a read changed the workbench"
    if write:
        _done, write_refusal = refused_or_ok(lambda: Bench(Workbench(root)).note("a fuzzed note"))
        if write_refusal is not None:
            assert hash_workbench(root) == before, f"refused ({write_refusal}) but the files changed"
        elif refusal is not None:
            raise AssertionError(f"load refused ({refusal}) but a write went through")
    return refusal


def cli(root: Path, *args: str, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The command line on the fuzzed workbench, in this process (`main(argv)`, as a fresh process runs it)."""
    return call_wb(root, *args, input=input, timeout=timeout)


def assert_cli_clean(proc: subprocess.CompletedProcess[str], ok: tuple[int, ...] = (0,)) -> None:
    """Exit 5 with exactly one `wb: ` line on stderr, or one of the `ok` codes — never a traceback.
    (`wb validate` lists every problem: one `wb: ` line each.)"""
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    if proc.returncode in ok:
        return
    assert proc.returncode == 5, f"exit {proc.returncode}: {proc.stderr}"
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith("wb: ") for line in lines), proc.stderr
    assert len(lines) == 1 or {"validate", "replay"} & set(proc.args), proc.stderr


def copy_repo(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


# -- strategies -------------------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**30, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
    st.sampled_from(["T-001", "T-1", "idle", "running", "2026-01-01T00:00:00Z", "", "null", "~", "T-999"]),
)
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=12)

# YAML fragments a value may be replaced by: valid flow YAML, hostile tags, aliases, broken syntax
YAML_NASTIES = [
    "!!python/object/apply:os.system ['touch /tmp/wb_fuzz_owned']",
    "!!python/object/new:subprocess.Popen [['touch', '/tmp/wb_fuzz_owned']]",
    "!!python/name:os.system", "!!python/module:os", "!!binary aGVsbG8=", "!custom tagged", "!!set {a, b}",
    "!!omap [a: 1]", "!!timestamp 2001-12-14", "!!float nan", "!!int 0x1F", "2001-12-14t21:59:43.10-05:00",
    "&a [*a]", "*nowhere", "&x 1", "{", "[", "'unterminated", '"bad \\q escape"', "|", ">-", "? complex key",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "[" * 3000 + "]" * 3000, "{a: " * 400 + "1" + "}" * 400, ".nan", ".inf", "-.inf", "1e999",
    "9" * 500, "0o777", "0b101", "null", "~", "yes", "no", "on", "", "\t", "\x00", "\x7f\x85", "\ufeff",
    "\u2028", "a: b: c", "- item", "@reserved", "`reserved", "%TAG ! tag:x", "--- ", "...",
]
yaml_fragments = st.one_of(
    st.sampled_from(YAML_NASTIES),
    json_values.map(lambda v: json.dumps(v, allow_nan=True)),
    st.text(max_size=30),
)
