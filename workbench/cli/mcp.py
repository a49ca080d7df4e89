"""`wb mcp`: serve the workbench to an agent as a Model Context Protocol server on stdin/stdout."""

from __future__ import annotations

from workbench.cli.app import start_dir
from workbench.errors import WorkbenchError

INSTALL_HINT = ("`wb mcp` needs the MCP SDK, which is not installed: pip install 'mcp>=2,<3' "
                "(or, in wb's clone, pip install -e '.[mcp]')")


def mcp_command() -> int:
    """Serve the workbench over MCP on stdio (tools: status, task_list, task_add, task_update, note, set_state,
    log, run, resume). Started by the agent's client; see docs/integrations.md."""
    try:  # the SDK costs ~0.6 s to import: only this command pays it
        from workbench.integrations import mcp as mcp_server
    except ImportError as err:
        if (err.name or "").split(".")[0] in ("mcp", "mcp_types", "pydantic", "anyio"):
            raise WorkbenchError(INSTALL_HINT) from None
        raise
    mcp_server.serve(start_dir())
    return 0
