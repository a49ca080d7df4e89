"""A scripted model API on 127.0.0.1 for the real clients: no login, no model.

It speaks just enough of two wire formats, streamed as server-sent events:
- Anthropic's Messages API (`POST /v1/messages`, `stream: true`) for Claude Code (ANTHROPIC_BASE_URL);
- OpenAI's Responses API (`POST /v1/responses`, `stream: true`) for Codex (a `model_providers` entry with
  `base_url` and `wire_api = "responses"`).

The script is a list of turns; each turn is one tool call (`(kind, args)`) or the final text. Which turn a
request gets is the number of tool results its conversation already holds (Codex's tool searches included),
so a client that retries a request gets the same turn again. A request that offers no tools (a client's side
request: a title, a summary) is answered with a short text. Every request body is kept in `requests` for the
test to read.
"""
from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A turn: ("tool", name_picker, args), ("text", text), or for Codex ("search", query[, namespace]): a
# `tool_search` call (Codex offers MCP tools only through it), made again until its output holds `namespace`
# when one is given. name_picker maps the tool names the client offered to the one to call (the clients name
# wb's MCP tools differently: mcp__wb__status for both, Codex's as function `status` in namespace `mcp__wb`).
Turn = tuple[Any, ...]


def pick(*suffixes: str) -> Callable[[list[str]], str]:
    """The offered tool whose name is one of `suffixes` or ends with `__` + one of them."""
    def chooser(names: list[str]) -> str:
        for suffix in suffixes:
            for name in names:
                if name == suffix or name.endswith("__" + suffix):
                    return name
        raise LookupError(f"none of {suffixes} among the offered tools {names}")
    return chooser


class ScriptedModel:
    def __init__(self, turns: list[Turn]) -> None:
        self.turns = turns
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def turn_for(self, done: int) -> Turn:
        return self.turns[min(done, len(self.turns) - 1)]

    # -- Anthropic Messages -------------------------------------------------------------------------------
    def anthropic(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        names = [t.get("name", "") for t in body.get("tools") or []]
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "user" and isinstance(m.get("content"), list)
                   for block in m["content"] if isinstance(block, dict) and block.get("type") == "tool_result")
        turn = self.turn_for(done) if names else ("text", "ok")
        msg_id = "msg_" + uuid.uuid4().hex[:20]
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": body.get("model", "scripted"),
                "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}})]
        if turn[0] == "tool":
            name = turn[1](names)
            events += [
                ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                    "type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": name, "input": {}}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(turn[2])}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                   "usage": {"output_tokens": 5}})]
        else:
            events += [
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": turn[1]}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                   "usage": {"output_tokens": 5}})]
        events.append(("message_stop", {"type": "message_stop"}))
        return events

    # -- OpenAI Responses ---------------------------------------------------------------------------------
    def responses(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        tools = body.get("tools") or []
        items = body.get("input") or []
        # name -> (namespace, tool name, tool type); a namespace's tools (Codex's MCP servers: `mcp__wb`) are
        # offered as `<namespace>__<name>`, in `tools` or, once found, in a `tool_search_output` of the input
        offered: dict[str, tuple[str | None, str, str]] = {}
        found = [t for i in items if isinstance(i, dict) and i.get("type") == "tool_search_output"
                 for t in i.get("tools") or []]
        for tool in [*tools, *found]:
            if tool.get("type") == "namespace":
                for inner in tool.get("tools") or []:
                    offered[f"{tool['name']}__{inner['name']}"] = (tool["name"], inner["name"], inner.get("type", ""))
            else:
                name = tool.get("name") or tool.get("type", "")
                offered[name] = (None, name, tool.get("type", ""))
        names = list(offered)
        done = 0
        for i in items:
            if not isinstance(i, dict) or i.get("type") not in (
                    "function_call_output", "custom_tool_call_output", "tool_search_output"):
                continue
            step = self.turn_for(done)
            if (i["type"] == "tool_search_output" and step[0] == "search" and len(step) > 2
                    and step[2] not in {t.get("name") for t in i.get("tools") or []}):
                continue  # the search found nothing of what it looks for: search again, as a model would
            done += 1
        turn = self.turn_for(done) if names else ("text", "ok")
        resp_id = "resp_" + uuid.uuid4().hex[:20]
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": {"id": resp_id}})]
        if turn[0] == "search":
            call_id = "call_" + uuid.uuid4().hex[:20]
            item = {"type": "tool_search_call", "id": "ts_" + call_id, "call_id": call_id, "execution": "client",
                    "status": "completed", "arguments": {"query": turn[1], "limit": 20}}
        elif turn[0] == "tool":
            namespace, name, kind = offered[turn[1](names)]
            call_id = "call_" + uuid.uuid4().hex[:20]
            if kind == "custom":  # a freeform tool (Codex's apply_patch): the input is raw text
                item = {"type": "custom_tool_call", "id": "ctc_" + call_id, "call_id": call_id, "name": name,
                        "input": turn[2] if isinstance(turn[2], str) else json.dumps(turn[2]), "status": "completed"}
            else:
                item = {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": name,
                        **({"namespace": namespace} if namespace else {}),
                        "arguments": json.dumps(turn[2]), "status": "completed"}
        else:
            item = {"type": "message", "id": "msg_" + uuid.uuid4().hex[:20], "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": turn[1], "annotations": []}]}
        events += [
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {
                "id": resp_id, "object": "response", "status": "completed", "output": [item],
                "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                          "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}})]
        return events

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _json(self, code: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [], "models": []})
                else:
                    self._json(404, {"error": {"type": "not_found", "message": self.path}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?")[0]
                with model.lock:
                    model.requests.append({"path": path, "body": body})
                    try:
                        if path.endswith("/messages/count_tokens"):
                            return self._json(200, {"input_tokens": 10})
                        if path.endswith("/messages"):
                            events = model.anthropic(body)
                        elif path.endswith("/responses"):
                            events = model.responses(body)
                        else:
                            return self._json(404, {"error": {"type": "not_found", "message": path}})
                    except Exception as exc:  # the test reads these: a script that cannot go on
                        model.errors.append(f"{path}: {exc!r}")
                        error = {"type": "invalid_request_error", "message": repr(exc)}  # 400: not retried
                        return self._json(400, {"type": "error", "error": error})
                payload = b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
