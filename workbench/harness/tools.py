"""Tools declared in config.yaml: argv lists with {placeholders} filled per element, never a shell."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.harness.types import ToolError

INLINE_LIMIT = 4096  # bytes of output kept in the event; more goes to artifacts/
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    argv: tuple[str, ...]
    mode: str = "mutating"
    timeout: float = 600.0
    idempotent: bool = False
    cwd: str | None = None
    on_error: str | None = None  # pause | fail | continue (a plan step's own on_error wins)


def fill(argv: tuple[str, ...], args: dict[str, Any]) -> list[str]:
    """Fill `{name}` in each element from `args`. Each element stays one argument, whatever its value holds
    (`; rm -rf /` or `$(id)` is passed literally: there is no shell)."""
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in args:
            raise ToolError(f"missing argument {m.group(1)!r} for {m.string!r}")
        value = args[m.group(1)]
        if isinstance(value, dict | list):
            raise ToolError(f"argument {m.group(1)!r} must be a string or number")
        return str(value)

    return [_PLACEHOLDER.sub(sub, element) for element in argv]


MODES = ("safe_readonly", "confirm_once", "mutating")  # least strict first: a step may only move right


def strictest(*modes: str | None) -> str:
    return max((m for m in modes if m), key=MODES.index, default="mutating")


def loosened(step_id: str, tool: str, asked: str | None, spec: ToolSpec | None) -> str | None:
    """Why a step's mode may not stand (it is looser than its tool's declared mode), or None."""
    if asked is None or spec is None or MODES.index(asked) >= MODES.index(spec.mode):
        return None
    return (f"step {step_id}: mode {asked} is looser than tool `{tool}`'s declared mode {spec.mode}; "
            "a plan may only make a tool stricter")


TAIL_LINES, TAIL_CHARS = 20, 2000


def stderr_tail(text: str) -> str:
    """The last lines of a failed tool's stderr, what a person reads first; the whole is in artifacts/."""
    tail = "\n".join(text.rstrip("\n").splitlines()[-TAIL_LINES:])
    return tail[-TAIL_CHARS:]


def failure(name: str, result: dict[str, Any]) -> ToolError | None:
    """A result whose exit status is not 0 is a failure of its step: the error to record, or None."""
    code = result.get("exit_code")
    if not isinstance(code, int) or code == 0:
        return None
    tail = str(result.get("stderr_tail") or "")
    last = tail.strip().splitlines()[-1] if tail.strip() else ""
    status = f"{code}" if code >= 0 else f"{code} (killed by signal {-code})"
    return ToolError(f"tool {name}: exit {status}" + (f": {last}" if last else ""),
                     {"exit_code": code, "stderr_tail": tail, "result": result})


class ToolBox:
    def __init__(self, tools: dict[str, dict[str, Any]], root: Path, artifacts: Path,
                 redact: list[str] | None = None) -> None:
        self.root = root
        self.artifacts = artifacts
        self.redact = [os.environ[name] for name in (redact or []) if os.environ.get(name)]
        self._specs = {
            name: ToolSpec(name, tuple(t["argv"]), t.get("mode", "mutating"), float(t.get("timeout", 600)),
                           bool(t.get("idempotent", False)), t.get("cwd"), t.get("on_error"))
            for name, t in (tools or {}).items()
        }

    def spec(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def _scrub(self, text: str) -> str:
        for secret in self.redact:
            text = text.replace(secret, "[redacted]")
        return text

    def run(self, spec: ToolSpec, args: dict[str, Any], key: str) -> dict[str, Any]:
        argv = fill(spec.argv, args)
        cwd = self.root
        if spec.cwd:
            cwd = (self.root / spec.cwd).resolve()
            if not cwd.is_relative_to(self.root.resolve()):
                raise ToolError(f"tool {spec.name}: cwd {spec.cwd!r} leaves the repository")
        start = time.monotonic()
        try:
            proc = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=spec.timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ToolError(f"tool {spec.name} timed out after {spec.timeout:g}s") from None
        except OSError as err:
            raise ToolError(f"tool {spec.name} could not start: {err.strerror or err}") from None
        result: dict[str, Any] = {"exit_code": proc.returncode, "seconds": round(time.monotonic() - start, 3)}
        failed = proc.returncode != 0
        for stream in ("stdout", "stderr"):
            data = self._scrub(getattr(proc, stream).decode(errors="replace")).encode()
            if len(data) <= INLINE_LIMIT and not (failed and data):
                result[stream] = data.decode()
            else:  # large, or the output of a failure: the whole of it goes to artifacts/
                result[stream] = data[:400].decode(errors="replace") + ("…" if len(data) > 400 else "")
                result[f"{stream}_artifact"] = self._artifact(key, stream, data)
        if failed:
            result["stderr_tail"] = stderr_tail(self._scrub(proc.stderr.decode(errors="replace")))
        return result

    def _artifact(self, key: str, stream: str, data: bytes) -> dict[str, Any]:
        from workbench.store.atomic import atomic_write

        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
        name = f"{safe}.{stream}.txt"
        if self.artifacts.is_symlink() or not self.artifacts.parent.resolve().is_relative_to(self.root.resolve()):
            raise ToolError(f"{self.artifacts.name}/ is a symbolic link or lies outside the repository: "
                            "wb writes artifacts only inside .workbench/ (the output was not kept)")
        self.artifacts.mkdir(exist_ok=True)
        atomic_write(self.artifacts / name, data)
        return {"path": f".workbench/artifacts/{name}", "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data)}
