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
from workbench.model.redaction import redact_text, secret_values

INLINE_LIMIT = 4096  # bytes of output kept in the event; more goes to artifacts/
MAX_OUTPUT_BYTES = 16 * 1024 * 1024  # per stream, unless a tool declares max_output_bytes; the rest is discarded
REDACT_MARGIN = 64 * 1024  # bytes read past max_output_bytes, so a secret the cap cuts is redacted whole first
DRAIN_SECONDS = 0.5  # after the tool exits, how long wb reads what a background child still writes to its pipes
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL to a timed-out tool's process group
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
    max_output_bytes: int = MAX_OUTPUT_BYTES


@dataclass
class Captured:
    data: bytearray
    cut: int = 0  # bytes read and discarded beyond the cap


@dataclass
class Finished:
    returncode: int
    stdout: Captured
    stderr: Captured
    timed_out: bool = False


def run_process(argv: list[str], cwd: Path, timeout: float, cap: int) -> Finished:
    """Run argv in its own process group; read both pipes, keeping at most `cap` bytes of each (the rest is
    read and counted, so the tool never blocks and wb's memory stays bounded). The verdict is the tool's own
    exit: once it has exited, what a background child still writes is read for DRAIN_SECONDS, then wb stops
    listening. On timeout the whole group is killed (SIGTERM, then SIGKILL)."""
    import selectors
    import signal

    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    guard = _guard(proc.pid)
    out, err = Captured(bytearray()), Captured(bytearray())
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, out)
    sel.register(proc.stderr, selectors.EVENT_READ, err)
    deadline = time.monotonic() + timeout
    drain_until: float | None = None
    timed_out = False
    try:
        while sel.get_map():
            now = time.monotonic()
            if proc.poll() is not None:
                drain_until = drain_until or now + DRAIN_SECONDS
                if now >= drain_until:
                    break
            elif now >= deadline:
                timed_out = True
                _kill_group(proc, signal.SIGTERM)
                try:
                    proc.wait(KILL_GRACE)
                except subprocess.TimeoutExpired:
                    pass
                _kill_group(proc, signal.SIGKILL)
                break
            for key, _mask in sel.select(timeout=0.05):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                captured: Captured = key.data
                room = cap - len(captured.data)
                if room > 0:
                    captured.data += chunk[:room]
                captured.cut += max(0, len(chunk) - max(room, 0))
        if timed_out:
            _kill_group(proc, signal.SIGKILL)
        returncode = proc.wait()
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
        if proc.poll() is None:  # an error in wb itself: leave no tool behind
            _kill_group(proc, signal.SIGKILL)
            proc.wait()
        _release(guard)
    return Finished(returncode, out, err, timed_out)


# The guard of a tool's process group: a shell in a session of its own, reading a pipe only wb writes. When wb
# dies (kill -9 included), the pipe closes unread and the guard kills the tool's whole group — the tool and the
# children it started — so nothing wb ran keeps running without it. When the call ends, wb says so and the
# guard exits without killing (a background child the tool left keeps running, as documented).
GUARD = 'IFS= read -r ended || kill -9 "-$1" 2>/dev/null'


def _guard(group: int) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(["/bin/sh", "-c", GUARD, "wb-tool-guard", str(group)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # no /bin/sh: the tool runs unguarded, as it did before
        return None


def _release(guard: subprocess.Popen[bytes] | None) -> None:
    """The call is over (or wb killed the group itself): the guard exits without killing anything."""
    if guard is None or guard.stdin is None:
        return
    try:
        guard.stdin.write(b"ended\n")
        guard.stdin.close()
    except OSError:  # the guard is gone already
        pass
    try:
        guard.wait(5)
    except subprocess.TimeoutExpired:
        guard.kill()
        guard.wait()


def _kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


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


_ERROR_LINE = re.compile(
    r"(?i)\b(?:error|errors|failed|failure|fatal|unrecognized|unrecognised|invalid|not found|no such|denied|"
    r"cannot|can't|could not|panic|exception|abort(?:ed)?)\b|^E  |^[A-Za-z_][\w.]*(?:Error|Exception|Exit|"
    r"Interrupt|Warning): ")
ERROR_LINES, ERROR_CHARS = 3, 300


def error_lines(stderr: str, stdout: str = "") -> list[str]:
    """The lines of a failed tool's output that carry its error, what its summary shows (not pytest's
    `rootdir:` line after `unrecognized arguments`): the last line of a traceback, then the lines that say
    error, failed, unrecognized…, of stderr first, then of stdout; the last few, each clipped."""
    found: list[str] = []
    for text in (stderr, stdout):
        lines = text.splitlines()
        if len(lines) > 20000:  # the end of a long output is where its error is
            lines = lines[-20000:]
        picked = []
        for i, line in enumerate(lines):
            if line.startswith("Traceback (most recent call last)"):
                end = next((j for j in range(i + 1, len(lines)) if lines[j] and not lines[j][0].isspace()), None)
                if end is not None:
                    picked.append(end)
            elif _ERROR_LINE.search(line) and line.strip():
                picked.append(i)
        for i in sorted(set(picked))[-ERROR_LINES:]:
            line = lines[i].strip()
            if line not in found:
                found.append(line[:ERROR_CHARS])
        if found:
            break
    return found[-ERROR_LINES:]


def failure(name: str, result: dict[str, Any]) -> ToolError | None:
    """A result whose exit status is not 0 is a failure of its step: the error to record, or None."""
    code = result.get("exit_code")
    if not isinstance(code, int) or code == 0:
        return None
    tail = str(result.get("stderr_tail") or "")
    errors = [str(line) for line in result.get("error_lines") or [] if isinstance(line, str)]
    last = " | ".join(errors) if errors else (tail.strip().splitlines()[-1] if tail.strip() else "")
    status = f"{code}" if code >= 0 else f"{code} (killed by signal {-code})"
    return ToolError(f"tool {name}: exit {status}" + (f": {last}" if last else ""),
                     {"exit_code": code, "stderr_tail": tail, "result": result})


class ToolBox:
    def __init__(self, tools: dict[str, dict[str, Any]], root: Path, artifacts: Path,
                 redact: list[str] | None = None, git: Any = None) -> None:
        self.root = root
        self.artifacts = artifacts
        self.redact = secret_values({"redact": redact or []})
        self._specs = {
            name: ToolSpec(name, tuple(t["argv"]), t.get("mode", "mutating"), float(t.get("timeout", 600)),
                           bool(t.get("idempotent", False)), t.get("cwd"), t.get("on_error"),
                           int(t.get("max_output_bytes", MAX_OUTPUT_BYTES)))
            for name, t in (tools or {}).items()
        }
        self._journal: Any = False  # not looked up yet
        self._git = git  # the workbench's (a NoGit without a repository: store/sqlitedb.py), else found from root

    @property
    def journal(self) -> Any:
        """The repository's shared journal of calls that reach the outside world (workbench.store.calljournal):
        what every worktree and branch has run, or None outside git."""
        if self._journal is False:
            from workbench.store.calljournal import CallJournal

            self._journal = CallJournal.for_worktree(self.root, self._git)
        return self._journal

    def journaled(self, record: dict[str, Any]) -> dict[str, Any]:
        """A record for the shared journal, with the secrets calls.jsonl would not hold either taken out."""
        from workbench.model.redaction import redact

        return dict(redact(record, self.redact))

    def spec(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def run(self, spec: ToolSpec, args: dict[str, Any], key: str) -> dict[str, Any]:
        from workbench.store import trust  # a tool that came through git runs only once trusted on this clone

        trust.require(self.root, [trust.Command("tool", spec.name, trust.CONFIG, list(spec.argv), spec.cwd,
                                                mode=spec.mode, rerun=spec.idempotent)])
        argv = fill(spec.argv, args)
        cwd = self.root
        if spec.cwd:
            cwd = (self.root / spec.cwd).resolve()
            if not cwd.is_relative_to(self.root.resolve()):
                raise ToolError(f"tool {spec.name}: cwd {spec.cwd!r} leaves the repository")
        start = time.monotonic()
        try:
            run = run_process(argv, cwd, spec.timeout, spec.max_output_bytes + REDACT_MARGIN)
        except OSError as err:
            raise ToolError(f"tool {spec.name} could not start: {err.strerror or err}") from None
        if run.timed_out:
            raise ToolError(f"tool {spec.name} timed out after {spec.timeout:g}s (its process group was killed)")
        result: dict[str, Any] = {"exit_code": run.returncode, "seconds": round(time.monotonic() - start, 3)}
        failed = run.returncode != 0
        texts = {}
        for stream, captured in (("stdout", run.stdout), ("stderr", run.stderr)):
            # redacted before it is cut to max_output_bytes: a cut secret would leave its head behind
            texts[stream] = redact_text(bytes(captured.data).decode(errors="replace"), self.redact)
            data = texts[stream].encode()
            if len(data) > spec.max_output_bytes:
                captured.cut += len(data) - spec.max_output_bytes
                data = data[:spec.max_output_bytes]
            if len(data) <= INLINE_LIMIT and not (failed and data) and not captured.cut:
                result[stream] = data.decode()
            else:  # large, or the output of a failure: the whole of it (up to the cap) goes to artifacts/
                result[stream] = data[:400].decode(errors="replace") + ("…" if len(data) > 400 else "")
                if captured.cut:
                    data += (f"\n[wb: {captured.cut} more bytes discarded: the tool's max_output_bytes is "
                             f"{spec.max_output_bytes}]\n").encode()
                result[f"{stream}_artifact"] = self._artifact(key, stream, data, captured.cut)
        if failed:
            result["stderr_tail"] = stderr_tail(texts["stderr"])
            errors = error_lines(texts["stderr"], texts["stdout"])
            if errors:
                result["error_lines"] = errors
        return result

    def _artifact(self, key: str, stream: str, data: bytes, cut: int = 0) -> dict[str, Any]:
        """A tool's long output, kept in artifacts/ through the store's write function: the tool ran outside
        any transaction (its effect cannot wait for one), and the file is committed with the step's events."""
        from workbench.store.atomic import write_workbench_file

        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", redact_text(key, self.redact))
        name = f"{safe}.{stream}.txt"
        if self.artifacts.is_symlink() or not self.artifacts.parent.resolve().is_relative_to(self.root.resolve()):
            raise ToolError(f"{self.artifacts.name}/ is a symbolic link or lies outside the repository: "
                            "wb writes artifacts only inside .workbench/ (the output was not kept)")
        write_workbench_file(self.artifacts.parent, f"{self.artifacts.name}/{name}", data)
        art: dict[str, Any] = {"path": f".workbench/artifacts/{name}", "sha256": hashlib.sha256(data).hexdigest(),
                               "bytes": len(data)}
        if cut:
            art["truncated_bytes"] = cut
        return art
