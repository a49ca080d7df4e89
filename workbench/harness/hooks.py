"""Hooks: ten topics, subscribers fired in registration order.

A subscriber gets the payload (a dict) and may mutate it in place, return a dict to replace it, return
SKIP to skip the next step, return Pause(reason) to ask for human review, or raise HookAbort(reason) to
abort what the topic guards. Commands from config.yaml get the payload as JSON on stdin: exit 0 with
optional JSON on stdout ({"payload": {...}, "skip": true, "pause": "reason"}); exit 2 blocks with stderr
as the reason. On a before_* topic a command that crashes or times out blocks too (fails closed).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TOPICS = (  # the seed lesson's ten, in its order
    "before_plan", "after_plan", "before_tool_call", "after_tool_call", "before_step", "after_step",
    "on_error", "on_pause", "on_budget_exceeded", "on_complete",
)
HOOK_TOPICS = TOPICS


class HookAbort(Exception):  # noqa: N818 - the seed lesson's name
    """Raised by a subscriber to abort the step or call its topic guards."""

    def __init__(self, reason: str = "aborted by hook") -> None:
        super().__init__(reason)
        self.reason = reason


class _Skip:
    def __repr__(self) -> str:
        return "SKIP"


SKIP = _Skip()


@dataclass
class Pause:
    reason: str = "review requested by a hook"


@dataclass
class FireOutcome:
    payload: dict[str, Any]
    skip: bool = False
    pause: str | None = None
    problems: list[dict[str, Any]] = field(default_factory=list)  # hook.error / hook.block events to record


Subscriber = Callable[[dict[str, Any]], Any]


class HookRegistry:
    def __init__(self) -> None:
        self._subs: dict[str, list[tuple[str, Subscriber]]] = {t: [] for t in TOPICS}

    def on(self, topic: str, fn: Subscriber, *, name: str | None = None) -> Subscriber:
        if topic not in self._subs:
            raise ValueError(f"unknown hook topic {topic!r}; topics: {', '.join(TOPICS)}")
        self._subs[topic].append((name or str(getattr(fn, "__qualname__", repr(fn))), fn))
        return fn

    def subscribers(self, topic: str) -> list[str]:
        return [name for name, _fn in self._subs[topic]]

    def fire(self, topic: str, payload: dict[str, Any]) -> FireOutcome:
        """Run the topic's subscribers in order. HookAbort propagates (with the hook's name attached)."""
        if topic not in self._subs:
            raise ValueError(f"unknown hook topic {topic!r}")
        outcome = FireOutcome(payload)
        for name, fn in self._subs[topic]:
            try:
                result = fn(outcome.payload)
            except HookAbort as abort:
                abort.hook = name  # type: ignore[attr-defined]
                raise
            except Exception as err:  # a Python hook that crashes
                outcome.problems.append({"topic": topic, "hook": name, "error": f"{type(err).__name__}: {err}"})
                if topic.startswith("before_"):
                    exc = HookAbort(f"hook {name} failed: {type(err).__name__}: {err}")
                    exc.hook = name  # type: ignore[attr-defined]
                    raise exc from None
                continue
            if result is SKIP:
                outcome.skip = True
            elif isinstance(result, Pause):
                outcome.pause = result.reason
            elif isinstance(result, dict):
                outcome.payload = result
            elif isinstance(result, HookDirective):
                outcome.problems.extend(result.problems)
                if result.payload is not None:
                    outcome.payload = result.payload
                outcome.skip = outcome.skip or result.skip
                outcome.pause = result.pause or outcome.pause
        return outcome


@dataclass
class HookDirective:
    """What a command hook answered (the JSON it printed, or the problems running it)."""

    payload: dict[str, Any] | None = None
    skip: bool = False
    pause: str | None = None
    problems: list[dict[str, Any]] = field(default_factory=list)


def command_hook(topic: str, argv: list[str], timeout: float, cwd: str, env: dict[str, str] | None = None
                 ) -> Subscriber:
    """A subscriber that runs `argv` (never through a shell) with the payload as JSON on stdin."""
    label = " ".join(argv)
    fail_closed = topic.startswith("before_")

    def run(payload: dict[str, Any]) -> HookDirective | None:
        def failed(why: str) -> HookDirective:
            if fail_closed:
                raise HookAbort(f"hook `{label}` {why}")
            return HookDirective(problems=[{"topic": topic, "hook": label, "error": why}])

        try:
            proc = subprocess.run(argv, input=json.dumps(payload, default=_plain).encode(), capture_output=True,
                                  timeout=timeout, cwd=cwd, env=env)
        except subprocess.TimeoutExpired:
            return failed(f"timed out after {timeout:g}s")
        except OSError as err:
            return failed(f"could not start: {err.strerror or err}")
        stderr = proc.stderr.decode(errors="replace").strip()
        if proc.returncode == 2:
            reason = stderr.splitlines()[-1] if stderr else "blocked"
            if fail_closed:
                raise HookAbort(reason)
            return HookDirective(pause=f"hook_blocked:{reason}",
                                 problems=[{"topic": topic, "hook": label, "error": f"blocked: {reason}"}])
        if proc.returncode != 0:
            return failed(f"exited {proc.returncode}" + (f": {stderr.splitlines()[-1]}" if stderr else ""))
        out = proc.stdout.decode(errors="replace").strip()
        if not out:
            return None
        try:
            answer = json.loads(out)
        except ValueError:
            return failed("printed something that is not JSON")
        if not isinstance(answer, dict):
            return failed("printed JSON that is not an object")
        replaced = answer.get("payload")
        return HookDirective(payload=replaced if isinstance(replaced, dict) else None,
                             skip=bool(answer.get("skip")),
                             pause=str(answer["pause"]) if answer.get("pause") else None)

    run.__qualname__ = label
    return run


def _plain(value: Any) -> Any:
    """JSON for a command hook: a Step as its plan item (id, description, tool, args, mode, status)."""
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    return str(value)


def import_from_repo(spec: str, root: str | None) -> Any:
    """`module:attr` from config.yaml → the attribute, the module looked up in the repository first.

    The repository's root is first on sys.path only while the named module is imported; afterwards it stays
    last, for the module's own late imports. So a file in the repository that happens to be named like a
    module (json.py, a stray typing.py) never replaces one wb itself imports later in the process."""
    module_name, _, attr = spec.partition(":")
    if root is None:
        return getattr(importlib.import_module(module_name), attr)
    sys.path.insert(0, root)
    try:
        return getattr(importlib.import_module(module_name), attr)
    finally:
        sys.path.remove(root)  # the first occurrence: the one inserted above
        if root not in sys.path:
            sys.path.append(root)


def python_hook(spec: str, root: str | None = None) -> Subscriber:
    """`module:function` → the callable (imported from the repo root `root`, or the environment)."""
    try:
        fn = import_from_repo(spec, root)
    except (ImportError, AttributeError, ValueError) as err:
        raise ValueError(f"cannot load hook {spec}: {err}") from None
    if not callable(fn):
        raise ValueError(f"hook {spec} is not callable")
    result: Subscriber = fn
    return result


def registry_from_config(hooks: dict[str, list[dict[str, Any]]], cwd: str, env: dict[str, str] | None = None
                         ) -> HookRegistry:
    from pathlib import Path

    from workbench.store import trust  # before a module is imported or a command kept: trusted on this clone?

    trust.require(Path(cwd), trust.config_commands({"hooks": hooks}))
    registry = HookRegistry()
    for topic, entries in (hooks or {}).items():
        for entry in entries:
            if "run" in entry:
                registry.on(topic, command_hook(topic, list(entry["run"]), float(entry.get("timeout", 30)), cwd, env),
                            name=" ".join(entry["run"]))
            else:
                registry.on(topic, python_hook(entry["python"], cwd), name=entry["python"])
    return registry
