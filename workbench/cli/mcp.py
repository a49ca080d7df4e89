"""`wb mcp`: serve the workbench to an agent as a Model Context Protocol server on stdin/stdout.

main.py runs `run` directly (no typer: a client waits on the server's start-up); the typer command is for help
and for `wb -C PATH --debug mcp` spellings the fast path leaves to typer."""

from __future__ import annotations

from pathlib import Path

from workbench.errors import WorkbenchError

INSTALL_HINT = ("`wb mcp` needs the MCP SDK, which is not installed: pip install 'mcp>=2,<3' "
                "(or, in wb's clone, pip install -e '.[mcp]')")
SDK_MODULES = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio")


def mcp_command() -> int:
    """Serve the workbench over MCP on stdio (tools: status, task_list, task_add, task_update, note, set_state,
    log, run, resume, abort). Started by the agent's client; see docs/integrations.md."""
    from workbench.cli.app import start_dir

    return run(start_dir())


def run(start: Path | None) -> int:
    import importlib.util

    if any(importlib.util.find_spec(name) is None for name in ("mcp", "mcp_types", "anyio")):
        raise WorkbenchError(INSTALL_HINT)  # before the client is told the server is up
    from workbench.integrations import mcp as mcp_server

    try:
        mcp_server.serve(start)
    except ImportError as err:  # the SDK is there but broken, or a part of it is missing
        if (err.name or "").split(".")[0] in SDK_MODULES:
            raise WorkbenchError(INSTALL_HINT) from None
        raise
    return 0
