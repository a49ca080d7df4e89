"""`wb demo`: the main job on an embedded default, in a throwaway repository, narrated."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).parent / "demo_data"


def run_demo(directory: Path | None, say: Callable[[str], None], backend: str | None = None) -> Path:
    """The demo's story in a new repository `directory` (a temporary one by default), its workbench kept by
    `backend` ("files" or "sqlite"; None: what `wb init` makes by default, WB_DEFAULT_BACKEND)."""
    root = directory or Path(tempfile.mkdtemp(prefix="wb-demo-")) / "repo"
    if root.exists() and any(root.iterdir()):
        from workbench.errors import UsageError

        raise UsageError(f"{root} is not empty: give `wb demo` a new directory")
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CI": "1", "NO_COLOR": "1", "GIT_AUTHOR_NAME": "wb demo",
           "GIT_AUTHOR_EMAIL": "demo@example.invalid", "GIT_COMMITTER_NAME": "wb demo",
           "GIT_COMMITTER_EMAIL": "demo@example.invalid"}

    def sh(*argv: str, show: bool = True, expect: int = 0) -> int:
        """Run one command of the story; one that ends otherwise than the story says stops the demo."""
        if show:
            say(f"\n$ {shlex.join(argv)}")
        cmd = [sys.executable, "-m", "workbench.cli.main", *argv[1:]] if argv[0] == "wb" else list(argv)
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        for line in (proc.stdout + proc.stderr).rstrip("\n").splitlines():
            say(line)
        if show and proc.returncode:
            say(f"(exit {proc.returncode})")
        if proc.returncode != expect:
            from workbench.errors import WorkbenchError

            raise WorkbenchError(f"demo: `{shlex.join(argv)}` exited {proc.returncode}, not {expect}; "
                                 f"the demo repository stays at {root} to look into")
        return proc.returncode

    say(f"A throwaway repository: {root}")
    sh("git", "init", "-q", show=False)
    (root / "greet.py").write_text("print('bonjour')\n")
    sh("git", "add", "greet.py", show=False)
    sh("git", "commit", "-qm", "The user's own work", show=False)
    sh("wb", "init", *(["--backend", backend] if backend else []))
    config = root / ".workbench" / "config.yaml"
    # the demo's settings, with the lines of the init's that say where the workbench is kept (`storage: sqlite`)
    kept = [line for line in config.read_text(encoding="utf-8").splitlines(keepends=True)
            if line.startswith(("storage:", "sqlite_path:"))]
    config.write_text((DATA / "config.yaml").read_text(encoding="utf-8") + "".join(kept), encoding="utf-8")
    shutil.copy(DATA / "plan.yaml", root / "plan.yaml")
    _trust_demo_config(root)
    say("\n# .workbench/config.yaml declares two tools: `tests` (safe_readonly) and `write-notes` (mutating).")
    say("# plan.yaml has four steps; step 4 uses `deploy`, which wb does not know: a human runs it.")
    say("# It also says `approvals: any`: this demo is a script, and it approves on the person's behalf. With the")
    say("# default (`approvals: human`) a script's approval is refused: a person runs `wb resume --approve` at a")
    say("# terminal and types back the code wb shows there.")
    sh("wb", "task", "add", "Ship the greeting change", "--accept", "python3 greet.py")
    sh("wb", "task", "start", "T-001")
    sh("wb", "run", "Ship the greeting change", "--plan", "plan.yaml", expect=3)
    say("\n# exit 3: the session yielded. `wb status` says what it waits for and how to resume:")
    sh("wb", "status")
    say("\n# the demo approves the mutating tool on the person's behalf (approvals: any); a person would type:")
    sh("wb", "resume", "--approve", expect=3)
    say("\n# exit 3 again: the plan marks `deploy` mutating, so it is approved before it is handed over (a person")
    say("# types this at a terminal; the demo does it for them):")
    sh("wb", "resume", "--approve", expect=3)
    say("\n# exit 3 again: `deploy` must be run by a person, who reports its result:")
    sh("wb", "resume", "--result", '{"url": "https://staging.example.invalid", "ok": true}')
    sh("wb", "task", "done", "T-001")
    sh("wb", "note", "Shipped to staging; release notes in NOTES.md.")
    say("\n# what the session recorded, step by step:")
    sh("wb", "log", "--type", "step")
    if kept:
        say("\n# kept in SQLite (docs/storage.md): every step is a database transaction, not a git commit; git's log")
        say("# holds the user's own work only:")
    sh("git", "log", "--oneline")
    say("\n# the handoff packet for the next session: .workbench/handoff.md (people) and handoff.json (agents):")
    sh("wb", "handoff")
    sh("wb", "validate")
    sh("wb", "replay", "--verify")
    if kept:
        say(f"\nThe demo repository stays at {root}: `cd` there and try `wb status`, `wb log`, `wb export FILE`.")
    else:
        say(f"\nThe demo repository stays at {root}: `cd` there and try `wb status`, `wb log`, `git log -p`.")
    return root


def _trust_demo_config(root: Path) -> None:
    """The demo's config.yaml is written by this wb, on this clone: its tools are trusted (store/trust.py)."""
    from workbench.store import trust
    from workbench.store.config import parse_config

    config = parse_config((root / ".workbench" / "config.yaml").read_bytes())
    trust.remember(root, trust.config_commands(config))
