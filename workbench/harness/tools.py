"""Tools declared in config.yaml: argv lists with {placeholders} filled per element, never a shell."""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.harness.types import ToolError
from workbench.model.redaction import redact_text, secret_values

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


class ToolBox:
    def __init__(self, tools: dict[str, dict[str, Any]], root: Path, artifacts: Path,
                 redact: list[str] | None = None) -> None:
        self.root = root
        self.artifacts = artifacts
        self.redact = secret_values({"redact": redact or []})
        self._specs = {
            name: ToolSpec(name, tuple(t["argv"]), t.get("mode", "mutating"), float(t.get("timeout", 600)),
                           bool(t.get("idempotent", False)), t.get("cwd"))
            for name, t in (tools or {}).items()
        }

    def spec(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

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
        for stream in ("stdout", "stderr"):
            data = redact_text(getattr(proc, stream).decode(errors="replace"), self.redact).encode()
            if len(data) <= INLINE_LIMIT:
                result[stream] = data.decode()
            else:
                result[stream] = data[:400].decode(errors="replace") + "…"
                result[f"{stream}_artifact"] = self._artifact(key, stream, data)
        return result

    def _artifact(self, key: str, stream: str, data: bytes) -> dict[str, Any]:
        """A tool's long output, kept in artifacts/ through the store's write function: the tool ran outside
        any transaction (its effect cannot wait for one), and the file is committed with the step's events."""
        from workbench.store.atomic import write_workbench_file

        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", redact_text(key, self.redact))
        name = f"{safe}.{stream}.txt"
        if self.artifacts.is_symlink() or not self.artifacts.parent.resolve().is_relative_to(self.root.resolve()):
            raise ToolError(f"{self.artifacts.name}/ is a symbolic link or lies outside the repository: "
                            "wb writes artifacts only inside .workbench/ (the output was not kept)")
        write_workbench_file(self.artifacts.parent, f"{self.artifacts.name}/{name}", data)
        return {"path": f".workbench/artifacts/{name}", "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data)}
