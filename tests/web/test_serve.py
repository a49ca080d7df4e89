"""`wb serve` over plain HTTP, from a client's side: a real `wb serve` process, requests sent as written. It
serves its own page and JSON routes and nothing else, answers only to its own Host, never writes, refuses
another interface unless told, escapes every value, and stays up with the last good data when the workbench
cannot be read (docs/views.md)."""

from __future__ import annotations

import http.client
import socket
import time
from pathlib import Path
from urllib.parse import quote

from tests.conftest import TEST_BACKEND, hash_workbench, run_wb
from tests.damage import read_board, write_board

from .conftest import Served, start_serve, stop_serve, yielding_session

TRAVERSALS = [
    "/../../../../etc/passwd",
    "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/%2E%2E%2F%2E%2E%2Fpyproject.toml",
    "/..%2f..%2f..%2fREADME.md",
    "/static/../../README.md",
    "//etc/passwd",
    "/app.js/../../README.md",
    "/.workbench/board.json",
    "/README.md",
    "/web/server.py",
    "/__init__.py",
    "/index.html%00.js",
]


def test_only_its_own_files_and_routes_are_served(served: Served) -> None:
    status, headers, body = served.request("/")
    assert status == 200 and b"<script src=\"/app.js\"" in body, (status, body[:200])
    assert headers["content-type"].startswith("text/html")
    for path in TRAVERSALS:
        status, _h, body = served.request(path)
        assert status in (403, 404), (path, status, body[:200])
        assert b"root:" not in body and b"T-001" not in body and b"import" not in body, path


def test_a_symlink_in_the_workbench_or_repo_is_not_followed(served: Served) -> None:
    (served.repo / "leak.js").symlink_to("/etc/passwd")
    for path in ("/leak.js", "/%6ceak.js", "/../leak.js"):
        status, _h, body = served.request(path)
        assert status == 404 and b"root:" not in body, (path, status)


def test_another_host_header_is_refused_dns_rebinding(served: Served) -> None:
    for host in ("evil.example", f"evil.example:{served.port}", f"127.0.0.1.nip.io:{served.port}",
                 "127.0.0.1", f"127.0.0.1:{served.port + 1}", ""):
        status, _h, body = served.request("/api/board", host=host)
        assert status == 403 and b"T-001" not in body, (host, status)
    for host in (f"127.0.0.1:{served.port}", f"localhost:{served.port}"):
        assert served.request("/api/board", host=host)[0] == 200, host


def test_headers_forbid_inline_script_frames_and_sniffing(served: Served) -> None:
    for path in ("/", "/app.js", "/api/board", "/nothing"):
        _status, headers, _body = served.request(path)
        csp = headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert headers["x-content-type-options"] == "nosniff"


def test_read_only_every_other_method_is_refused_and_nothing_is_written(served: Served) -> None:
    before = hash_workbench(served.repo)
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        for path in ("/api/board", "/"):
            assert served.request(path, method=method)[0] == 405, (method, path)
    for path in ("/api/board", "/api/graph", "/api/sessions", "/api/decisions", "/api/handoff", "/api/events",
                 "/api/diff?a=@1", "/api/session?id=nope"):
        assert served.api(path)["ok"] is True, path
    assert hash_workbench(served.repo) == before


def test_another_interface_needs_allow_remote(seeded: Path) -> None:
    proc = run_wb(seeded, "serve", "--host", "0.0.0.0", "--port", "0")
    assert proc.returncode == 2, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--allow-remote" in lines[0], proc.stderr


def test_a_taken_port_is_one_line(seeded: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = run_wb(seeded, "serve", "--port", str(port))
    assert proc.returncode == 2 and "--port" in proc.stderr and "Traceback" not in proc.stderr, proc


def test_every_value_is_escaped_in_the_api(served: Served) -> None:
    served.wb("task", "add", "red \x1b[31mALERT\x1b[0m \u202egnp.exe <img src=x onerror=alert(1)>")
    cards = [c for col in served.api("/api/board")["data"]["columns"] for c in col["tasks"]]
    title = next(c["title"] for c in cards if c["id"] == "T-004")
    assert "\x1b" not in title and "\u202e" not in title
    assert "\\e[31mALERT" in title and "\\u202egnp.exe" in title
    assert "<img src=x onerror=alert(1)>" in title  # HTML stays as written: the page shows it as text


def test_the_graph_draws_each_dependency(served: Served) -> None:
    graph = served.api("/api/graph")["data"]
    layers = {n["id"]: n["layer"] for n in graph["nodes"]}
    assert layers == {"T-001": 0, "T-002": 0, "T-003": 1}
    assert graph["edges"] == [{"from": "T-001", "to": "T-003", "missing": False, "archived": False}]


def test_a_session_timeline_shows_its_yields_and_who_answered(served: Served) -> None:
    session = yielding_session(served.repo)
    sessions = served.api("/api/sessions")["data"]["sessions"]
    assert [s["id"] for s in sessions] == [session]
    timeline = served.api(f"/api/session?id={session}")["data"]
    yields = [e for e in timeline["entries"] if e["kind"] == "yield"]
    assert len(yields) == 2, timeline["entries"]
    assert yields[0]["answered_by"] and yields[0]["answered_by"].startswith("agent"), yields[0]
    assert yields[1]["answered_by"] is None
    assert timeline["budget"]["used"]["tool_calls"] == 2
    assert [s["status"] for s in timeline["plan"]] == ["done", "awaiting_tool"]


def test_the_event_log_pages_back_and_filters(served: Served) -> None:
    for i in range(7):
        served.wb("note", f"note {i}")
    first = served.api("/api/events?limit=3")["data"]
    seqs = [e["seq"] for e in first["events"]]
    assert seqs == sorted(seqs, reverse=True) and len(seqs) == 3 and first["older"] > 0
    second = served.api(f"/api/events?limit=3&before={seqs[-1]}")["data"]
    assert [e["seq"] for e in second["events"]] == [seqs[-1] - 1, seqs[-1] - 2, seqs[-1] - 3]
    tasks = served.api("/api/events?type=task.add")["data"]
    assert [e["type"] for e in tasks["events"]] == ["task.add"] * 3


def test_it_stays_up_with_the_last_good_board_when_the_workbench_is_invalid(served: Served) -> None:
    good = served.api("/api/board")
    assert good["ok"] is True
    saved = read_board(served.repo)
    write_board(served.repo, b'{"schema_version": 2, "tasks": [')  # torn, by hand (board.json, or its row)
    broken = served.api("/api/board")
    assert broken["ok"] is False and broken["error"], broken
    assert broken["data"] == good["data"], "the last good board is kept for the page"
    assert served.request("/")[0] == 200
    write_board(served.repo, saved)
    assert served.api("/api/board")["ok"] is True


def test_a_write_reaches_the_live_stream(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(f"GET /api/live HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode())
        got = b""
        while b"event: hello" not in got:
            got += sock.recv(4096)
        served.wb("task", "add", "Arrives live")
        deadline = time.monotonic() + 10
        while b"event: change" not in got and time.monotonic() < deadline:
            got += sock.recv(4096)
    assert b"event: change" in got, got


def read_stream(served: Served, path: str, seconds: float) -> bytes:
    """What `/api/live` sends on a stream opened at `path` within `seconds` of its `hello`."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode())
        got = b""
        while b"event: hello" not in got:
            got += sock.recv(4096)
        sock.settimeout(0.5)
        deadline = time.monotonic() + seconds
        while b"event: change" not in got and time.monotonic() < deadline:
            try:
                got += sock.recv(4096)
            except TimeoutError:
                continue
    return got


def test_a_write_between_the_pages_read_and_its_stream_still_reaches_the_page(served: Served) -> None:
    # The page reads the board, a write lands, then the page's stream opens: the stream starts from the stamp
    # the page's read answered, so the write is a change the page is told about (it was lost before: the
    # stream compared from its own start).
    answer = served.api("/api/board")
    stamp = answer["stamp"]
    assert isinstance(stamp, str) and stamp
    served.wb("task", "add", "Lands before the stream")
    assert b"event: change" in read_stream(served, "/api/live?since=" + quote(stamp), 10)
    # nothing changed since a fresh read: no change event (a since that matches is not a change)
    fresh = served.api("/api/board")["stamp"]
    assert b"event: change" not in read_stream(served, "/api/live?since=" + quote(fresh), 2)


def test_the_graph_layout_takes_a_long_chain_a_cycle_and_a_missing_dependency() -> None:
    from workbench.web.views import layout

    def card(task_id: str, *deps: str) -> dict[str, object]:
        return {"id": task_id, "title": task_id, "status": "todo", "ready": not deps, "depends_on": list(deps)}

    chain = [card("T-0")] + [card(f"T-{i}", f"T-{i - 1}") for i in range(1, 3000)]
    nodes = layout(chain)["nodes"]
    assert [n["layer"] for n in nodes] == list(range(3000))  # no recursion limit
    cyclic = layout([card("A", "B"), card("B", "A"), card("C", "A", "GONE")])
    layers = {n["id"]: n["layer"] for n in cyclic["nodes"]}
    assert set(layers) == {"A", "B", "C"} and layers["C"] > layers["A"]
    assert {"from": "GONE", "to": "C", "missing": True, "archived": False} in cyclic["edges"]


def test_allow_remote_serves_the_named_address_and_answers_to_it(seeded: Path) -> None:
    # 127.0.0.2 is not the default address: it needs --allow-remote like any other (and exists on Linux)
    refused = run_wb(seeded, "serve", "--host", "127.0.0.2", "--port", "0")
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr, refused
    every = run_wb(seeded, "serve", "--host", "0.0.0.0", "--allow-remote", "--port", "0")
    assert every.returncode == 2 and "name the one address" in every.stderr, every
    server = start_serve(seeded, "--host", "127.0.0.2", "--allow-remote", host="127.0.0.2")
    try:
        conn = http.client.HTTPConnection("127.0.0.2", server.port, timeout=10)
        for host, code in ((f"127.0.0.2:{server.port}", 200), ("evil.example", 403)):
            conn.request("GET", "/api/board", headers={"Host": host})
            resp = conn.getresponse()
            resp.read()
            assert resp.status == code, host
        conn.close()
    finally:
        stop_serve(server)


def test_diff_decisions_and_handoff_come_from_the_library(served: Served) -> None:
    # the seeded log: workbench.init, then a task.add each; git revisions name commits on files only
    for a, b in [("@3", "@4"), ("@-1", "@4")] + ([("HEAD~1", "HEAD")] if TEST_BACKEND == "files" else []):
        diff = served.api(f"/api/diff?a={a}&b={b}")["data"]
        assert [t["id"] for t in diff["board"]["added"]] == ["T-003"], (a, b, diff["board"])
    bad = served.api("/api/diff?a=no-such-ref")
    assert bad["ok"] is False and "no-such-ref" in bad["error"], bad
    served.wb("note", "chose <b>SQLite</b> over \x1b[2Jfiles")
    entries = served.api("/api/decisions")["data"]["entries"]
    assert entries[0]["text"] == "chose <b>SQLite</b> over \\e[2Jfiles", entries[0]
    assert served.api("/api/handoff")["data"]["handoff"] is None
    served.wb("handoff")
    packet = served.api("/api/handoff")["data"]["handoff"]
    assert packet["next_action"]["text"], packet


def test_a_page_far_back_is_the_same_read_either_way(bench: object, monkeypatch: object) -> None:
    from workbench.web import views

    for i in range(30):
        bench.note(f"note {i}")  # type: ignore[attr-defined]
    near = views.events(bench, before=12, limit=5)
    monkeypatch.setattr(views, "DEEP", 4)  # type: ignore[attr-defined]  # the whole-log pass from the second try
    far = views.events(bench, before=12, limit=5)
    assert near == far and [e["seq"] for e in far["events"]] == [11, 10, 9, 8, 7] and far["older"] == 6


def test_a_task_and_its_history(served: Served) -> None:
    task = served.api("/api/task?id=T-003")["data"]
    assert task["task"]["depends_on"] == ["T-001"] and [e["type"] for e in task["history"]] == ["task.add"]
    missing = served.api("/api/task?id=T-999")
    assert missing["ok"] is False and "T-999" in missing["error"]


def test_ctrl_c_stops_it_cleanly(seeded: Path) -> None:
    import signal

    server = start_serve(seeded)
    assert server.request("/")[0] == 200
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(10) == 0
    stderr = server.proc.stderr.read() if server.proc.stderr else ""
    assert "Traceback" not in stderr, stderr
    stop_serve(server)
