"""What every bench of bench/ shares: the bars, the settings, the runner of subprocesses, the side-by-side
measurement, a Result and its line, and the Context of a run (temp dir, wb, the repositories built).

bench/run.py (the whole run) and the groups in modules of their own (scale, writers, web, backends, cost) import
this module; it imports none of them, so no bench module imports another back. Stdlib only.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PY = sys.executable
HISTORY_EVENTS = 100_000
HISTORY_SMALL = 10
BOARD_TASKS = 5_000
BOARD_SMALL = 10

BARS = {
    "startup.version": 5.0,
    "startup.status": 4.0,  # issue 10 item 5 (CONTRACT.md §8 said 8x)
    "cli_mutation.task_add": 10.0,  # issue 10 item 5 (CONTRACT.md §8 said 15x)
    "api_mutation.rate": 100.0,  # committed mutations per second, at least
    "api_mutation.vs_git": 1.5,
    "history.status": 1.3,
    "history.status_state": 1.3,
    "board.task_add": 2.0,
    "board.history": 2.0,  # wb board's history key at 100,000 events vs 10 (the sealed segments indexed)
    "replay.notes": 50_000.0,  # events per second, at least
    "replay.state": 50_000.0,
    "hooks.pre_tool_use": 2.0,  # issue 13 item 4
    "hooks.post_tool_use": 2.0,
    "mcp.startup": 10.0,  # issue 13 §5: spawn to answered initialize ≤ 0.5 s (0.7–1.7 s before)
}
GROUPS = ("startup", "cli_mutation", "api_mutation", "history", "board", "replay", "hooks", "mcp", "sync", "scale",
          "writers", "web", "backends", "cost")


class BenchError(Exception):
    pass


# -- measuring ------------------------------------------------------------------------------------------


@dataclass
class Settings:
    quick: bool

    def n(self, full: int, quick: int) -> int:
        return quick if self.quick else full


def wb_script() -> str:
    beside = Path(PY).parent / ("wb.exe" if os.name == "nt" else "wb")  # not resolved: a venv's bin/
    if beside.exists():
        return str(beside)
    found = shutil.which("wb")
    if not found:
        raise BenchError(f"no `wb` next to {PY} nor on PATH: run with the interpreter wb is installed in")
    return found


def bench_env(home: Path) -> dict[str, str]:
    """The environment of every subprocess: a private HOME and git identity (no user hooks, signing or
    config), no colour, and nothing that would change how Python or wb start."""
    env = dict(os.environ)
    for key in ("WB_DEBUG", "WB_LOCK_TIMEOUT", "PYTHONDONTWRITEBYTECODE", "PYTHONPROFILEIMPORTTIME",
                "PYTHONTRACEMALLOC", "PYTHONDEVMODE", "PYTHONWARNINGS", "GIT_DIR", "GIT_WORK_TREE",
                "GIT_INDEX_FILE", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        env.pop(key, None)
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "wb bench",
        "GIT_AUTHOR_EMAIL": "bench@wb.invalid",
        "GIT_COMMITTER_NAME": "wb bench",
        "GIT_COMMITTER_EMAIL": "bench@wb.invalid",
        "NO_COLOR": "1",
    })
    return env


class Runner:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def run(self, argv: list[str], cwd: Path, *, timeout: float | None = None,
            input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(argv, cwd=cwd, env=self.env, input=input, capture_output=True, timeout=timeout,
                              stdin=None if input is not None else subprocess.DEVNULL)
        if proc.returncode != 0:
            err = (proc.stderr or proc.stdout).decode(errors="replace").strip()[-600:]
            raise BenchError(f"`{' '.join(argv)}` in {cwd} exited {proc.returncode}: {err}")
        return proc

    def timer(self, argv: list[str], cwd: Path) -> Callable[[], float]:
        """A zero-argument function: run `argv` once, return its wall time in seconds."""
        env = self.env

        def once() -> float:
            start = time.perf_counter()
            proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
            elapsed = time.perf_counter() - start
            if proc.returncode != 0:
                raise BenchError(f"`{' '.join(argv)}` exited {proc.returncode}: "
                                 f"{proc.stderr.decode(errors='replace').strip()[-600:]}")
            return elapsed

        return once

    def piped(self, argv: list[str], cwd: Path, data: bytes) -> Callable[[], float]:
        """As `timer`, with `data` on stdin through a pipe (a hook's payload)."""
        env = self.env

        def once() -> float:
            start = time.perf_counter()
            proc = subprocess.run(argv, cwd=cwd, env=env, input=data, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
            elapsed = time.perf_counter() - start
            if proc.returncode != 0 or proc.stderr:
                raise BenchError(f"`{' '.join(argv)}` exited {proc.returncode}: "
                                 f"{proc.stderr.decode(errors='replace').strip()[-600:]}")
            return elapsed

        return once


def side_by_side(sides: list[Callable[[], float]], rounds: int, warmup: int) -> list[list[float]]:
    """Run every side once per round, rotating which goes first, after `warmup` discarded rounds."""
    for _ in range(warmup):
        for side in sides:
            side()
    samples: list[list[float]] = [[] for _ in sides]
    for r in range(rounds):
        k = r % len(sides)
        for i in list(range(len(sides)))[k:] + list(range(len(sides)))[:k]:
            samples[i].append(sides[i]())
    return samples


def fmt_s(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.1f}s"
    if seconds >= 1:
        return f"{seconds:.2f}s"
    return f"{seconds * 1000:.1f}ms"


def spread(samples: list[float]) -> float:
    """Interquartile range relative to the median: how noisy one side was."""
    if len(samples) < 4:
        return 0.0
    q = statistics.quantiles(samples, n=4)
    return (q[2] - q[0]) / statistics.median(samples)


@dataclass
class Result:
    name: str
    kind: str  # "ratio" (bar = largest allowed), "limit" (seconds; bar = most allowed), "rate" (bar = smallest
    #            allowed) or "info" (no bar)
    value: float  # the ratio, or the rate
    bar: float | None
    unit: str = "x"
    a_label: str = ""
    a_median_s: float | None = None
    b_label: str = ""
    b_median_s: float | None = None
    n: int = 0
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool | None:
        if self.bar is None:
            return None
        return self.value <= self.bar if self.kind in ("ratio", "limit") else self.value >= self.bar

    def line(self) -> str:
        verdict = {True: "PASS", False: "FAIL", None: "INFO"}[self.ok]
        if self.kind in ("ratio", "info") and self.a_median_s is not None and self.b_median_s is not None:
            text = (f"{self.name:<22} {self.a_label} {fmt_s(self.a_median_s)} / {self.b_label} "
                    f"{fmt_s(self.b_median_s)} = {self.value:.2f}x")
            bar = f"(bar {self.bar:g}x)" if self.bar is not None else "(no bar)"
        elif self.kind == "limit" and self.unit != "s":  # an absolute bar in another unit (MiB), at most
            text = f"{self.name:<22} {self.a_label} {self.value:,.1f} {self.unit}".rstrip()
            bar = f"(bar <= {self.bar:g} {self.unit})" if self.bar is not None else "(no bar)"
        elif self.kind == "limit":  # an absolute bar: seconds, at most
            text = f"{self.name:<22} {self.a_label} {fmt_s(self.value)}".rstrip()
            bar = f"(bar <= {fmt_s(self.bar)})" if self.bar is not None else "(no bar)"
        elif self.kind == "ratio":  # a ratio of two other quantities (bytes): the detail names them
            text = f"{self.name:<22} {self.value:.2f}x"
            bar = f"(bar {self.bar:g}x)" if self.bar is not None else "(no bar)"
        elif self.unit == "s":
            text = f"{self.name:<22} {fmt_s(self.value)}"
            bar = "(no bar)"
        else:
            text = f"{self.name:<22} {self.value:,.0f} {self.unit}"
            bar = f"(bar >= {self.bar:,.0f} {self.unit})" if self.bar is not None else "(no bar)"
        detail = f"  [{self.detail}]" if self.detail else ""
        return f"{text}  {bar} {verdict}{detail}"

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "value": round(self.value, 4), "unit": self.unit,
                               "bar": self.bar, "pass": self.ok, "n": self.n}
        if self.a_median_s is not None:
            out["a"] = {"label": self.a_label, "median_ms": round(self.a_median_s * 1000, 3)}
        if self.b_median_s is not None:
            out["b"] = {"label": self.b_label, "median_ms": round(self.b_median_s * 1000, 3)}
        out.update(self.extra)
        return out


def ratio(name: str, a_label: str, a: list[float], b_label: str, b: list[float], *,
          bar: float | None = None, info: bool = False) -> Result:
    ma, mb = statistics.median(a), statistics.median(b)
    return Result(name, "info" if info else "ratio", ma / mb, None if info else (bar or BARS[name]), "x",
                  a_label, ma, b_label, mb, n=min(len(a), len(b)),
                  detail=f"n={min(len(a), len(b))}, IQR {spread(a):.0%}/{spread(b):.0%}")


# -- fixtures -------------------------------------------------------------------------------------------


class Context:
    def __init__(self, settings: Settings, tmp: Path) -> None:
        self.settings = settings
        self.tmp = tmp
        home = tmp / "home"
        home.mkdir()
        self.runner = Runner(bench_env(home))
        self.wb = wb_script()
        self._repos: dict[str, Path] = {}

    def git(self, cwd: Path, *args: str) -> str:
        return self.runner.run(["git", *args], cwd).stdout.decode()

    def git_repo(self, name: str) -> Path:
        path = self.tmp / name
        path.mkdir()
        self.git(path, "init", "-q")
        self.git(path, "config", "gc.auto", "0")  # no auto-gc pause in the middle of a measurement
        self.git(path, "config", "commit.gpgsign", "false")
        (path / "README.md").write_text("a repository that wb benchmarks run in\n")
        self.git(path, "add", "README.md")
        self.git(path, "commit", "-q", "-m", "initial commit")
        return path

    def commits(self, repo: Path) -> int:
        return int(self.git(repo, "rev-list", "--count", "HEAD").strip())

    def workbench(self, name: str, kind: str | None = None, total: int = 0) -> Path:
        """A repo with `wb init` done, optionally filled by _gen.py to `total` events of `kind`, validated."""
        if name in self._repos:
            return self._repos[name]
        repo = self.git_repo(name)
        self.runner.run([self.wb, "init"], repo)
        if kind:
            self.runner.run([PY, str(HERE / "_gen.py"), str(repo), kind, str(total)], repo, timeout=900)
        self.runner.run([self.wb, "validate"], repo, timeout=900)
        dirty = self.git(repo, "status", "--porcelain", "--", ".workbench")
        if dirty.strip():
            raise BenchError(f"{name}: git status shows changes under .workbench/ after setup:\n{dirty}")
        self._repos[name] = repo
        return repo


# --only, as main() in bench/run.py parsed it: the groups and result names asked for (empty: all of them)
ONLY: list[str] = []


def wanted(ctx: Context, name: str) -> bool:
    """Whether result `name` (or its group) was asked for with --only."""
    if not ONLY:
        return True
    group = name.split(".")[0]
    return any(o in (name, group) for o in ONLY)
