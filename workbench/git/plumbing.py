"""Running git: `run_git`, the one way wb starts a git command (its error a GitError of one line), and
`cat_batch`, the one `git cat-file --batch` that reads several objects in one process (`exist_batch`: its
`--batch-check`, asking only whether they are there). Every module of git/ asks git through these; git/refs.py's
RefMover keeps its own long-lived `git update-ref --stdin`."""

from __future__ import annotations

import os
from pathlib import Path

from workbench.errors import GitError

TYPE_CHECKING = False  # typing for the type checker only (docs/architecture.md)
if TYPE_CHECKING:  # for annotations only: each function that runs git imports subprocess (wb status runs none)
    import subprocess


def run_git(cwd: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
    import subprocess  # here, not at the top: reading the workbench (wb status) runs no git

    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, env=full_env)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {msg[-1] if msg else 'exit ' + str(proc.returncode)}")
    return proc


def cat_batch(cwd: Path, specs: list[str]) -> list[tuple[str, bytes] | None]:
    """The one `git cat-file --batch`: several objects in one subprocess, [(sha, body) or None] in the order
    of `specs` (None: missing or ambiguous)."""
    if not specs:
        return []
    out = run_git(cwd, "cat-file", "--batch", stdin=("\n".join(specs) + "\n").encode()).stdout
    result: list[tuple[str, bytes] | None] = []
    pos = 0
    for _spec in specs:
        end = out.index(b"\n", pos)
        parts = out[pos:end].decode(errors="replace").split()
        pos = end + 1
        if len(parts) != 3 or parts[-1] in ("missing", "ambiguous"):  # a spec may hold spaces: "<spec> missing"
            result.append(None)
            continue
        sha, _kind, size = parts
        result.append((sha, out[pos:pos + int(size)]))
        pos += int(size) + 1
    return result


def size_batch(cwd: Path, shas: list[str]) -> list[int | None]:
    """Each object's size in bytes (None: missing), in one `git cat-file --batch-check` (contents unread)."""
    if not shas:
        return []
    out = run_git(cwd, "cat-file", "--batch-check=%(objectsize)", stdin=("\n".join(shas) + "\n").encode(),
                  check=False).stdout
    return [int(line) if line.isdigit() else None for line in out.splitlines()]


def exist_batch(cwd: Path, shas: list[str]) -> list[bool]:
    """Whether the object store has each object, in one `git cat-file --batch-check` (contents unread)."""
    if not shas:
        return []
    out = run_git(cwd, "cat-file", "--batch-check", stdin=("\n".join(shas) + "\n").encode()).stdout
    return [not line.endswith(b" missing") for line in out.splitlines()]
