"""`wb mcp`: the workbench as a Model Context Protocol server over stdio, on the official `mcp` SDK.

Each tool calls the Python API (`workbench.api.Bench`, the command line's verbs), so a call is the same
transaction as on the command line: lock, validation, event log, atomic snapshots, one git commit. A refused
call comes back as an MCP tool error whose text is the one-line message the CLI prints (without its `wb: `).

Three modules, each one idea: the tools as data — names, schemas, annotations, the argument check
(integrations/mcptools.py); their bodies (integrations/mcpcalls.py); and serving them over stdio, the fast path
answering while the SDK loads (integrations/mcpserve.py, with mcpfast.py). This module keeps every name the
rest of wb and its tests import from `workbench.integrations.mcp`. Standard library only, as each of the three.
"""

from __future__ import annotations

from workbench.integrations.mcpcalls import (
    Answer,
    Text,
    Tools,
    calls,
    fit,
    inside,
)
from workbench.integrations.mcpserve import (
    MAX_REQUEST_DEPTH,
    SDK_AFTER_S,
    early_initialize,
    fast_server,
    handshake_versions,
    initialize_result,
    screen,
    serve,
)
from workbench.integrations.mcptools import (
    BOOL,
    EVENT_DEFAULT_FIELDS,
    EVENT_FIELDS,
    INSTRUCTIONS,
    INT,
    LIST_LIMIT,
    LOG_LIMIT,
    OBJ,
    OUTCOME,
    PAGE_BYTES,
    READ,
    SPECS,
    STATUSES,
    STR,
    STRS,
    TASK_DEFAULT_FIELDS,
    TASK_FIELDS,
    TASK_FILTERS,
    TEXT,
    TOOLS,
    WRITTEN,
    Spec,
    check_arguments,
    hints_of,
    listed_tools,
)

__all__ = [
    "Answer", "BOOL", "EVENT_DEFAULT_FIELDS", "EVENT_FIELDS", "INSTRUCTIONS", "INT", "LIST_LIMIT",
    "LOG_LIMIT", "MAX_REQUEST_DEPTH", "OBJ", "OUTCOME", "PAGE_BYTES", "READ", "SDK_AFTER_S", "SPECS",
    "STATUSES", "STR", "STRS", "Spec", "TASK_DEFAULT_FIELDS", "TASK_FIELDS", "TASK_FILTERS", "TEXT", "TOOLS",
    "Text", "Tools", "WRITTEN", "calls", "check_arguments", "early_initialize", "fast_server", "fit",
    "handshake_versions", "hints_of", "initialize_result", "inside", "listed_tools", "screen", "serve",
]
