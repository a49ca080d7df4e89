"""Regenerate the pictures in docs/views.md from a seeded demo workbench: `python tools/screenshots.py [tui|web]`
(default: every part). Each view is one function below that takes the demo repository and writes its picture
under docs/views/; a new view adds its function to PARTS.

- tui: `wb board` at 80×24, through textual's own screenshot (docs/views/board.svg).
- web: `wb serve`'s board and a session's timeline in headless Chromium, through Playwright
  (docs/views/web-board.png, web-graph.png, web-session.png, web-detail.png: a task's drawer, web-dark.png:
  the system's dark setting, web-phone.png: 390 px wide, web-table.png: the table of all tasks sorted by
  priority, web-palette.png: the Ctrl+K palette finding a task; tools/browser.sh installs both).
- act: `wb serve --act`'s page with a yield waiting for approval (docs/views/web-act.png), in a demo workbench
  of its own. The server is made in this process with `act=True`, as cli/serve.py makes it once a person has
  confirmed at the terminal: the person gate guards the command, and this tool runs no command — it opens the
  one-time link itself and clicks nothing, so no write is made.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VIEWS = ROOT / "docs" / "views"


def seed(repo: Path) -> None:
    """A small board with every marker the views show: ready, waiting, in progress, blocked, forced done."""
    from workbench.api import Bench, init

    env = {"GIT_AUTHOR_NAME": "Demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
           "GIT_COMMITTER_NAME": "Demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid"}
    import os

    os.environ.update(env)
    repo.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("# demo\n")
    subprocess.run(["git", "-C", str(repo), "add", "README.md"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "initial commit"], check=True)
    init(repo)
    bench = Bench.open(repo)
    bench.add_task("Write the parser", acceptance=["true"])
    bench.add_task("Parse nested lists", depends_on=["T-001"])
    bench.add_task("Document the grammar")
    bench.add_task("Benchmark the tokenizer", owner="human")
    bench.add_task("Review the parser", kind="review", reviews="T-001")
    bench.add_task("Fix the CI cache")
    bench.start_task("T-001")
    bench.start_task("T-006")
    bench.block_task("T-006", "waiting for the runner image")
    bench.add_task("Set up the repository", acceptance=["true"])
    bench.done_task("T-007")
    bench.add_task("Epic: the parser", acceptance=[])  # T-008: an epic, its children T-001 and T-002
    for task_id, fields in (("T-001", {"labels": ["parser", "core"], "priority": 1, "assignee": "ana",
                                       "parent": "T-008"}),
                            ("T-002", {"labels": ["parser"], "priority": 2, "parent": "T-008"}),
                            ("T-003", {"labels": ["docs"], "priority": 3, "assignee": "bo"}),
                            ("T-006", {"labels": ["ci"], "priority": 0})):
        bench.set_task(task_id, fields)


def tui(repo: Path) -> Path:
    """`wb board` at 80×24, as textual draws it."""
    from workbench.api import Bench
    from workbench.cli.board_app import BoardApp

    out = VIEWS / "board.svg"

    async def shoot() -> None:
        app = BoardApp(Bench.open(repo))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            app.save_screenshot(filename=out.name, path=str(out.parent))

    asyncio.run(shoot())
    return out


def web(repo: Path) -> Path:
    """`wb serve` in headless Chromium at 1280×720: the board, and a harness session that yielded twice (one
    answered) as its timeline."""
    import os
    import shutil
    import threading

    from playwright.sync_api import sync_playwright

    from workbench.api import Bench
    from workbench.web.server import WebServer

    bench = Bench.open(repo)
    bench.run("Release the parser", steps=[{"description": "run the test suite", "tool": "tests"},
                                           {"description": "publish the package", "tool": "publish"}])
    bench.resume(result={"passed": 42, "failed": 0})
    server = WebServer(Bench.open(repo))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    chromium = os.environ.get("WB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    board, session, graph = VIEWS / "web-board.png", VIEWS / "web-session.png", VIEWS / "web-graph.png"
    detail, dark, phone = VIEWS / "web-detail.png", VIEWS / "web-dark.png", VIEWS / "web-phone.png"
    table, palette = VIEWS / "web-table.png", VIEWS / "web-palette.png"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(server.url)
            page.wait_for_selector("#board .card")
            page.screenshot(path=str(board))
            page.set_viewport_size({"width": 900, "height": 360})
            page.goto(server.url + "#graph")
            page.wait_for_selector("#graph g.node")
            page.screenshot(path=str(graph))
            page.set_viewport_size({"width": 1280, "height": 720})
            page.goto(server.url + "#sessions")
            page.wait_for_selector("#timeline li.yield")
            page.screenshot(path=str(session))
            page.goto(server.url)
            page.click('#board .card[data-id="T-001"]')
            page.wait_for_selector("#drawer #task-history tr")
            page.screenshot(path=str(detail))
            page.keyboard.press("Escape")
            page.emulate_media(color_scheme="dark")
            page.wait_for_timeout(200)
            page.screenshot(path=str(dark))
            page.emulate_media(color_scheme="light")
            page.set_viewport_size({"width": 390, "height": 844})
            page.wait_for_timeout(200)
            page.screenshot(path=str(phone))
            page.set_viewport_size({"width": 1280, "height": 560})
            page.goto(server.url + "#table")
            page.wait_for_selector("#inbox h2")  # the inbox fills in just after the table
            page.click('#tasks-table button[data-sort="priority"]')
            page.wait_for_selector("#tasks-table th[aria-sort=ascending]")
            page.screenshot(path=str(table))
            page.goto(server.url)
            page.wait_for_selector("#inbox h2")
            page.keyboard.press("Control+k")
            page.wait_for_selector("#palette[open]")
            page.keyboard.type("parser")
            page.wait_for_selector("#palette-list [role=option][aria-selected=true]")
            page.keyboard.press("ArrowDown")
            page.screenshot(path=str(palette))
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return board


def act(repo: Path) -> Path:
    """`wb serve --act` in headless Chromium at 1280×720: the inbox with a yield waiting for approval and its
    approve and deny buttons, the form to add a task (a demo workbench of its own beside `repo`)."""
    import os
    import shutil
    import threading

    from playwright.sync_api import sync_playwright

    from workbench.api import Bench
    from workbench.web.server import WebServer

    own = repo.parent / "act"
    seed(own)
    Bench.open(own).run("Ship the parser", steps=[{"description": "deploy to production", "tool": "deploy",
                                                   "mode": "mutating"}])
    server = WebServer(Bench.open(own), act=True)  # as cli/serve.py does once a person confirmed
    assert server.acting is not None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    chromium = os.environ.get("WB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    out = VIEWS / "web-act.png"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(server.url + "act?token=" + server.acting.token)  # the one-time link: a session, then /
            page.wait_for_selector("#act-approve")
            page.screenshot(path=str(out))
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return out


PARTS: dict[str, Callable[[Path], Path]] = {"tui": tui, "web": web, "act": act}


def main(argv: list[str]) -> int:
    wanted = argv or list(PARTS)
    unknown = [w for w in wanted if w not in PARTS]
    if unknown:
        sys.stderr.write(f"screenshots: unknown part {', '.join(unknown)} (one of {', '.join(PARTS)})\n")
        return 2
    VIEWS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "demo"
        seed(repo)
        for name in wanted:
            print(f"{name}: {PARTS[name](repo).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
