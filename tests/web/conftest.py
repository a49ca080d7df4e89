"""Fixtures of the `wb serve` tests: a real `wb serve --port 0` process in a repository with a workbench, its
URL, and plain HTTP requests sent exactly as written (http.client sends the path untouched, so `/../` and
`%2e%2e` reach the server as an attacker would send them).

The browser tier (`-m browser`, tests/web/test_browser.py) drives a headless Chromium through Playwright:
tools/browser.sh installs both; without them each browser test skips, saying why.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_BACKEND, WB_ARGV, make_repo, run_wb


class Served:
    """A running `wb serve` and the repository it serves."""

    def __init__(self, repo: Path, proc: subprocess.Popen[str], port: int) -> None:
        self.repo, self.proc, self.port = repo, proc, port
        self.url = f"http://127.0.0.1:{port}/"

    def request(self, path: str, *, method: str = "GET", host: str | None = None
                ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host if host is not None else f"127.0.0.1:{self.port}")
            conn.endheaders()
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def api(self, path: str) -> dict[str, Any]:
        status, _headers, body = self.request(path)
        assert status == 200, (path, status, body)
        data: dict[str, Any] = json.loads(body)
        return data

    def wb(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = run_wb(self.repo, *args)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc


def start_serve(repo: Path, *extra: str, host: str = "127.0.0.1") -> Served:
    proc = subprocess.Popen([*WB_ARGV, "serve", "--port", "0", *extra], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(10)
        why = proc.stderr.read() if proc.stderr else ""
        raise AssertionError(f"wb serve printed nothing: exit {proc.returncode}: {why}")
    assert line.startswith(f"wb serve: http://{host}:"), line
    port = int(line.split(f"{host}:")[1].split("/")[0])
    return Served(repo, proc, port)


def stop_serve(served: Served) -> None:
    served.proc.terminate()
    try:
        served.proc.wait(10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a server that ignores SIGTERM
        served.proc.kill()
        served.proc.wait(10)
    for stream in (served.proc.stdout, served.proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture(scope="session")
def _seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("web_template") / "repo")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Web Test", "GIT_AUTHOR_EMAIL": "web@example.invalid",
           "GIT_COMMITTER_NAME": "Web Test", "GIT_COMMITTER_EMAIL": "web@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1", "WB_DEFAULT_BACKEND": TEST_BACKEND}  # made before any test's environment
    for args in (("init",), ("task", "add", "Write the parser"), ("task", "add", "Document the format"),
                 ("task", "add", "Ship it", "--depends-on", "T-001")):
        proc = run_wb(repo, *args, env=env)
        assert proc.returncode == 0, (args, proc.stderr)
    return repo


@pytest.fixture
def seeded(_seeded_template: Path, tmp_path: Path) -> Path:
    """A repository whose workbench holds three tasks, the third waiting on the first (a copy, per test)."""
    repo = tmp_path / "repo"
    shutil.copytree(_seeded_template, repo, symlinks=True)
    lock = repo / ".workbench" / ".lock"
    if lock.exists():
        lock.unlink()
    return repo


@pytest.fixture
def served(seeded: Path) -> Iterator[Served]:
    server = start_serve(seeded)
    try:
        yield server
    finally:
        stop_serve(server)


def yielding_session(repo: Path) -> str:
    """Run a harness session whose first step needs a tool result from outside (it yields), answer it with
    `wb resume --result`, and leave it waiting on the second yield; returns the session id."""
    (repo / "plan.json").write_text(json.dumps({"steps": [
        {"description": "fetch the numbers", "tool": "fetch"},
        {"description": "publish the report", "tool": "publish"}]}))
    env = {**os.environ, "CI": "1"}
    first = run_wb(repo, "run", "report the numbers", "--plan", "plan.json", "--json", env=env)
    assert first.returncode == 3, (first.stdout, first.stderr)
    second = run_wb(repo, "resume", "--result", '{"rows": 3}', "--json", env=env)
    assert second.returncode == 3, (second.stdout, second.stderr)
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    session_id: str = status["session"]["id"]
    return session_id


# -- the browser tier ------------------------------------------------------------------------------------------
def chromium_path() -> str | None:
    """$WB_CHROMIUM, else the Chromium tools/browser.sh found (its status file), else one on PATH."""
    if os.environ.get("WB_CHROMIUM"):
        return os.environ["WB_CHROMIUM"]
    status = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wb-browser" / "status"
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("chromium="):
                return line.split("=", 1)[1]
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


# read when this module is imported, before the suite's isolated HOME is in place (as tests/clients does)
CHROMIUM = chromium_path()


def browser_missing() -> str | None:
    """None when a headless Chromium and Playwright are here, else why not (the skip reason)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: run tools/browser.sh"
    if CHROMIUM is None or not Path(CHROMIUM).exists():
        return "no Chromium found: run tools/browser.sh (or set WB_CHROMIUM)"
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    reason = browser_missing()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chrome = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield chrome
        finally:
            chrome.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.errors = []  # the page's uncaught errors and console errors: a test asserts there are none
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    try:
        yield pg
    finally:
        context.close()


def wait_until(check: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)
