"""The typer app: global options and the registration of one module per command."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from workbench import __version__
from workbench.errors import UsageError

_APP = typer.Typer(
    name="wb",
    help="Keep a coding agent's durable state inside the git repository it works on.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wb {__version__}")
        raise typer.Exit(0)


@_APP.callback()
def _global(
    chdir: Path = typer.Option(None, "-C", help="Run as if wb was started in PATH (like git -C).",
                               metavar="PATH"),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    _OPTIONS["chdir"] = chdir
    _OPTIONS["debug"] = debug
    from workbench.store import backend

    backend.refuse_unsupported(chdir or Path.cwd())  # a command the workbench's backend does not serve: 1 line


_OPTIONS: dict[str, Any] = {"chdir": None, "debug": False}


def start_dir() -> Path | None:
    """The directory given with -C, if any (commands pass it to Bench.open)."""
    chdir = _OPTIONS["chdir"]
    return Path(chdir) if chdir else None


# Every command in the order `wb --help` lists them: (name, module in workbench/cli/, its command or typer
# sub-app, hidden). A module is imported only when its command is registered, and a run registers only what
# it needs (see `register`): `wb task add` imports cli/task.py alone, `wb --help` no hidden command.
COMMANDS: tuple[tuple[str, str, str, bool], ...] = (
    ("init", "init", "init_command", False),
    ("status", "status", "status_command", False),
    ("task", "task", "app", False),
    ("note", "note", "note_command", False),
    ("set", "set_state", "set_command", False),
    ("log", "log", "log_command", False),
    ("validate", "validate", "validate_command", False),
    ("replay", "replay", "replay_command", False),
    ("run", "run", "run_command", False),
    ("resume", "resume", "resume_command", False),
    ("abort", "abort", "abort_command", False),
    ("demo", "demo", "demo_command", False),
    ("doctor", "doctor", "doctor_command", False),
    ("migrate", "migrate", "migrate_command", False),
    ("diff", "diff", "diff_command", False),
    ("textconv", "textconv", "textconv_command", True),
    ("merge-driver", "merge_driver", "merge_driver_command", True),
    ("mcp", "mcp", "mcp_command", False),
    ("hook", "hook", "app", False),
    ("handoff", "handoff", "handoff_command", False),  # issue 16
    ("sync", "sync", "sync_command", False),  # issue 15
    ("trust", "trust", "trust_command", False),  # issue 19
    ("untrust", "trust", "untrust_command", False),  # issue 19
    ("board", "board", "board_command", False),  # issue 21
    ("serve", "serve", "serve_command", False),  # issue 21
    ("prime", "prime", "prime_command", False),  # issue 22
    ("verify", "verify", "verify_command", False),  # issue 22
    ("export", "transfer", "export_command", False),  # issue 24
    ("import", "transfer", "import_command", False),  # issue 24
)
# Commands a module adds to another's group (issue 15: `wb task claim` lives in cli/claims.py): imported when
# the group is registered.
GROUP_EXTENSIONS: dict[str, tuple[str, ...]] = {"task": ("claims", "taskimport")}
_registered: set[str] = set()


def register(names: set[str] | None = None) -> typer.Typer:
    """Register these commands (None: all) with the app, beside those registered before, in the order of
    COMMANDS; returns the app."""
    import importlib

    global _registered
    wanted = _registered | ({c[0] for c in COMMANDS} if names is None else names)
    if wanted != _registered:
        _APP.registered_commands.clear()
        _APP.registered_groups.clear()
        for name, module, attr, hidden in COMMANDS:
            if name not in wanted:
                continue
            target = getattr(importlib.import_module(f"workbench.cli.{module}"), attr)
            for extension in GROUP_EXTENSIONS.get(name, ()):
                importlib.import_module(f"workbench.cli.{extension}")
            if isinstance(target, typer.Typer):
                _APP.add_typer(target, name=name)
            else:
                _APP.command(name, hidden=hidden)(target)
        _registered = wanted
    return _APP


def needed(args: list[str]) -> set[str] | None:
    """The commands a run of `wb ARGS` needs registered: the one it names; the listed ones for the help
    (`wb`, `wb --help`); all (None) for an unknown command (typer then suggests any) or shell completion."""
    if any(key.startswith("_WB_COMPLETE") for key in os.environ):
        return None
    shown = {c[0] for c in COMMANDS if not c[3]}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-C":
            i += 2
            continue
        if arg == "--debug" or (arg.startswith("-C") and len(arg) > 2):
            i += 1
            continue
        if arg in ("--show-completion", "--install-completion", "--"):
            return None
        if arg.startswith("-"):
            return shown  # --help, --version, an unknown option: typer answers before any command runs
        return {arg} if arg in {c[0] for c in COMMANDS} else None
    return shown


def __getattr__(name: str) -> typer.Typer:
    if name == "app":  # the whole app, for tools/gen_cli_docs.py and tests that invoke it
        return register(None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def _completion_shell(args: list[str]) -> list[str]:
    """`--show-completion [SHELL]` / `--install-completion [SHELL]`. Typer guesses the shell from the parent
    processes only, and fails ("Shell  not supported.") where none is a shell: CI, an editor, `env`. Here a
    named shell is taken as given, else the guess, else $SHELL; nothing usable is a usage error."""
    flag = next((a for a in args if a in ("--show-completion", "--install-completion")), None)
    if flag is None:
        return args
    at = args.index(flag)
    if at + 1 < len(args) and args[at + 1] in SHELLS:
        shell = None
    else:
        shell = _detect_shell()
        if shell is None:
            raise UsageError(f"cannot tell which shell you use: name it, e.g. `wb {flag} bash` "
                             f"(one of {', '.join(SHELLS)})")
    os.environ["_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION"] = "1"  # typer then takes the shell as a value
    return args if shell is None else [*args[:at + 1], shell, *args[at + 1:]]


def _detect_shell() -> str | None:
    try:
        import shellingham

        name = str(shellingham.detect_shell()[0]).lower()
    except Exception:  # noqa: BLE001 - not installed, or no shell among the parents
        name = ""
    if name not in SHELLS:
        name = Path(os.environ.get("SHELL", "")).name.lower()
    return name if name in SHELLS else None


def run_app(args: list[str]) -> int:
    import click

    args = _completion_shell(args)
    wanted = needed(args)
    from workbench.store import backend  # the backend refuses the commands it cannot serve yet

    backend.command = next(iter(wanted)) if wanted is not None and len(wanted) == 1 else None
    command = typer.main.get_command(register(wanted))
    try:
        result = command.main(args=args, prog_name="wb", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        typer.echo("wb: aborted", err=True)
        return 1
    except click.exceptions.NoArgsIsHelpError:
        return 2  # typer has printed the help already
    except click.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        typer.echo(f"wb: {_once(exc.format_message())}{hint}", err=True)
        return int(exc.exit_code)
    return int(result) if isinstance(result, int) else 0


def _once(message: str) -> str:
    """click and typer both append "Did you mean 'note'?" to an unknown command: say it once."""
    import re

    return re.sub(r"( Did you mean [^?]*\?)(?:\1)+", r"\1", message)
