"""The `web` group of bench/run.py (issue 21): `wb serve`'s page in a headless Chromium (tools/browser.sh
installs it and Playwright; without them the group is skipped, saying why).

  web.board_5000   a fresh page load of the board of a 5,000-task workbench, from the request for the page to
                   the first frame painted with its columns (each a window of its first cards: issue 32) and
                   the count of all 5,000 (the page's own clock: performance.now() at that frame), median of
                   the rounds, seconds (≤ 1 s)
  web.board_30     the same for a 30-task workbench, every card shown (≤ 0.3 s)
  web.board_ratio  the two against each other (information)
  web.live         from the exit of a `wb task add` in another process to its card on the open page of the
                   30-task workbench, without a reload (the server's stat poll, the event stream, the page's
                   read and render), median, seconds (≤ 0.2 s, issue 32)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import common as R  # bench/common.py: what every bench shares (this module imports no other bench's)

TASKS, SMALL = 5_000, 30
WINDOW = 50  # the cards a column of the page shows before "show more" (static/app.js)
R.BARS.update({"web.board_5000": 1.0, "web.board_30": 0.3, "web.live": 0.2})  # seconds, at most


def chromium() -> str | None:
    if os.environ.get("WB_CHROMIUM"):
        return os.environ["WB_CHROMIUM"]
    status = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wb-browser" / "status"
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("chromium="):
                return line.split("=", 1)[1]
    return next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)


def serve(ctx: R.Context, repo: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([ctx.wb, "serve", "--port", "0"], cwd=repo, env=ctx.runner.env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        raise R.BenchError(f"wb serve did not start: {line!r}")
    return proc, line.split()[2]


def painted_ms(page: Any, url: str, cards: int) -> float:
    page.goto(url)
    page.wait_for_selector("body[data-renders]")
    shown = page.locator("#board .card").count()
    if shown < min(cards, WINDOW):
        raise R.BenchError(f"the page shows {shown} cards, not {min(cards, WINDOW)}")
    total = page.text_content("#total") or ""
    if not total.startswith(f"{cards} of {cards} "):
        raise R.BenchError(f"the page counts {total!r}, not {cards} tasks")
    return float(page.evaluate("() => Number(document.body.dataset.paintedMs)")) / 1000


def bench_web(ctx: R.Context) -> list[R.Result]:
    path = chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print(f"{'web':<22} SKIPPED: playwright is not installed (tools/browser.sh)", flush=True)
        return []
    if path is None:
        print(f"{'web':<22} SKIPPED: no Chromium (tools/browser.sh)", flush=True)
        return []
    s = ctx.settings
    # _gen.py's last event is its one real mutation (not a task): TOTAL + 1 events make TOTAL tasks
    big = ctx.workbench(f"web-{TASKS}", "task", TASKS + 1)
    small = ctx.workbench(f"web-{SMALL}", "task", SMALL + 1)
    servers = [serve(ctx, big), serve(ctx, small)]
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
            try:
                def side(url: str, cards: int) -> Any:
                    def once() -> float:
                        context = browser.new_context(viewport={"width": 1400, "height": 900})
                        try:
                            return painted_ms(context.new_page(), url, cards)
                        finally:
                            context.close()
                    return once

                a, b = R.side_by_side([side(servers[0][1], TASKS), side(servers[1][1], SMALL)],
                                      s.n(12, 5), s.n(2, 1))
                live = live_seconds(ctx, browser, small, servers[1][1], s.n(10, 4))
            finally:
                browser.close()
    finally:
        for proc, _url in servers:
            proc.terminate()
            proc.wait(10)
            if proc.stdout:
                proc.stdout.close()
    median = statistics.median(a)
    limit = R.Result("web.board_5000", "limit", median, R.BARS["web.board_5000"], "s",
                     f"{TASKS:,} tasks painted", n=len(a),
                     detail=f"n={len(a)}, IQR {R.spread(a):.0%}; {SMALL} tasks: {R.fmt_s(statistics.median(b))}")
    small_row = R.Result("web.board_30", "limit", statistics.median(b), R.BARS["web.board_30"], "s",
                         f"{SMALL} tasks painted", n=len(b), detail=f"n={len(b)}, IQR {R.spread(b):.0%}")
    live_row = R.Result("web.live", "limit", statistics.median(live), R.BARS["web.live"], "s",
                        "a task added elsewhere shown", n=len(live), detail=f"n={len(live)}, IQR {R.spread(live):.0%}")
    ratio = R.ratio("web.board_ratio", f"{TASKS:,} tasks", a, f"{SMALL} tasks", b, info=True)
    return [limit, small_row, ratio, live_row]


def live_seconds(ctx: R.Context, browser: Any, repo: Path, url: str, rounds: int) -> list[float]:
    """Each round: `wb task add` in another process, then the time until the open page shows one more card."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-renders]")
    out = []
    try:
        for _ in range(rounds):
            cards = page.locator("#board .card").count()
            ctx.runner.run([ctx.wb, "task", "add", "arrives live"], repo)
            start = time.perf_counter()
            while page.locator("#board .card").count() == cards:
                if time.perf_counter() - start > 30:
                    raise R.BenchError("a task added did not reach the open page in 30 s")
                page.wait_for_timeout(5)
            out.append(time.perf_counter() - start)
    finally:
        context.close()
    return out
