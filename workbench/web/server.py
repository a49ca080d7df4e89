"""The HTTP side of `wb serve`: a ThreadingHTTPServer bound to 127.0.0.1 (another interface only when the
caller says so), answering GET and HEAD for its own static files and its JSON routes and nothing else.

- Paths: a fixed table of routes and the files read from `static/` when the server starts (no symlinks, no
  directories); any other path — `/../`, `%2e%2e`, an absolute path, a file not in the table — is 404, and the
  disk is never asked. Other methods: 405 with one line (the page is read-only), unless a person started
  `wb serve --act`: then `POST /api/act/<action>` writes, behind the checks of web/acting.py.
- Host header: only `127.0.0.1:PORT` and `localhost:PORT` (and `HOST:PORT` for an explicit `--host`), so a
  page on another site that re-points its DNS name at 127.0.0.1 (DNS rebinding) gets 403, not the workbench.
- Headers: a strict Content-Security-Policy (`default-src 'self'`, no inline script or style, no frames),
  nosniff, no referrer, no caching of the JSON.
- The workbench mid-write or invalid: a route answers `{"ok": false, "error": ..., "data": <the last good
  answer>}` with 200, so the page keeps its data and shows a banner; the server stays up.
- Live updates: `/api/live` is a server-sent event stream that sends `change` whenever the stat of the
  board, state.md or the log's tail changes (ops/board.stamp, as `wb board` polls it).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from workbench.errors import WorkbenchError
from workbench.web import views

if TYPE_CHECKING:
    from workbench.web.acting import Acting

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
POLL_SECONDS = 0.25
HEARTBEAT_SECONDS = 15.0


def static_files() -> dict[str, tuple[bytes, str]]:
    """{url path: (bytes, content type)} of the page's files, read once from the package's `static/`: only
    regular files with a known suffix, never a symlink (so nothing outside the package can be served)."""
    out: dict[str, tuple[bytes, str]] = {}
    folder = resources.files("workbench.web") / "static"
    for item in folder.iterdir():
        name = item.name
        suffix = name[name.rfind("."):] if "." in name else ""
        if suffix not in TYPES or not item.is_file():
            continue
        try:  # a Traversable from a zip has no path: it cannot be a symlink either
            from pathlib import Path

            if Path(str(item)).is_symlink():
                continue
        except (OSError, ValueError):  # pragma: no cover - not a filesystem path
            pass
        out["/" + name] = (item.read_bytes(), TYPES[suffix])
    out["/"] = out["/index.html"]
    return out


class Source:
    """The workbench as the routes read it: one read at a time (the Bench is not shared between threads
    otherwise), each route's last good answer kept for when a read fails."""

    def __init__(self, bench: Any) -> None:
        self.bench = bench
        storage = getattr(bench.wb, "storage", None)
        if getattr(storage, "kind", None) == "sqlite":  # one connection, read by each handler's thread in turn
            storage.share_between_threads()  # type: ignore[union-attr]
        self.lock = threading.Lock()
        self.last_good: dict[str, Any] = {}

    def answer(self, key: str, read: Callable[[], Any]) -> dict[str, Any]:
        """The route's answer and the stamp of the files taken before it was read: the page opens its live
        stream from that stamp (`/api/live?since=`), so a write that lands between its read and the stream's
        start is still a change it is told about. A write during the read only costs one more refresh."""
        with self.lock:
            seen = self.stamp()
            try:
                data = views.shown(read())
            except WorkbenchError as err:
                return {"ok": False, "error": views.shown(str(err)), "data": self.last_good.get(key), "stamp": seen}
            except (OSError, ValueError, KeyError, TypeError) as err:  # a file caught mid-write
                return {"ok": False, "error": views.shown(f"the workbench could not be read ({err}); "
                                                          "wb validate says why"),
                        "data": self.last_good.get(key), "stamp": seen}
            except Exception as err:  # a bug in a view: this route says so, the server and the others stay up
                import traceback

                traceback.print_exc()
                return {"ok": False, "error": views.shown(f"wb serve: {type(err).__name__}: {err} (a bug: "
                                                          "please report it)"),
                        "data": self.last_good.get(key), "stamp": seen}
            self.last_good[key] = data
            return {"ok": True, "error": None, "data": data, "stamp": seen}

    def stamp(self) -> str:
        """A short digest of the watched files' (inode, size, mtime): equal stamps, nothing to read again."""
        from workbench.ops.board import stamp, watched

        return hashlib.sha256(json.dumps(stamp(watched(self.bench.wb))).encode()).hexdigest()[:20]


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values and values[0] != "" else None


def _int(query: dict[str, list[str]], name: str) -> int | None:
    value = _one(query, name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def routes(source: Source) -> dict[str, Callable[[dict[str, list[str]]], dict[str, Any]]]:
    bench = source.bench

    def board(q: dict[str, list[str]]) -> dict[str, Any]:
        return source.answer("board " + json.dumps(sorted(q.items())), lambda: views.board(
            bench, label=_one(q, "label"), owner=_one(q, "owner"), status=_one(q, "status")))

    def events(q: dict[str, list[str]]) -> dict[str, Any]:
        return source.answer("events " + json.dumps(sorted(q.items())), lambda: views.events(
            bench, type=_one(q, "type"), session=_one(q, "session"), before=_int(q, "before"),
            limit=_int(q, "limit") or views.PAGE))

    return {
        "/api/board": board,
        "/api/graph": lambda q: source.answer("graph", lambda: views.graph(bench)),
        "/api/task": lambda q: source.answer("task " + str(_one(q, "id")),
                                             lambda: views.task(bench, _one(q, "id") or "")),
        "/api/sessions": lambda q: source.answer("sessions", lambda: views.sessions(bench)),
        "/api/session": lambda q: source.answer("session " + str(_one(q, "id")),
                                                lambda: views.timeline(bench, _one(q, "id") or "")),
        "/api/decisions": lambda q: source.answer("decisions", lambda: views.decisions(bench)),
        "/api/inbox": lambda q: source.answer("inbox", lambda: views.inbox(bench)),
        "/api/handoff": lambda q: source.answer("handoff", lambda: views.handoff(bench)),
        "/api/diff": lambda q: source.answer("diff " + json.dumps(sorted(q.items())),
                                             lambda: views.diff(bench, _one(q, "a"), _one(q, "b"))),
        "/api/events": events,
        "/api/stamp": lambda q: {"ok": True, "error": None, "data": {"stamp": source.stamp()}},
    }


class Handler(BaseHTTPRequestHandler):
    server: WebServer
    server_version = "wb-serve"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal shows the URL only
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, code: int, body: bytes, ctype: str, *, head: bool = False, cache: bool = True) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        if not cache:
            self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _refuse(self, code: int, why: str, head: bool = False) -> None:
        self._send(code, (why + "\n").encode(), "text/plain; charset=utf-8", head=head, cache=False)

    def _host_ok(self) -> bool:
        return (self.headers.get("Host") or "").lower() in self.server.hosts

    def do_HEAD(self) -> None:
        self._get(head=True)

    def do_GET(self) -> None:
        self._get(head=False)

    def _get(self, *, head: bool) -> None:
        if not self._host_ok():
            return self._refuse(403, "wb serve answers only to its own address (Host header)", head)
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query, keep_blank_values=True)
        if path in self.server.files:
            body, ctype = self.server.files[path]
            return self._send(200, body, ctype, head=head)
        acting = self.server.acting
        if acting is not None and path == "/act" and not head:
            return self._open_session(acting, _one(query, "token"))
        if path == "/api/act":
            return self._act_view(head)
        if path == "/api/live" and not head:
            return self._live(_one(query, "since"))
        route = self.server.routes.get(path)
        if route is None:
            return self._refuse(404, "not found", head)
        body = json.dumps(route(query), ensure_ascii=True).encode()
        self._send(200, body, "application/json", head=head, cache=False)

    def _refuse_method(self) -> None:
        from workbench.web.acting import READ_ONLY

        acting = self.server.acting is not None
        body = ("wb serve: only GET, HEAD and POST /api/act/… are answered" if acting else READ_ONLY).encode()
        self.close_connection = True  # a body it did not read may follow
        self.send_response(405)
        self.send_header("Allow", "GET, HEAD, POST" if acting else "GET, HEAD")
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body) + 1))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body + b"\n")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method

    # -- acting from the page (web/acting.py): only when a person started `wb serve --act` ---------------------
    def _json(self, code: int, data: dict[str, Any], head: bool = False) -> None:
        body = json.dumps(data, ensure_ascii=True).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _open_session(self, acting: Acting, token: str | None) -> None:
        opened = acting.exchange(token)
        if opened is None:
            return self._refuse(403, "this link opens nothing: the token is wrong or was used already (each "
                                     "`wb serve --act` shows a new one, once)")
        self.send_response(303)
        self.send_header("Set-Cookie", acting.set_cookie(opened[0]))
        self.send_header("Location", "/")
        self.send_header("Content-Length", "0")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()

    def _act_view(self, head: bool) -> None:
        acting = self.server.acting
        session = acting.session_of(self.headers.get("Cookie")) if acting is not None else None
        if acting is None or session is None:
            return self._json(200, {"ok": True, "error": None, "data": {"on": False}}, head)
        from workbench.web.acting import view

        csrf = acting.csrf_of(session)
        answer = self.server.source.answer("act", lambda: {"on": True, **view(self.server.source.bench, csrf)})
        self._json(200, answer, head)

    def do_POST(self) -> None:
        acting = self.server.acting
        if acting is None:
            return self._refuse_method()
        self.close_connection = True
        if not self._host_ok():
            return self._refuse(403, "wb serve answers only to its own address (Host header)")
        from workbench.web.acting import ACTIONS, MAX_BODY, perform

        action = urlsplit(self.path).path.removeprefix("/api/act/")
        if not self.path.startswith("/api/act/") or action not in ACTIONS:
            return self._refuse(404, "not found")
        why = acting.refusal(self.headers, {f"http://{h}" for h in self.server.hosts})
        if why is not None:
            return self._json(403, {"ok": False, "error": why})
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY:
            return self._json(413 if length > MAX_BODY else 400,
                              {"ok": False, "error": f"a write's body is JSON of at most {MAX_BODY} bytes"})
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return self._json(400, {"ok": False, "error": "a write's body is a JSON object"})
        source = self.server.source
        with source.lock:
            try:
                done = perform(source.bench, action, body)
            except WorkbenchError as err:  # the CLI's one line: 400 for what was asked wrongly, 409 refused
                from workbench.errors import UsageError

                line = " ".join(str(err).splitlines())
                return self._json(400 if isinstance(err, UsageError) else 409,
                                  {"ok": False, "error": views.shown(line)})
            except OSError as err:  # disk full, a read-only workbench: the environment, not a bug
                return self._json(500, {"ok": False, "error": views.shown(
                    f"the workbench could not be written ({err.strerror or err}); wb doctor says why")})
            except Exception as err:  # a bug in a write: this request says so; the server stays up
                import traceback

                traceback.print_exc()
                return self._json(500, {"ok": False, "error": views.shown(
                    f"wb serve: {type(err).__name__}: {err} (a bug: please report it)")})
        self._json(200, {"ok": True, "error": None, "data": views.shown(done)})

    def _live(self, since: str | None) -> None:
        """Server-sent events: `hello`, then `change` whenever the stamp differs from the last one sent — the
        first comparison is with `since` (the stamp of the page's last read) when the page gives one, so
        nothing that landed before the stream started is missed."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.close_connection = True
        last = since[:64] if since else self.server.source.stamp()
        beat = time.monotonic()
        try:
            self.wfile.write(b"retry: 1000\nevent: hello\ndata: {}\n\n")
            self.wfile.flush()
            while not self.server.stopping.is_set():
                time.sleep(POLL_SECONDS)
                now = self.server.source.stamp()
                if now != last:
                    last = now
                    self.wfile.write(b"event: change\ndata: {}\n\n")
                    self.wfile.flush()
                elif time.monotonic() - beat > HEARTBEAT_SECONDS:
                    self.wfile.write(b": beat\n\n")
                    self.wfile.flush()
                    beat = time.monotonic()
        except OSError:  # the page went away
            return


class WebServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, bench: Any, host: str = "127.0.0.1", port: int = 0, *, verbose: bool = False,
                 act: bool = False) -> None:
        super().__init__((host, port), Handler)
        self.port = self.server_address[1]
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        if host not in ("127.0.0.1", "localhost"):
            self.hosts.add(f"{host.lower()}:{self.port}")
        self.source = Source(bench)
        self.routes = routes(self.source)
        self.files = static_files()
        self.verbose = verbose
        self.stopping = threading.Event()
        self.acting: Acting | None = None
        if act:  # the caller proved a person first (cli/serve.py)
            from workbench.web.acting import Acting

            self.acting = Acting(self.port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def shutdown(self) -> None:
        self.stopping.set()
        super().shutdown()


LOOPBACK = ("127.0.0.1", "localhost")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK
