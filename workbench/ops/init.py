"""`wb init`: create `.workbench/` in a git work tree. Idempotent, and resumable after a crash halfway."""

from __future__ import annotations

from pathlib import Path

from workbench.errors import Refused
from workbench.git.repo import find_worktree
from workbench.model.layout import GITIGNORE, GITIGNORE_REF
from workbench.store.drivers import register_drivers
from workbench.store.transaction import LastWrite
from workbench.store.workbench import Workbench

CONFIG_TEMPLATE = """\
# wb settings. Edit freely: your comments survive. Reference: docs/files.md#configyaml
schema_version: 1
git:
  commit: every          # every: one commit per mutation | off: write the files, never commit
  ref: null              # a branch to record state on instead of the checked-out one (e.g. wb-state)
lock_timeout: 10         # seconds to wait for another wb process before giving up (exit 6)
human_guard_seconds: 5   # after a hand edit of a workbench file, agent writes to it are refused this long
acceptance_timeout: 600  # seconds each acceptance command of `wb task done` may run
budget: {max_turns: 20, max_tool_calls: 50, max_wall_seconds: 1800}
approvals: human         # human: a person at a terminal approves confirm_once/mutating tools | any: anyone (CI)
tools: {}
hooks: {}
redact: []               # names of environment variables whose values never reach events or commits
"""


NEXT_ACTION = "Add the first task: wb task add TITLE"




def init(start: Path, ref: str | None = None) -> tuple[Workbench, bool, LastWrite]:
    """Create `.workbench/` in the worktree holding `start` (idempotent). Returns (workbench, created, what was
    committed).

    What is missing is made by one transaction (`create`): config.yaml, .gitignore, artifacts/.gitkeep and
    calls.jsonl, the `workbench.init` event when the log is empty, and state.md and board.json folded from the
    log (a crash between init's append and its snapshots leaves a log without them). Then the drivers are
    registered and everything is committed under the one commit policy, whose gate refuses a file that fails
    validation: `wb init` on a workbench a person broke says so, and commits nothing."""

    root = find_worktree(start)
    wb = Workbench(root)
    p = wb.paths
    complete = all(f.exists() for f in (p.config, p.state, p.board, p.events, p.calls, p.wb / ".gitignore",
                                        p.artifacts / ".gitkeep"))
    if p.wb.is_dir() and wb.log.tail().seq == 0 and (p.state.exists() or p.board.exists()):
        # a state or board without a log: an older workbench. Never overwrite it with an empty one.
        raise Refused(".workbench/ holds state.md or board.json but no event log (a wb 0.0.x workbench?): "
                      "run `wb migrate`")
    created = False
    if complete:
        with wb.lock():
            registered = register_drivers(root, wb.git.common_dir)
    else:
        with wb.transaction(actor="wb", commit=False, create=True) as tx:
            template = CONFIG_TEMPLATE.replace("  ref: null", f"  ref: {ref}", 1) if ref else CONFIG_TEMPLATE
            tx.create_file("config.yaml", template.encode())
            tx.create_file(".gitignore", (GITIGNORE_REF if ref else GITIGNORE).encode())
            tx.create_file("artifacts/.gitkeep", b"")
            tx.create_file("calls.jsonl", b"")
            if tx.base_seq == 0:
                tx.emit("workbench.init", {"next_action": NEXT_ACTION}, actor="wb")
            created = bool(tx.events or tx.rebuilt)
            registered = register_drivers(root, wb.git.common_dir)
    wb.reload_config()  # read again: the lock read it before config.yaml existed
    outcome = wb.checkpoint("wb: init" if created or not complete else "wb: commit pending workbench changes")
    last = LastWrite(commit=outcome.sha, warnings=([outcome.skipped] if outcome.skipped else []) + outcome.warnings)
    if registered and not created:
        last.warnings.append("registered wb's git diff and merge drivers: " + ", ".join(registered))
    return wb, created or bool(registered and not complete), last
