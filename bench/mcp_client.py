"""bench/run.py's `mcp` group, client side: the official MCP SDK client starts `wb mcp` as an agent's client does.

    python bench/mcp_client.py ROUNDS WARMUP WB

Run in the repository to serve. One process imports the SDK once, then per round, in rotating order: the floor
(spawning `python -c pass` the way the client spawns a server, and waiting for it to end), and a session in
each mode — `legacy` (`initialize`, then `tools/list`) and `auto` (`server/discover`, then `tools/list`), timed
from the spawn to the first answer a client can use (`tools/list` after `initialize`; the answered discover) and
to the listed tools; then one `tools/call` (status), which needs the SDK loaded in the server. Prints one JSON
object of lists of seconds."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def floor() -> dict[str, float]:
    start = time.perf_counter()
    await anyio.run_process([sys.executable, "-c", "pass"], check=True)
    return {"floor": time.perf_counter() - start}


async def session(mode: str, wb: str) -> dict[str, float]:
    params = StdioServerParameters(command=wb, args=["mcp"], cwd=".")
    start = time.perf_counter()
    async with Client(params, mode=mode) as client:
        connected = time.perf_counter() - start
        listed = await client.list_tools()
        tools = time.perf_counter() - start
        called = await client.call_tool("status", {})
        call = time.perf_counter() - start
    if not listed.tools or called.is_error:
        raise SystemExit(f"wb mcp ({mode}): no tools listed, or status failed")
    usable = tools if mode == "legacy" else connected  # what a client can use: tools/list, or the discover
    return {f"{mode}": usable, f"{mode}_tools": tools, f"{mode}_call": call}


async def main(rounds: int, warmup: int, wb: str) -> dict[str, list[float]]:
    sides: list[Any] = [floor, lambda: session("legacy", wb), lambda: session("auto", wb)]
    samples: dict[str, list[float]] = {}
    for r in range(warmup + rounds):
        k = r % len(sides)
        for side in sides[k:] + sides[:k]:
            with anyio.fail_after(120):
                timed = await side()
            if r >= warmup:
                for key, seconds in timed.items():
                    samples.setdefault(key, []).append(seconds)
    return samples


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
