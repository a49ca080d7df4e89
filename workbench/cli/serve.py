"""`wb serve`: the workbench as a local web page (workbench/web/; docs/views.md). It prints the URL and serves
until interrupted. Read-only unless a person starts it with `--act` (web/acting.py): then, once they confirm on
the terminal, the page may approve, deny, trust and edit tasks, through the one-time link shown only there."""

from __future__ import annotations

import typer

from workbench.cli import output
from workbench.cli.app import start_dir


def serve_command(
    port: int = typer.Option(8765, "--port", help="The port to listen on (0: any free port).", min=0,
                             max=65535),
    host: str = typer.Option("127.0.0.1", "--host", help="The interface to listen on; anything but 127.0.0.1 "
                                                         "or localhost needs --allow-remote."),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Listen on a --host other than loopback "
                                                                    "(anyone who reaches it reads the "
                                                                    "workbench)."),
    verbose: bool = typer.Option(False, "--verbose", help="Log each request on stderr."),
    act: bool = typer.Option(False, "--act", help="Let the person who starts it act from the page (approve or "
                                                  "deny a yield, trust commands, add, edit and comment on "
                                                  "tasks): they confirm at this terminal, and a one-time link "
                                                  "is shown only here. Refused in an agent's environment."),
) -> int:
    """Serve the board, the dependency graph, the harness sessions, the decision log, the handoff, diffs and
    the event log as a local web page that updates itself; read-only unless a person starts it with --act."""
    from workbench.api import Bench
    from workbench.errors import UsageError
    from workbench.web.server import WebServer, is_loopback

    if not is_loopback(host) and not allow_remote:
        raise UsageError(f"--host {host} would serve the workbench beyond this machine: add --allow-remote "
                         "if that is meant, or leave --host out (127.0.0.1)")
    if host in ("0.0.0.0", "::", ""):  # every interface: no one Host header names it, so none would be answered
        raise UsageError(f"--host {host or '(empty)'}: name the one address the page is reached at (its Host header "
                         "must match), e.g. --host 192.168.1.5 --allow-remote")
    if act and not is_loopback(host):  # the session cookie and the token would cross a network in plain HTTP
        raise UsageError(f"--act serves the page's writes on this machine only: leave --host {host} out "
                         "(127.0.0.1), or serve it read-only there")
    bench = Bench.open(start_dir())
    if act:  # the one gate of every person-only action: a code on /dev/tty, never an agent's process
        from workbench.ops.person import require_person

        try:
            require_person("acting from the page of wb serve", "wb serve --act")
        except BaseException:
            bench.close()
            raise
    try:
        server = WebServer(bench, host, port, verbose=verbose, act=act)
    except OSError as err:
        bench.close()
        raise UsageError(f"cannot listen on {host}:{port} ({err.strerror or err}): try another --port") from None
    shown_host = "127.0.0.1" if host == "localhost" else host
    url = f"http://{shown_host}:{server.port}/"
    output.say(f"wb serve: {url} ({'acting: open the one-time link shown on the terminal' if act else 'read-only'};"
               " Ctrl-C stops)")
    import sys

    sys.stdout.flush()
    try:
        if server.acting is not None:
            from workbench.ops.person import tell_person

            tell_person(f"wb serve: act from the page (a one-time link; it works once): {url}act?token="
                        f"{server.acting.token}\n")
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()
        bench.close()
    return 0

