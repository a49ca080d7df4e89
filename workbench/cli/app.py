"""The typer app: global options and the registration of one module per command."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from workbench import __version__
from workbench.errors import UsageError

app = typer.Typer(
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


@app.callback()
def _global(
    chdir: Path = typer.Option(None, "-C", help="Run as if wb was started in PATH (like git -C).",
                               metavar="PATH"),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    _OPTIONS["chdir"] = chdir
    _OPTIONS["debug"] = debug


_OPTIONS: dict[str, Any] = {"chdir": None, "debug": False}


def start_dir() -> Path | None:
    """The directory given with -C, if any (commands pass it to Bench.open)."""
    chdir = _OPTIONS["chdir"]
    return Path(chdir) if chdir else None


def _register() -> None:
    from workbench.cli import abort, demo, init, log, note, replay, resume, run, set_state, status, task, validate

    app.command("init")(init.init_command)
    app.command("status")(status.status_command)
    app.add_typer(task.app, name="task")
    app.command("note")(note.note_command)
    app.command("set")(set_state.set_command)
    app.command("log")(log.log_command)
    app.command("validate")(validate.validate_command)
    app.command("replay")(replay.replay_command)
    app.command("run")(run.run_command)
    app.command("resume")(resume.resume_command)
    app.command("abort")(abort.abort_command)
    app.command("demo")(demo.demo_command)
    from workbench.cli import doctor

    app.command("doctor")(doctor.doctor_command)
    from workbench.cli import migrate

    app.command("migrate")(migrate.migrate_command)
    from workbench.cli import diff, textconv

    app.command("diff")(diff.diff_command)
    app.command("textconv", hidden=True)(textconv.textconv_command)
    from workbench.cli import merge_driver

    app.command("merge-driver", hidden=True)(merge_driver.merge_driver_command)
    from workbench.cli import hook, mcp

    app.command("mcp")(mcp.mcp_command)
    app.add_typer(hook.app, name="hook")


_register()


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
    command = typer.main.get_command(app)
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
        typer.echo(f"wb: {exc.format_message()}{hint}", err=True)
        return int(exc.exit_code)
    return int(result) if isinstance(result, int) else 0
