"""`wb mcp`'s first answers, before the MCP SDK is loaded: the standard library only.

A client's first usable answer is `tools/list` after `initialize` (the 2025 handshake) or `server/discover`
(the 2026-07-28 protocol, which the SDK's default `auto` mode and Claude Code send first). Importing the SDK
takes 0.6–2 s on a small machine; a client that waits that long gives up on `server/discover`, falls back to
`initialize` on a connection the SDK has meanwhile locked to the newer protocol, gets -32022, and probes again.
So `FastPath` answers `initialize`, `notifications/initialized`, `ping`, `tools/list` and `server/discover`
itself, exactly as the SDK would (tests/integrations/test_mcp_fast.py compares the two for every protocol
version), while the SDK loads in a thread; and `tools/call` of a known tool once the era is settled (issue 33:
the agent's first call answered before the SDK is loaded), through the same tool bodies the SDK's server calls,
shaped as its `CallToolResult`. The first message it does not answer (anything unusual) hands the connection
to the SDK.

The hand-over loses and reorders nothing: the SDK reads every message the fast path kept, in order, then the
rest of the wire. The requests that set the connection's state (the first, which decides the protocol era, and
`initialize`) are given to the SDK again under a private id whose answer is dropped (`Handover.expected`); the
stateless ones already answered (`tools/list`, `ping`, later discovers) are not repeated. Anything the fast path
is unsure of (a malformed envelope, an unknown protocol version, a cursor) goes to the SDK, which answers it;
a progress token (Codex sends one with every `tools/list`) is not, as none of these answers reports progress.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

    # a tool call: (name, arguments) -> (the answer's text, its structured data or None, whether it is an error)
    Call = Callable[[str, dict[str, Any]], tuple[str, "dict[str, Any] | None", bool]]

ENVELOPE = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY = ENVELOPE + "protocolVersion"
CLIENT_INFO_KEY = ENVELOPE + "clientInfo"
CLIENT_CAPABILITIES_KEY = ENVELOPE + "clientCapabilities"
SERVER_INFO_KEY = ENVELOPE + "serverInfo"
# The protocol versions whose answers below are the SDK's (the test compares each); another version the SDK
# may learn later is answered by the SDK itself.
KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
REPLAY_ID = "wb-mcp-replay-"
UNSUPPORTED_PROTOCOL_VERSION = -32022


class Versions(NamedTuple):
    handshake: tuple[str, ...]  # negotiated by `initialize`, oldest first
    modern: tuple[str, ...]  # the per-request envelope's (`server/discover`)


def sdk_versions() -> Versions | None:
    """The SDK's protocol versions, read from its own small `mcp_types/version.py` without importing the SDK
    (None when the SDK is laid out otherwise: then the SDK answers everything itself)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("mcp_types")
        if spec is None or not spec.submodule_search_locations:
            return None
        where = Path(next(iter(spec.submodule_search_locations))) / "version.py"
        loader_spec = importlib.util.spec_from_file_location("_wb_mcp_types_version", where)
        if loader_spec is None or loader_spec.loader is None:
            return None
        module = importlib.util.module_from_spec(loader_spec)
        loader_spec.loader.exec_module(module)
        handshake = tuple(module.HANDSHAKE_PROTOCOL_VERSIONS)
        modern = tuple(getattr(module, "MODERN_PROTOCOL_VERSIONS", ()))
    except Exception:
        return None
    if not handshake or not all(isinstance(v, str) for v in (*handshake, *modern)):
        return None
    return Versions(handshake, modern)


class Server(NamedTuple):
    """What the answers say of this server: the same values the SDK's `Server` is built with."""

    name: str
    version: str
    instructions: str
    tools: list[dict[str, Any]]  # the tools/list entries, as on the wire


def initialize_result(server: Server, requested: str, versions: tuple[str, ...]) -> dict[str, Any]:
    """What the SDK answers to `initialize`."""
    return {"capabilities": {"tools": {"listChanged": False}}, "instructions": server.instructions,
            "protocolVersion": requested if requested in versions else versions[-1],
            "serverInfo": {"name": server.name, "version": server.version}}


def well_formed_initialize(msg: dict[str, Any]) -> bool:
    """An `initialize` the SDK accepts: an id, a protocol version, capabilities and the client's name."""
    rid, params = msg.get("id"), msg.get("params")
    if isinstance(rid, bool) or not isinstance(rid, int | str) or not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (isinstance(params.get("protocolVersion"), str) and isinstance(params.get("capabilities"), dict)
            and isinstance(info, dict) and isinstance(info.get("name"), str)
            and isinstance(info.get("version"), str))


def _modern(server: Server, result: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 result as the SDK shapes it: its cache hints, `resultType` and the serverInfo stamp."""
    return {"cacheScope": "private", **result, "resultType": "complete", "ttlMs": 0,
            "_meta": {SERVER_INFO_KEY: {"name": server.name, "version": server.version}}}


def discover_result(server: Server, modern: tuple[str, ...]) -> dict[str, Any]:
    return _modern(server, {"capabilities": {"tools": {"listChanged": False}}, "instructions": server.instructions,
                            "supportedVersions": list(modern)})


def tools_result(server: Server, version: str, modern: tuple[str, ...]) -> dict[str, Any]:
    listed = {"tools": server.tools}
    return _modern(server, listed) if version in modern else listed


def line_of(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Handover(NamedTuple):
    lines: list[bytes]  # for the SDK, in order, before the rest of the wire
    expected: dict[str, Any]  # private id → the result wb already gave, which the SDK's answer is dropped for


class FastPath:
    """The connection until it needs the SDK. `take(line)` returns the answer to write (or None) and whether
    the SDK must take over from this line on (`handover()` then gives what the SDK reads first)."""

    def __init__(self, server: Server, versions: Versions, call: Call | None = None) -> None:
        self.server = server
        self.versions = versions
        self.call = call  # answers `tools/call` before the SDK is loaded (issue 33); None leaves it to the SDK
        self.tool_names = {t.get("name") for t in server.tools}
        self.calls = 0  # tool calls answered
        self.era: str | None = None  # "legacy" or "modern", decided by the first request, as the SDK does
        self.negotiated: str | None = None  # the legacy era's version, once `initialize` is answered
        self.kept: list[bytes] = []
        self.expected: dict[str, Any] = {}

    def take(self, line: bytes) -> tuple[bytes | None, bool]:
        if not line.strip():
            self.kept.append(line)  # not a message: the SDK reads it as it would have
            return None, False
        try:
            msg = json.loads(line)
        except ValueError:
            return None, True
        if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
            self.kept.append(line)  # a notification or a client's answer: the SDK reads it in its place
            return None, False
        rid = msg["id"]
        if (msg["method"] == "initialize" and self.era == "modern" and isinstance(msg.get("params"), dict)
                and isinstance(rid, int | str) and not isinstance(rid, bool)):
            return line_of({"jsonrpc": "2.0", "id": msg["id"], "error": self._no_handshake(msg["params"])}), False
        result = self._answer(msg)
        if result is None:
            return None, True
        return line_of({"jsonrpc": "2.0", "id": msg["id"], "result": result}), False

    def _no_handshake(self, params: dict[str, Any]) -> dict[str, Any]:
        """The SDK's -32022 to `initialize` on a connection the 2026-07-28 protocol opened: a client whose
        discover timed out falls back to `initialize`, learns the server's versions, and probes again."""
        requested = params.get("protocolVersion")
        data: dict[str, Any] = {"supported": list(self.versions.modern)}
        if isinstance(requested, str):
            data["requested"] = requested
        return {"code": UNSUPPORTED_PROTOCOL_VERSION, "message": "connection is serving the 2026-07-28 protocol; "
                "the initialize handshake is not accepted", "data": data}

    def handover(self, line: bytes | None) -> Handover:
        return Handover([*self.kept, *([line] if line else [])], dict(self.expected))

    def _keep(self, msg: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        """The request again for the SDK, which must see it to reach the same state, under a private id."""
        private = f"{REPLAY_ID}{len(self.expected) + 1}"
        self.kept.append(line_of({**msg, "id": private}))
        self.expected[private] = result
        return result

    def _answer(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        method, params = msg["method"], msg.get("params")
        rid = msg["id"]
        if isinstance(rid, bool) or not isinstance(rid, int | str) or params is not None and not isinstance(
                params, dict):
            return None
        params = params or {}
        sure, version = self._envelope(params)
        if not sure:
            return None  # a malformed or unknown envelope: the SDK says what is wrong with it
        if method == "initialize":
            if self.era == "modern" or self.negotiated is not None or not well_formed_initialize(msg):
                return None
            result = initialize_result(self.server, params["protocolVersion"], self.versions.handshake)
            if result["protocolVersion"] not in KNOWN_VERSIONS:
                return None
            self.era, self.negotiated = "legacy", result["protocolVersion"]
            return self._keep(msg, result)
        if method == "tools/call":
            return self._call(params, version)
        if method == "tools/list" and params.get("cursor", "") is None:  # no cursor: the first (only) page
            params = {k: v for k, v in params.items() if k != "cursor"}
        if method not in ("tools/list", "server/discover", "ping") or set(params) - {"_meta"}:
            return None
        if version is None:  # the handshake era's requests
            if self.era == "modern" or method == "server/discover":
                return None
            if method == "ping":
                if self.era is None:
                    self.era = "legacy"
                    return self._keep(msg, {})
                return {}
            if self.negotiated is None:  # tools/list before initialize: the SDK refuses it
                return None
            return tools_result(self.server, self.negotiated, self.versions.modern)
        if self.era == "legacy" or method == "ping":  # ping is gone from the 2026-07-28 protocol
            return None
        result = (discover_result(self.server, self.versions.modern) if method == "server/discover"
                  else tools_result(self.server, version, self.versions.modern))
        if self.era is None:
            self.era = "modern"
            return self._keep(msg, result)
        return result

    def _call(self, params: dict[str, Any], version: str | None) -> dict[str, Any] | None:
        """A tool's answer as the SDK's server shapes it (its `CallToolResult`: the text, `isError`, the data as
        `structuredContent` unless an error; on the 2026-07-28 protocol its `resultType` and serverInfo stamp), on
        a connection whose era is settled; None (the SDK's turn) for an unknown tool or anything unusual."""
        name, arguments = params.get("name"), params.get("arguments")
        if (self.call is None or set(params) - {"name", "arguments", "_meta"} or not isinstance(name, str)
                or name not in self.tool_names or (arguments is not None and not isinstance(arguments, dict))):
            return None
        if (self.era, self.negotiated is None) != (("legacy", False) if version is None else ("modern", True)):
            return None  # before the era is settled, or a request of the other era: the SDK says what is wrong
        text, data, is_error = self.call(name, arguments or {})
        self.calls += 1
        result: dict[str, Any] = {"content": [{"text": text, "type": "text"}], "isError": is_error}
        if version is not None:
            result["resultType"] = "complete"
        if data is not None and not is_error:
            result["structuredContent"] = data
        if version is not None:
            result["_meta"] = {SERVER_INFO_KEY: {"name": self.server.name, "version": self.server.version}}
        return result

    def _envelope(self, params: dict[str, Any]) -> tuple[bool, str | None]:
        """(sure, the 2026-07-28 envelope's protocol version or None without one); not sure of an envelope the
        fast path leaves to the SDK (malformed, or a version it has no answers for)."""
        meta = params.get("_meta")
        if meta is None:
            return True, None
        if not isinstance(meta, dict):
            return False, None
        token = meta.get("progressToken")
        if isinstance(token, int | str) and not isinstance(token, bool):
            # Codex sends every tools/list with one; these answers report no progress, the SDK's neither
            meta = {k: v for k, v in meta.items() if k != "progressToken"}
        if not any(isinstance(k, str) and k.startswith(ENVELOPE) for k in meta):
            return not meta, None  # anything else (a malformed token, another key): the SDK's to read
        if set(meta) - {PROTOCOL_VERSION_KEY, CLIENT_INFO_KEY, CLIENT_CAPABILITIES_KEY}:
            return False, None
        version, info = meta.get(PROTOCOL_VERSION_KEY), meta.get(CLIENT_INFO_KEY)
        if (not isinstance(version, str) or version not in self.versions.modern or version not in KNOWN_VERSIONS
                or not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict)):
            return False, None
        if info is not None and not (isinstance(info, dict) and isinstance(info.get("name"), str)
                                     and isinstance(info.get("version"), str)):
            return False, None
        return True, version
