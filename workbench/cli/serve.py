"""`wb serve`: the workbench as a local, read-only web page (workbench/web/; docs/views.md). It prints the URL
and serves until interrupted; it never writes."""

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
) -> int:
    """Serve the board, the dependency graph, the harness sessions, the decision log, the handoff, diffs and
    the event log as a local web page that updates itself; read-only."""
    from workbench.api import Bench
    from workbench.errors import UsageError
    from workbench.web.server import WebServer, is_loopback

    if not is_loopback(host) and not allow_remote:
        raise UsageError(f"--host {host} would serve the workbench beyond this machine: add --allow-remote "
                         "if that is meant, or leave --host out (127.0.0.1)")
    if host in ("0.0.0.0", "::", ""):  # every interface: no one Host header names it, so none would be answered
        raise UsageError(f"--host {host or '(empty)'}: name the one address the page is reached at (its Host header "
                         "must match), e.g. --host 192.168.1.5 --allow-remote")
    bench = Bench.open(start_dir())
    try:
        server = WebServer(bench, host, port, verbose=verbose)
    except OSError as err:
        raise UsageError(f"cannot listen on {host}:{port} ({err.strerror or err}): try another --port") from None
    shown_host = "127.0.0.1" if host == "localhost" else host
    output.say(f"wb serve: http://{shown_host}:{server.port}/ (read-only; Ctrl-C stops)")
    import sys

    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()
        bench.close()
    return 0
