"""Planners: a plan file, an external command, or a Python callable `module:function`."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.errors import Refused
from workbench.harness.loop import Event, PlannerError, Step

MAX_STEPS = 1000


def steps_from_plan(data: Any, source: str) -> list[Step]:
    from workbench.model import schemas

    if isinstance(data, list):
        data = {"steps": data}
    schemas.check("plan", data, source)
    if len(data["steps"]) > MAX_STEPS:  # every step rewrites the session in state.md: bound the plan
        raise Refused(f"{source}: steps: {len(data['steps'])} steps; a plan holds at most {MAX_STEPS}")
    from workbench.model.statefile import too_deep

    for i, item in enumerate(data["steps"]):
        if too_deep(item.get("args"), 48):  # state.md, where the session keeps them, must read back
            raise Refused(f"{source}: steps[{i}].args: nested more than 48 levels deep")
    steps = []
    for i, item in enumerate(data["steps"], start=1):
        steps.append(Step(item.get("id") or f"s{i}", item["description"], bool(item.get("tool")), item.get("tool"),
                          dict(item.get("args") or {}), item.get("mode"), item.get("on_error")))
    if len({s.id for s in steps}) != len(steps):
        raise Refused(f"{source}: steps: two steps share an id")
    return steps


def load_plan_file(path: Path) -> list[Step]:
    from workbench.model import yamlio

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Refused(f"{path}: no such plan file") from None
    except UnicodeDecodeError:
        raise Refused(f"{path}: not UTF-8 text") from None
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as err:
            where = f"{path.name}:{getattr(err, 'lineno', '?')}"
            raise Refused(f"{where}: broken JSON: {getattr(err, 'msg', err)}") from None
    else:
        data = yamlio.to_plain(yamlio.load_safe(text, path.name))
    return steps_from_plan(data, path.name)


class FilePlanner:
    def __init__(self, steps: list[Step], name: str) -> None:
        self.steps = steps
        self.name = name
        self.__qualname__ = f"plan file {name}"

    def __call__(self, goal: str, history: list[Step]) -> list[Step]:
        return list(self.steps) if not history else []  # once steps ran, the file has nothing more to plan


class CommandPlanner:
    """`--planner CMD`: the request as JSON on stdin, the plan (or a reflection) as JSON on stdout.

    plan request: {"kind": "plan", "goal", "state", "board", "history"} → {"steps": [...]}
    reflect request: {"kind": "reflect", ..., "step": {...}} → {"decision": "next" | "done" | "replan"}
    """

    def __init__(self, argv: list[str], cwd: Path, context: Callable[[], dict[str, Any]], timeout: float = 120) -> None:
        self.argv = argv
        self.cwd = cwd
        self.context = context
        self.timeout = timeout
        self.events: Callable[[], list[Event]] = list  # the loop's events, for the request's history
        self.__qualname__ = "command " + " ".join(argv)

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        label = " ".join(self.argv)
        try:
            proc = subprocess.run(self.argv, input=json.dumps(request, default=str).encode(), capture_output=True,
                                  timeout=self.timeout, cwd=self.cwd)
        except subprocess.TimeoutExpired:
            raise PlannerError(f"planner `{label}` timed out after {self.timeout:g}s") from None
        except OSError as err:
            raise PlannerError(f"planner `{label}` could not start: {err.strerror or err}") from None
        if proc.returncode != 0:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()
            raise PlannerError(f"planner `{label}` exited {proc.returncode}" + (f": {tail[-1]}" if tail else ""))
        try:
            answer = json.loads(proc.stdout)
        except (ValueError, RecursionError):
            raise PlannerError(f"planner `{label}` printed something that is not JSON") from None
        if not isinstance(answer, dict):
            raise PlannerError(f"planner `{label}` printed JSON that is not an object")
        return answer

    def _request(self, kind: str, goal: str, events: list[Event]) -> dict[str, Any]:
        return {"kind": kind, "goal": goal, **self.context(),
                "history": [{"type": e.type, "ts": e.ts, "payload": e.payload} for e in events[-200:]]}

    def __call__(self, goal: str, history: list[Step]) -> list[Step]:
        request = self._request("plan", goal, self.events())
        request["executed"] = [s.item() for s in history]
        answer = self._ask(request)
        try:
            return steps_from_plan(answer, "planner output")
        except Refused as err:
            raise PlannerError(str(err)) from None

    def reflect(self, goal: str, history: list[Event], step: dict[str, Any]) -> Any:
        answer = self._ask({**self._request("reflect", goal, history), "step": step})
        decision = answer.get("decision", "next")
        if decision not in ("next", "done", "replan"):
            raise PlannerError(f"planner decision must be next, done or replan, not {decision!r}")
        return decision


def callable_planner(spec: str, root: str | None = None) -> Callable[[str, list[Step]], list[Step]]:
    from workbench.harness.hooks import import_from_repo

    try:
        fn = import_from_repo(spec, root)
    except (ImportError, AttributeError, ValueError) as err:
        raise Refused(f"cannot load planner {spec}: {err}") from None
    return fn
