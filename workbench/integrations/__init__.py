"""Where agents reach wb: the MCP server (`mcp`), the coding agents' hooks (`agenthooks`) and the wb section
of AGENTS.md (`agents_md`). Built on `workbench.api`, the same verbs the CLI uses."""
