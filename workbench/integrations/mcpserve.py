"""Serving `wb mcp` over stdio, on the official `mcp` SDK.

Start-up: importing the SDK costs 0.6–2 s on a small machine, and a client waits for its first usable answer
(`tools/list` after `initialize`, or `server/discover`) before anything else. So this module imports only the
standard library; `serve` loads the SDK in a thread from the first instant, meanwhile answers `initialize`,
`tools/list`, `server/discover`, `ping` and the tool calls itself (mcpfast.py: the same answers the SDK gives),
and hands the connection to the SDK at the first message that needs it. `WB_MCP_PREANSWER=0` leaves every
answer to the SDK. The tools are integrations/mcptools.py's table and integrations/mcpcalls.py's bodies.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.integrations.mcpcalls import Tools
from workbench.integrations.mcptools import INSTRUCTIONS, SPECS, TOOLS, hints_of, listed_tools


def fast_server() -> Any:
    from workbench.integrations import mcpfast

    return mcpfast.Server("wb", __version__, INSTRUCTIONS, listed_tools())


# The SDK's import (most of a start-up) begins once the fast path has answered the agent's first tool call, or
# this long after the start, whichever comes first: imported from the first instant, it took the processor from
# that call (one interpreter lock), which a client sends right after `tools/list` (issue 33).
SDK_AFTER_S = 0.5


def serve(start: Path | None = None) -> None:
    """Serve MCP on this process's stdin/stdout until the client closes stdin. Raises ImportError when the SDK
    cannot be loaded."""
    from workbench.integrations import mcpfast

    loaded: dict[str, Any] = {}
    go = threading.Event()  # the SDK's import waits for it, or for SDK_AFTER_S: not to slow the first call down

    def load() -> None:
        go.wait(SDK_AFTER_S)
        try:
            loaded["sdk"] = _load_sdk()
        except BaseException as err:  # re-raised in the main thread
            loaded["error"] = err

    loader = threading.Thread(target=load, name="wb-mcp-sdk", daemon=True)
    loader.start()
    tools = Tools(start)
    wire_in, wire_out, restore = _claim_stdio()
    try:
        versions = mcpfast.sdk_versions() if os.environ.get("WB_MCP_PREANSWER", "1") != "0" else None
        if versions is None:  # the SDK answers everything
            first = wire_in.readline()
            handover = mcpfast.Handover([first] if first else [], {})
        else:
            fast = mcpfast.FastPath(fast_server(), versions, call=tools.dispatch)  # Answer: (text, data, error)
            while True:
                line = wire_in.readline()
                if not line:  # the client left before it needed the SDK
                    go.set()
                    loader.join()
                    if "error" in loaded:
                        raise loaded["error"]
                    return
                refused = screen(line.decode("utf-8", "replace"))
                if refused is not None:
                    wire_out.write(refused)
                    wire_out.flush()
                    continue
                answer, done = fast.take(line)
                if answer is not None:
                    wire_out.write(answer)
                    wire_out.flush()
                if fast.calls:  # the agent's first call is answered: now the SDK may have the processor
                    go.set()
                if done:
                    handover = fast.handover(line)
                    break
        go.set()
        loader.join()
        if "error" in loaded:  # the client still gets an answer to what it asked, then the process says why
            _unanswered(handover, wire_out, loaded["error"])
            raise loaded["error"]
        _run(loaded["sdk"], tools, handover, wire_in, wire_out)
    finally:
        restore()


def _unanswered(handover: Any, wire_out: Any, err: BaseException) -> None:
    """An error answer to each request the fast path left to an SDK that could not be loaded."""
    for line in handover.lines:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and "method" in msg and msg.get("id") is not None and msg["id"] not in \
                handover.expected:
            wire_out.write(_rpc_error(msg["id"], -32603, f"wb mcp cannot load the MCP SDK ({type(err).__name__}: "
                                                         f"{str(err)[:200]}): pip install 'mcp>=2,<3'"))
    wire_out.flush()


def _load_sdk() -> Any:
    """The SDK's parts the server uses (most of the start-up time), and the API the tools call."""
    from types import SimpleNamespace

    import anyio
    import anyio.to_thread
    import mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    import workbench.api.bench  # noqa: F401  the first call should not pay for it (workbench.api imports lazily)

    return SimpleNamespace(anyio=anyio, types=mcp_types, Server=Server, stdio_server=stdio_server, MCPError=MCPError)


def _claim_stdio() -> tuple[Any, Any, Callable[[], None]]:
    """The wire, on private descriptors; fd 0 becomes the null device and fd 1 stderr while serving, so no
    acceptance command or tool wb runs can read the client's messages or write into the protocol stream."""
    wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)  # not inherited by children (PEP 446)
    saved = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in saved:
            os.close(fd)

    return os.fdopen(wire_in_fd, "rb"), os.fdopen(wire_out_fd, "wb"), restore


def handshake_versions() -> tuple[str, ...] | None:
    """The protocol versions the SDK negotiates in `initialize`, read without importing the SDK."""
    from workbench.integrations import mcpfast

    versions = mcpfast.sdk_versions()
    return versions.handshake if versions else None


def initialize_result(requested: str, versions: tuple[str, ...]) -> dict[str, Any]:
    """What the SDK answers to `initialize` for this server (a test compares the two)."""
    from workbench.integrations import mcpfast

    return mcpfast.initialize_result(fast_server(), requested, versions)


def early_initialize(line: bytes) -> tuple[Any, dict[str, Any], bytes] | None:
    """(id, result, the answer's line) for a well-formed `initialize` request; None for anything else, which
    the SDK then reads and answers itself."""
    from workbench.integrations import mcpfast

    try:
        msg = json.loads(line)
    except ValueError:
        return None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or msg.get("method") != "initialize":
        return None
    versions = handshake_versions()
    if versions is None or not mcpfast.well_formed_initialize(msg):
        return None
    result = initialize_result(msg["params"]["protocolVersion"], versions)
    return msg["id"], result, mcpfast.line_of({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def _run(sdk: Any, tools: Tools, handover: Any, wire_in: Any, wire_out: Any) -> None:
    import io

    anyio, types = sdk.anyio, sdk.types
    listed = types.ListToolsResult(tools=[
        types.Tool(name=name, description=spec.description, input_schema=spec.input, output_schema=spec.output,
                   annotations=types.ToolAnnotations(**hints_of(spec)))
        for name, spec in SPECS.items()])

    async def list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def call_tool(ctx: Any, params: Any) -> Any:
        if params.name not in SPECS:
            raise sdk.MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {', '.join(TOOLS)}")
        answer = await anyio.to_thread.run_sync(tools.dispatch, params.name, params.arguments or {})
        content = [types.TextContent(type="text", text=answer.text)]
        if answer.is_error:
            return types.CallToolResult(content=content, is_error=True)
        return types.CallToolResult(content=content, structured_content=answer.data)

    server = sdk.Server("wb", version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                        on_call_tool=call_tool)
    rest = anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
    out = _Out(anyio.wrap_file(io.TextIOWrapper(wire_out, encoding="utf-8")), handover.expected)

    async def screened(line: str) -> Any:
        refused = screen(line)
        if refused is not None:
            await out.send(refused)
        return refused is None

    async def lines() -> Any:
        for kept in handover.lines:  # what the fast path read, then the rest of the wire
            line = kept.decode("utf-8", "replace")
            if await screened(line):
                yield line
        async for line in rest:
            if await screened(line):
                yield line

    class Lines:  # what the SDK's transport iterates
        def __aiter__(self) -> Any:
            return lines()

    async def main() -> None:
        async with sdk.stdio_server(stdin=Lines(), stdout=out) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


MAX_REQUEST_DEPTH = 64  # levels of objects and arrays in one request; no wb tool takes deeper arguments


def screen(line: str) -> bytes | None:
    """None for a request the SDK can read (and answers itself); else the JSON-RPC error wb answers in its
    place: the SDK answers nothing at all to a line that is not JSON, to arguments nested ~200 deep (its
    validator's recursion limit) or to a string holding a lone surrogate (`\\ud800`), and the client waits for
    ever. Every request gets an answer."""
    if not line.strip():
        return None
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError) as err:
        return _rpc_error(None, -32700, f"parse error: {str(err)[:200]}")
    rid = msg.get("id") if isinstance(msg, dict) else None
    rid = rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method", ""), str):
        if isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg):
            return None  # a client's answer to a server request: not a request, nothing to answer
        return _rpc_error(rid, -32600, "invalid request: a JSON-RPC 2.0 object with a method is expected")
    if "id" in msg and rid is None and msg["id"] is not None:
        return _rpc_error(None, -32600, "invalid request: its id must be a string or a number")
    if "params" in msg and not isinstance(msg["params"], dict):
        return _rpc_error(rid, -32602, "invalid params: an object is expected")
    stack: list[tuple[Any, int]] = [(msg, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_REQUEST_DEPTH:
            return _rpc_error(rid, -32600, f"invalid request: nested more than {MAX_REQUEST_DEPTH} levels deep")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in [*value.keys(), *value.values()])
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    try:
        json.dumps(msg, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return _rpc_error(rid, -32600, "invalid request: a \\u escape that encodes no character (a lone "
                                       "surrogate)")
    return None


def _rpc_error(rid: Any, code: int, message: str) -> bytes:
    answer = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class _Out:
    """The SDK's stdout, less its answers to the requests the fast path answered already and gave it again under
    a private id (`expected`: id → the answer wb gave); and wb's own answers to the requests the SDK cannot read
    (`screen`)."""

    def __init__(self, file: Any, expected: dict[str, Any]) -> None:
        self.file = file
        self.expected = dict(expected)

    async def send(self, line: bytes) -> None:
        """wb's own answer (a notification that the SDK cannot read is still answered: the client may be
        waiting on what it thought was a request)."""
        await self.file.write(line.decode())
        await self.file.flush()

    async def write(self, text: str) -> None:
        if self.expected:
            try:
                msg = json.loads(text)
            except ValueError:
                msg = None
            if isinstance(msg, dict) and "method" not in msg and msg.get("id") in self.expected:
                expected = self.expected.pop(msg["id"])
                if msg.get("result") != expected:  # a bug: say so where the client keeps server logs
                    sys.stderr.write(f"wb mcp: the fast path's answer differs from the SDK's: "
                                     f"{json.dumps(msg)[:300]}\n")
                return
        await self.file.write(text)

    async def flush(self) -> None:
        await self.file.flush()
