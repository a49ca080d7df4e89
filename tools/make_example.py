"""Regenerate .workbench.example/: a complete workbench made by the real wb — state with a decision log, a board
with build and review tasks, the event log of a finished session, a config with tools and hooks.

    python tools/make_example.py [TARGET]   (default: .workbench.example/ of this checkout;
                                             tests/docs/test_example.py validates and replays the result)

Two steps need a person, and are driven as one, at a terminal of their own (tests/person.py: a pty, the code wb
shows typed back): `wb trust`, since the config's commands were written by hand, not by this clone's wb; and
`wb resume --approve`, since the changelog step is confirm_once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.person import as_person  # noqa: E402

CONFIG = """\
# wb settings. Edit freely: your comments survive. Reference: docs/files.md#configyaml
schema_version: 1
git:
  commit: every
  ref: null
lock_timeout: 10
human_guard_seconds: 5
acceptance_timeout: 600
budget: {max_turns: 20, max_tool_calls: 50, max_wall_seconds: 1800}
approvals: human   # a person at a terminal approved `changelog` (confirm_once) in this example's session
tools:
  pytest:
    argv: [python3, -c, "print('12 passed')", "{path}"]
    mode: safe_readonly
    timeout: 600
    idempotent: true
  changelog:
    argv: [python3, -c, "print('changelog updated for', __import__('sys').argv[1])", "{version}"]
    mode: confirm_once
    timeout: 60
hooks:
  before_tool_call:
    - run: [python3, -c, "import sys, json; json.load(sys.stdin)"]
      timeout: 10
  on_complete:
    - run: [python3, -c, "import sys; sys.stdin.read()"]
      timeout: 10
redact: [DEPLOY_TOKEN]
"""
PLAN = """\
steps:
  - id: tests
    description: Run the parser's tests
    tool: pytest
    args: {path: tests/test_parser.py}
  - id: review
    description: Read the diff once more
  - id: changelog
    description: Add the changelog entry
    tool: changelog
    args: {version: "0.4.0"}
  - id: publish
    description: Publish the package
    tool: publish
    args: {index: pypi}
"""


def main(target: Path = ROOT / ".workbench.example") -> None:
    tmp = Path(tempfile.mkdtemp())
    repo = tmp / "repo"
    repo.mkdir()
    env = {**os.environ, "CI": "1", "GIT_AUTHOR_NAME": "example", "GIT_AUTHOR_EMAIL": "example@example.invalid",
           "GIT_COMMITTER_NAME": "example", "GIT_COMMITTER_EMAIL": "example@example.invalid"}

    def run(*argv: str) -> None:
        cmd = [sys.executable, "-m", "workbench.cli.main", *argv[1:]] if argv[0] == "wb" else list(argv)
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
        if proc.returncode not in (0, 3):
            raise SystemExit(f"{' '.join(argv)} failed: {proc.stdout}{proc.stderr}")

    def person(*argv: str) -> None:
        """`wb ARGV…` as a person at a terminal, typing the code wb asks for."""
        term = as_person(repo, *argv[1:], env=env)
        if term.returncode not in (0, 3) or not term.asked:
            raise SystemExit(f"{' '.join(argv)} at the terminal failed (exit {term.returncode}): {term.output}")

    run("git", "init", "-q")
    run("git", "commit", "-q", "--allow-empty", "-m", "root")
    run("wb", "init")
    (repo / ".workbench" / "config.yaml").write_text(CONFIG)
    (repo / "plan.yaml").write_text(PLAN)
    run("wb", "task", "add", "Parse TOML config files", "--accept", "true", "--description",
        "The loader reads pyproject.toml's [tool.app] table.")
    run("wb", "task", "add", "Review the parser", "--kind", "review", "--reviews", "T-001")
    run("wb", "task", "add", "Release 0.4.0", "--depends-on", "T-001", "--depends-on", "T-002", "--owner", "human")
    run("wb", "task", "start", "T-001")
    run("wb", "note", "Chose tomllib over a third-party parser: stdlib since 3.11, and we read only.")
    run("wb", "set", "assumptions=[\"Python >= 3.11\"]", "touched_files=[\"app/config.py\"]")
    run("wb", "task", "done", "T-001")
    run("wb", "task", "start", "T-002")
    person("wb", "trust")  # the config's tools and hooks, written here by hand
    run("wb", "run", "Ship 0.4.0", "--plan", "plan.yaml")
    person("wb", "resume", "--approve")
    run("wb", "resume", "--result", '{"url": "https://pypi.org/project/app/0.4.0/", "ok": true}')
    run("wb", "task", "done", "T-002")
    run("wb", "task", "block", "T-003", "--reason", "waiting for the release manager")
    run("wb", "set", "next_action=Ask the release manager to approve 0.4.0")
    run("wb", "note", "Session shipped the package to staging; release waits for sign-off.")
    # what a clone of the repository holds: the files git tracks, nothing of this machine's (lock, temp files)
    tracked = subprocess.run(["git", "ls-files", "-z", "--", ".workbench"], cwd=repo, env=env, check=True,
                             capture_output=True, text=True).stdout.split("\0")
    shutil.rmtree(target, ignore_errors=True)
    for name in filter(None, tracked):
        dest = target / Path(name).relative_to(".workbench")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, dest)
    shutil.rmtree(tmp)
    print(f"wrote {target}")


if __name__ == "__main__":
    main(*(Path(a).resolve() for a in sys.argv[1:2]))
