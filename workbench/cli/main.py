"""Entry point of `wb`: global options, the fast paths, and the one error handler.

`wb --version`, `wb status`, `wb hook claude-code|codex` (integrations/hookfast.py), `wb mcp` (its client waits
on its start-up), the common writes (`wb task add|start|done|block`, `wb note`, `wb set`) and `wb task list`
(see cli/writes.py) are answered without importing typer and click (half of what such a run would import
otherwise), so they stay within the start-up bars of CONTRACT.md §8; everything else, and anything the fast paths
are unsure of (help, a malformed option), goes through the typer app.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# no pathlib (nor typing) at the top: `wb hook` runs per agent tool call and imports neither; each fast path
# imports what it needs

def _fast_path(argv: list[str]) -> int | None:
    rest: list[str] = []
    chdir: str | None = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-C" and i + 1 < len(argv):
            chdir = argv[i + 1]
            i += 2
            continue
        if arg == "--debug":
            i += 1
            continue
        rest.append(arg)
        i += 1
    if rest == ["--version"]:
        from workbench import __version__

        sys.stdout.write(f"wb {__version__}\n")
        return 0
    if len(rest) == 3 and rest[0] == "textconv":  # git runs this once per file version: keep it light
        from workbench.cli import textconv

        return textconv.run(rest[1], rest[2])
    if len(rest) == 2 and rest[0] == "hook" and rest[1] in ("claude-code", "codex"):  # per tool call: lightest
        from workbench.integrations import hookfast

        return hookfast.main(rest[1], chdir)
    if rest == ["mcp"]:  # a client waits for the server's first answer: no typer
        from pathlib import Path

        from workbench.cli import mcp

        return mcp.run(Path(chdir) if chdir else None)
    if rest and rest[0] == "status" and set(rest[1:]) <= {"--json"}:
        from pathlib import Path

        from workbench.cli import status_view

        return status_view.run(Path(chdir) if chdir else None, as_json="--json" in rest)
    if rest[:2] != ["task", "list"]:  # a list takes no lock: nothing to show, nothing to import for it
        _show_lock_waits()
    return _fast_write(argv)


def _fast_write(argv: list[str]) -> int | None:
    """`wb [-C PATH] [--debug] task add …` and the other commands of cli/writes.py's FAST, parsed as typer
    would; None (typer's turn) for anything else. Global options count only before the command, as in typer."""
    chdir: str | None = None
    i = 0
    while i < len(argv):
        if argv[i] == "-C" and i + 1 < len(argv) and argv[i + 1] and not argv[i + 1].startswith("-"):
            chdir = argv[i + 1]
            i += 2
        elif argv[i] == "--debug":
            i += 1
        else:
            break
    rest = argv[i:]
    if not rest or rest[0] not in ("task", "note", "set") or any(k.startswith("_WB_COMPLETE") for k in os.environ):
        return None
    import gc

    # One bounded command: its garbage is freed by reference counting, and what few cycles it makes are left for
    # the next pass once it has run. The cycle collector's passes over the objects it builds (its imports, the
    # 2,000 tasks of a parsed board) were a tenth of a `wb task list` or `add` (issue 33); typer's commands (`wb
    # run`, `wb serve`, `wb mcp`…) keep it, and so does whatever runs after us in the same process.
    collecting = gc.isenabled()
    gc.disable()
    try:
        from pathlib import Path

        from workbench.cli import writes

        for path in writes.FAST:
            if tuple(rest[:len(path)]) == path:
                code = writes.run(path, rest[len(path):], Path(chdir) if chdir else None)
                _BOUNDED[0] = code is not None
                return code
        return None
    finally:
        if collecting:
            gc.enable()


# a fast write or list answered this process's command (see `_fast_write` and `main`'s end)
_BOUNDED = [False]


def _config_secrets(args: list[str]) -> list[str]:
    """The secrets config.yaml names, for an error raised before any load read them (the error path only:
    best effort, never a second error)."""
    try:
        from pathlib import Path

        from workbench.git.repo import find_worktree
        from workbench.model.redaction import secret_values
        from workbench.store.workbench import Workbench

        at = args.index("-C") + 1 if "-C" in args else -1
        start = Path(args[at]) if 0 < at < len(args) else Path.cwd()
        return secret_values(Workbench(find_worktree(start)).config)  # refuses a workbench with links first
    except Exception:
        return []


def os_problem(err: OSError) -> str:
    """`cannot write .workbench/state.md: No space left on device` — one line naming the file, not the temp file."""
    import errno
    import re

    writing = err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG)
    where = "the workbench"
    if err.filename:
        name = re.sub(r"\.tmp-[^/]*?-(?=[^/]+$)", "", str(err.filename))  # atomic_write's temp file: its target
        try:
            relative = os.path.relpath(name)
        except ValueError:
            relative = name
        where = name if relative.startswith("..") else relative
    what = err.strerror or str(err)
    return f"cannot {'write' if writing else 'access'} {where}: {what} (afterwards `wb doctor` checks the workbench)"


def _who(args: list[str]) -> Any:
    """Who this command is by default (model/provenance.py): an agent's hook, the MCP server's client (an agent,
    never a person), or whoever runs the command line (ops/person.terminal_who); None for `wb task list`."""
    from workbench.model.provenance import Who

    words = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-C":
            skip = True
        elif not arg.startswith("-"):
            words.append(arg)
    if words[:1] == ["hook"]:
        return Who("agent", "hook")
    if words[:1] == ["mcp"]:
        return Who("agent", "mcp")
    if words[:2] == ["task", "list"]:  # a read: it records nothing, so it names no one (issue 33: ops/person's
        return None  # import and the checks of who runs it were half a millisecond of a 2,000-task list)
    from workbench.ops.person import set_command_line, terminal_who

    set_command_line(args)
    return terminal_who()


def _show_lock_waits() -> None:
    """A wait for the workbench lock is shown on stderr (cli/output.LockWait): registered for the writes and
    the typer app, not for the fast paths before them (an agent's hook and the MCP server's client read stderr
    as wb's answer; `--version` and `status` take no lock)."""
    from workbench.cli.output import LockWait
    from workbench.store.lock import report_waits

    report_waits(LockWait())


def _tolerate_the_locale(args: list[str]) -> list[str]:
    """A locale that is not UTF-8 (`LC_ALL=C`, `en_US.ISO-8859-1`) never crashes a command: what stdout and
    stderr cannot encode is written as a backslash escape, and an argument whose bytes are UTF-8 is read as UTF-8
    (Python decoded it as the locale says, leaving surrogates the store refuses)."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    if sys.getfilesystemencoding().lower().replace("-", "") == "utf8":
        return args
    fixed = []
    for arg in args:
        try:
            fixed.append(os.fsencode(arg).decode("utf-8"))
        except (UnicodeError, ValueError):
            fixed.append(arg)
    return fixed


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None:
        args = _tolerate_the_locale(args)
    debug = "--debug" in args or bool(os.environ.get("WB_DEBUG"))
    from workbench.errors import WorkbenchError
    from workbench.model import provenance

    who = _who(args)
    before = provenance.current() if who is None else provenance.establish(who)
    try:
        code = _fast_path(args)
        if code is None:
            from workbench.cli.app import run_app

            code = run_app(args)
    except WorkbenchError as err:
        if debug:
            import traceback

            traceback.print_exc()
        from workbench.model.display import escape
        from workbench.model.redaction import redact_known  # a message may quote a value that holds a secret

        line = " ".join(redact_known(str(err), _config_secrets(args)).splitlines())
        sys.stderr.write("wb: " + escape(line) + "\n")  # one line, whatever it quotes, every character shown
        code = err.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("wb: interrupted\n")
        code = 130
    except BrokenPipeError:
        code = 0
    except OSError as err:  # disk full, a read-only or unreadable workbench: the environment, not a bug
        if debug:
            import traceback

            traceback.print_exc()
        from workbench.model.display import escape

        sys.stderr.write(f"wb: {escape(os_problem(err))}\n")
        code = 1
    except Exception as err:  # a bug: say so in one line, the traceback only with --debug
        if debug:
            raise
        from workbench.model.display import escape

        sys.stderr.write(f"wb: internal error: {type(err).__name__}: {escape(err)} (rerun with --debug for the "
                         "traceback)\n")
        code = 1
    finally:
        if "workbench.git.packs" in sys.modules:  # a pack run the command's commit started: ends with the command
            sys.modules["workbench.git.packs"].wait_all()
        if "workbench.git.notes" in sys.modules and sys.modules["workbench.git.notes"].wanted():
            from workbench.review.textconv_notes import fill_wanted  # git's textconv cache: drivers registered

            fill_wanted()
        provenance.establish(before)
        if "workbench.store.trust" in sys.modules:  # not imported by `wb status`'s fast path: leave it so
            sys.modules["workbench.store.trust"].forget_skipped()
    if argv is None:
        sys.stdout.flush()
        if _BOUNDED[0]:
            # The interpreter's collections as it exits pass over every object the command left: 3 ms of a
            # 2,000-task list's CPU (issue 33). A bounded command leaves nothing whose finalizer matters: its
            # files are written, synced and closed, its git helpers end at exit by atexit (git/refs.py), and
            # stdout is flushed above; what it left is reclaimed by the process's exit, uncollected.
            import gc

            gc.freeze()
        raise SystemExit(code)
    return code


if __name__ == "__main__":
    main()
