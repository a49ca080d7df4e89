"""`wb init`: create `.workbench/` in a git work tree. Idempotent, and resumable after a crash halfway."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.errors import Refused
from workbench.git.repo import find_worktree
from workbench.model import ids, reducer, schemas, statefile
from workbench.model.boardfile import encode_board
from workbench.model.layout import GITIGNORE, GITIGNORE_REF
from workbench.store.atomic import atomic_write
from workbench.store.caches import write_board_cache, write_state_cache
from workbench.store.drivers import register_drivers, wb_command
from workbench.store.eventlog import chain
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
tools: {}
hooks: {}
redact: []               # names of environment variables whose values never reach events or commits
"""


NEXT_ACTION = "Add the first task: wb task add TITLE"




def init(start: Path, ref: str | None = None) -> tuple[Workbench, bool, LastWrite]:
    """Create `.workbench/` in the worktree holding `start` (idempotent). Returns (workbench, created, what was
    committed)."""

    root = find_worktree(start)
    wb = Workbench(root)
    p = wb.paths
    complete = all(f.exists() for f in (p.config, p.state, p.board, p.events, p.calls, p.wb / ".gitignore"))
    p.wb.mkdir(exist_ok=True)
    p.artifacts.mkdir(exist_ok=True)
    created = False
    with wb.lock():
        if not (p.wb / ".gitignore").exists():
            atomic_write(p.wb / ".gitignore", (GITIGNORE_REF if ref else GITIGNORE).encode())
        if not p.config.exists():
            template = CONFIG_TEMPLATE
            if ref:
                template = template.replace("  ref: null", f"  ref: {ref}", 1)
            atomic_write(p.config, template.encode())
        if not (p.artifacts / ".gitkeep").exists():
            atomic_write(p.artifacts / ".gitkeep", b"")
        if not p.calls.exists():
            atomic_write(p.calls, b"")
        tail = wb.log.tail()
        if tail.seq == 0 and (p.state.exists() or p.board.exists()):
            # a state or board without a log: an older workbench. Never overwrite it with an empty one.
            raise Refused(".workbench/ holds state.md or board.json but no event log (a wb 0.0.x workbench?): "
                          "run `wb migrate`")
        if tail.seq == 0:
            event: dict[str, Any] = {
                "schema_version": 1, "id": ids.new_id(), "ts": ids.utc_now(), "type": "workbench.init",
                "actor": "wb", "session": None, "payload": {"next_action": NEXT_ACTION},
            }
            chain([event], tail)
            schemas.check("event", event, "events.jsonl")
            wb.log.append([event], tail)
            created = True
        if created or not p.state.exists() or not p.board.exists():
            docs = reducer.fold(logged for _line, logged in wb.log.iter_all())
            assert docs is not None
            schemas.check("state", docs.state, "state.md")
            schemas.check("board", docs.board, "board.json")
            p.cache.mkdir(exist_ok=True)
            # the cache is what human-edit detection compares with: without it, a hand edit made right
            # after init would be folded in silently and `wb replay --verify` would disagree
            if not p.board.exists() or created:
                board_raw = encode_board(docs.board)
                atomic_write(p.board, board_raw)
                write_board_cache(p, board_raw)
            if not p.state.exists() or created:
                state_raw = statefile.render(None, docs.state, docs.body)
                atomic_write(p.state, state_raw)
                write_state_cache(p, state_raw, docs.state, docs.body)
            created = True
        registered = register_drivers(root, wb_command())
        wb._config = None  # read again: the lock read it before config.yaml existed
        config = wb.config
        last = LastWrite()
        if config["git"].get("commit") != "off":
            summary = "wb: init" if created or not complete else "wb: commit pending workbench changes"
            outcome = wb.git.commit_workbench(
                f"{summary}\n\nWb-Event: {wb.log.tail().seq}\n", config["git"].get("ref"))
            last.commit = outcome.sha
            last.warnings = ([outcome.skipped] if outcome.skipped else []) + outcome.warnings
    if registered and not created:
        last.warnings.append("registered wb's git diff and merge drivers: " + ", ".join(registered))
    return wb, created or bool(registered and not complete), last

