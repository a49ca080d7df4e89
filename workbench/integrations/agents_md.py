"""The wb section of AGENTS.md (`wb init --agents-md`): the one file outside `.workbench/` wb writes, and only
when asked, in the file's own line endings. Claude Code reads CLAUDE.md, not AGENTS.md: `claude_md` says
whether a CLAUDE.md imports AGENTS.md, and `import_agents_md` adds the one-line `@AGENTS.md` import (only when
asked: `wb init --agents-md --claude-md`)."""

from __future__ import annotations

import re
from pathlib import Path

from workbench.errors import Refused

AGENTS_BEGIN = "<!-- wb:begin -->"
AGENTS_END = "<!-- wb:end -->"
AGENTS_SECTION = f"""{AGENTS_BEGIN}
## Working state: wb

This repository keeps the coding agent's working state in `.workbench/` (task board, decision log, event
log) through `wb`, which validates, logs and commits every change.

- Start each session with `wb status --json`: the active task, or else the tasks ready to start, the next
  action, blockers, and any harness session waiting for you (with the command that resumes it).
- Pick the next task with `wb task next`, and `wb task next --start` to start it: the first todo task whose
  dependencies are all done, in board order.
- Record your work as you go: `wb task add "TITLE" --accept "CMD"`, `wb task start T-001`,
  `wb task done T-001` (runs the acceptance commands), `wb task block T-001 --reason "..."`,
  `wb note "what you decided and why"`, and `wb set next_action="..."` before you stop.
- If your client has the `wb` MCP server (`wb mcp`), its tools are the same verbs (`status`, `task_list`,
  `task_add`, `task_update`, `note`, `set_state`, `log`, `run`, `resume`, `abort`): use them.
- Do not edit files under `.workbench/` by hand, even to fix them: run the wb command that makes the change.
- If `wb` is not found: the session's start context names wb's absolute path when it has one (run that);
  `python -m workbench.cli.main` is the same command where wb's package is installed. Otherwise ask the user
  to install it (`pipx install .` in wb's clone puts `wb` on PATH for good); until then read
  `.workbench/state.md` and `.workbench/board.json` for where things stand, write nothing there, and end
  with what you would have recorded.
{AGENTS_END}
"""
CLAUDE_FILES = ("CLAUDE.md", ".claude/CLAUDE.md")  # where Claude Code reads a project's memory
IMPORT_LINE = "@AGENTS.md"
IMPORTS_AGENTS = re.compile(r"^[ \t]*@(\./)?AGENTS\.md[ \t]*\r?$", re.M)


def newline_of(text: str) -> str:
    """The line ending a file mostly uses: CRLF when most of its lines end so, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def _read(root: Path, rel: str) -> str | None:
    """The text of AGENTS.md or a CLAUDE.md (`rel` from the root), None when absent. A symbolic link (a clone
    can commit `AGENTS.md -> ~/.ssh/id_ed25519`), at the file or a folder on its way, or anything but a plain
    file is refused before a byte is read: wb would copy what it points at into a file it asks you to commit."""
    import stat

    path = root / rel
    node = path
    while node != root:
        if node.is_symlink():
            raise Refused(f"{node.relative_to(root).as_posix()} is a symbolic link: wb reads and writes {rel} "
                          "only as a plain file in the repository (replace the link with the file itself)")
        node = node.parent
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise Refused(f"{rel} is not a plain file; wb leaves it alone")
        return path.read_bytes().decode("utf-8")  # bytes: read_text would turn CRLF into LF
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise Refused(f"{path.name}: not UTF-8 text; wb leaves it alone") from None


def write_agents_md(root: Path) -> str:
    """Add the wb section to AGENTS.md at the repository root, or bring it up to date between its markers.
    Returns "created", "added", "updated" or "unchanged". Never touches text outside the markers, and writes
    the section in the file's own line endings."""
    from workbench.store.atomic import atomic_write

    path = root / "AGENTS.md"
    text = _read(root, "AGENTS.md")
    if text is None:
        atomic_write(path, AGENTS_SECTION.encode())
        return "created"
    nl = newline_of(text)
    section = AGENTS_SECTION.replace("\n", nl)
    begin, end = text.find(AGENTS_BEGIN), text.find(AGENTS_END)
    if begin == -1 and end == -1:
        sep = "" if not text or text.endswith(nl + nl) else nl if text.endswith(("\n", "\r")) else nl + nl
        atomic_write(path, (text + sep + section).encode())
        return "added"
    if begin == -1 or end == -1 or end < begin or text.count(AGENTS_BEGIN) > 1:
        raise Refused(f"AGENTS.md: the wb markers are damaged (one {AGENTS_BEGIN} then one {AGENTS_END} "
                      "expected); fix or remove them, then rerun `wb init --agents-md`")
    stop = end + len(AGENTS_END)
    for ending in ("\r\n", "\n"):
        if text.startswith(ending, stop):
            stop += len(ending)
            break
    new = text[:begin] + section + text[stop:]
    if new == text:
        return "unchanged"
    atomic_write(path, new.encode())
    return "updated"


def claude_md(root: Path) -> tuple[str, str | None]:
    """Whether Claude Code will read AGENTS.md: ("imports", file) when a CLAUDE.md imports it, ("no_import",
    file) when one exists without the import, ("absent", None) when there is none."""
    found = None
    for name in CLAUDE_FILES:
        text = _read(root, name)
        if text is None:
            continue
        if IMPORTS_AGENTS.search(text):
            return "imports", name
        found = found or name
    return ("no_import", found) if found else ("absent", None)


def import_agents_md(root: Path) -> str:
    """Make CLAUDE.md import AGENTS.md: add the line `@AGENTS.md` at its end (in its own line endings), or
    create CLAUDE.md with that line. Returns "added", "created" or "unchanged"."""
    from workbench.store.atomic import atomic_write

    state, name = claude_md(root)
    if state == "imports":
        return "unchanged"
    path = root / (name or "CLAUDE.md")
    text = _read(root, name or "CLAUDE.md")
    if text is None:
        atomic_write(path, (IMPORT_LINE + "\n").encode())
        return "created"
    nl = newline_of(text)
    sep = "" if not text.strip() or text.endswith(nl + nl) else nl if text.endswith(("\n", "\r")) else nl + nl
    atomic_write(path, (text + sep + IMPORT_LINE + nl).encode())
    return "added"
