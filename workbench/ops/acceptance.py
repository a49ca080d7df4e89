"""Acceptance commands: the checks `wb task done` runs before a task may be done."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from workbench.errors import Refused
from workbench.model import digest

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def run_acceptance(cmd: str, cwd: Path, timeout: float) -> dict[str, Any]:
    """Run one acceptance command through the shell (they are the user's own shell commands)."""
    import signal  # here: a write that only checks a task's acceptance list (`wb task add`) runs nothing
    import subprocess

    start = time.monotonic()
    # its own process group, so a timeout stops everything the command started, not just the shell
    proc = subprocess.Popen(cmd, shell=True, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
        outcome = "passed" if code == 0 else f"exited {code}"
        tail = out.decode(errors="replace")[-400:]
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out = proc.communicate()[0] or b""
        code, outcome, tail = 124, f"timed out after {timeout:g}s", ""
    # `output` is the whole of it (the proof of done keeps it in artifacts/ and records its digest)
    return {"cmd": cmd, "exit": code, "outcome": outcome, "seconds": round(time.monotonic() - start, 3),
            "output_tail": tail, "sha256": digest.sha256(out).hexdigest(), "output": out}


def run_all(cmds: list[str], cwd: Path, timeout: float,
            report: Callable[[str, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run each command in turn (no lock held: other writers and `wb status` go on meanwhile), telling
    `report` before ("start", {"cmd"}) and after ("end", result) each one. Refused (Untrusted) before any runs
    when one came through git and is not trusted on this clone (store/trust.py)."""
    from workbench.store import trust

    trust.require(cwd, [trust.acceptance_command(cmd) for cmd in cmds])
    results = []
    for cmd in cmds:
        if report is not None:
            report("start", {"cmd": cmd})
        result = run_acceptance(cmd, cwd, timeout)
        if report is not None:
            report("end", result)
        results.append(result)
    return results


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else ""


def task_problem(task: dict[str, Any]) -> None:
    """Refuse, in the user's words, a task (or the fields a change sets) the schema would refuse obscurely or
    accept although it makes no sense: a title of whitespace only, a review task that reviews nothing. One
    check for `wb task add|set`, the Python API and the MCP server alike."""
    title = task.get("title")
    if "title" in task and (not isinstance(title, str) or not title.strip()):
        raise Refused("board.json: a task's title must say something: it is empty or only whitespace")
    if task.get("kind") == "review" and "reviews" in task and not task.get("reviews"):
        raise Refused("board.json: a review task names the task it reviews: --reviews ID (`reviews` in the "
                      "Python API and MCP)")


def dependency_problem(board: dict[str, Any], task_id: str, depends_on: list[str]) -> None:
    """Refuse a self-dependency or a dependency cycle that `task_id` depending on `depends_on` would make."""
    if task_id in depends_on:
        raise Refused(f"board.json: {task_id} cannot depend on itself")
    graph = {t["id"]: list(t.get("depends_on") or []) for t in board["tasks"]}
    graph[task_id] = list(depends_on)
    path: list[str] = []

    def walk(node: str, seen: set[str]) -> list[str] | None:
        if node == task_id and path:
            return [*path, node]
        if node in seen:
            return None
        seen.add(node)
        path.append(node)
        for nxt in graph.get(node, []):
            found = walk(nxt, seen)
            if found:
                return found
        path.pop()
        return None

    cycle = walk(task_id, set())
    if cycle:
        raise Refused(f"board.json: depends_on would make a cycle: {' → '.join(cycle)}")


def unmet_refusal(task_id: str, unmet: list[tuple[str, str]], verb: str) -> Refused:
    """The one line that refuses `wb task start|done` of a task whose dependencies are not done."""
    names = ", ".join(f"{d} ({s})" for d, s in unmet)
    return Refused(f"{task_id} waits on {names}: finish {'it' if len(unmet) == 1 else 'them'} first, or ask a "
                   f"person to run `wb task {verb} {task_id} --force` (recorded)")
