"""`wb board`: the terminal kanban, driven through textual's pilot (`App.run_test`), its static print off a
terminal and its JSON — read-only, on the library's own read path."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.damage import write_board

pytest.importorskip("textual")

HOSTILE = "Evil [red]x[/] <script>alert(1)</script> \x1b[31mred \u202egnp.exe"


def _app(repo: Any, **kw: Any) -> Any:
    from workbench.api import Bench
    from workbench.cli.board_app import BoardApp

    return BoardApp(Bench.open(repo), poll=0.05, **kw)


def _cards(app: Any, status: str) -> list[str]:
    from textual.widgets import ListView

    return [c.card["id"] for c in app.query_one(f"#list-{status}", ListView).children]


def _seed(bench: Any) -> None:
    bench.add_task("Write the parser", acceptance=["true"])
    bench.add_task("Write the tests", depends_on=["T-001"])
    bench.add_task("Ready one")
    bench.start_task("T-001")


def test_the_board_shows_the_seeded_tasks_and_a_task_a_real_wb_task_add_writes_without_restart(bench, repo, wb,
                                                                                              wb_hashes):
    _seed(bench)
    files = wb_hashes(repo)

    async def drive() -> None:
        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert _cards(app, "todo") == ["T-002", "T-003"] and _cards(app, "in_progress") == ["T-001"]
            ready = {c.card["id"]: c.card["ready"] for c in app.query("Card")}
            assert ready == {"T-001": False, "T-002": False, "T-003": True}
            assert wb_hashes(repo) == files  # read-only
            r = wb(repo, "task", "add", "Added from outside", process=True)
            assert r.returncode == 0, r.stderr
            for _ in range(100):
                await pilot.pause(0.05)
                if "T-004" in _cards(app, "todo"):
                    break
            assert _cards(app, "todo") == ["T-002", "T-003", "T-004"]

    asyncio.run(drive())


def test_the_detail_key_shows_the_task_and_its_history(bench, repo):
    _seed(bench)

    async def drive() -> None:
        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("right")  # the in-progress column
            await pilot.press("h")
            await pilot.pause()
            history = str(app.screen.query_one("#history").render())
            assert "task.add" in history and "task.start" in history and "T-001" in history
            assert "T-002" not in history  # only the events that name T-001
            await pilot.press("escape")
            await pilot.press("enter")
            await pilot.pause()
            assert "Write the parser" in str(app.screen.query_one("#detail").render())

    asyncio.run(drive())


def test_filters_by_owner_status_and_label(bench, repo):
    _seed(bench)
    bench.add_task("Human chore", owner="human")

    from textual.widgets import Input

    async def drive() -> None:
        app = _app(repo, owner="human")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert [c.card["id"] for c in app.query("Card")] == ["T-004"]
            for text, shown in (("status=in_progress", ["T-001"]), ("label=nosuch", [])):
                await pilot.press("f")
                await pilot.pause()
                app.screen.query_one(Input).value = text
                await pilot.press("enter")
                await pilot.pause()
                assert [c.card["id"] for c in app.query("Card")] == shown, text
                assert app.query_one("#col-todo").display is not text.startswith("status=")  # one column
            await pilot.press("c")
            await pilot.pause()
            assert len(app.query("Card")) == 4

    asyncio.run(drive())


def test_a_hostile_title_is_shown_as_text(bench, repo):
    bench.add_task(HOSTILE)

    async def drive() -> None:
        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            shown = str(app.screen.query_one("#detail").render())
            assert "[red]x[/]" in shown and "<script>" in shown
            assert "\\e[31m" in shown and "\\u202e" in shown
            assert "\x1b" not in shown and "\u202e" not in shown

    asyncio.run(drive())


def test_static_print_and_json_off_a_terminal(bench, repo, wb):
    _seed(bench)
    bench.add_task(HOSTILE)
    r = wb(repo, "board")  # stdout is a pipe: the static print
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:3] == ["TODO (3)",  # issue 31: every card's priority, the default one too
                                         "  T-002  builder  Write the tests  [waits T-001 (in_progress); p2]",
                                         "  T-003  builder  Ready one  [ready; p2]"]
    assert "\x1b" not in r.stdout and "\\e[31m" in r.stdout and "[red]x[/]" in r.stdout
    data = json.loads(wb(repo, "board", "--json", "--status", "todo").stdout)
    assert [c["status"] for c in data["columns"]] == ["todo"]
    assert [(t["id"], t["ready"]) for t in data["columns"][0]["tasks"]] == [
        ("T-002", False), ("T-003", True), ("T-004", True)]
    assert wb(repo, "board", "--status", "finished").returncode == 2


def test_an_invalid_workbench_keeps_the_last_board_and_says_why_and_80x24_draws_every_column(bench, repo):
    _seed(bench)

    async def drive() -> None:
        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            svg = app.export_screenshot()
            for heading in ("TODO", "IN PROGRESS", "BLOCKED", "DONE", "CANCELLED"):
                assert heading.replace(" ", "&#160;") in svg or heading in svg, heading
            write_board(repo, b'{"tasks": [\n')  # a hand edit half saved (board.json, or its row in SQLite)
            for _ in range(100):
                await pilot.pause(0.05)
                if "not refreshed" in str(app.query_one("#status-line").render()):
                    break
            assert "board.json" in str(app.query_one("#status-line").render())
            assert _cards(app, "todo") == ["T-002", "T-003"]  # what it last read

    asyncio.run(drive())


def test_only_the_live_board_imports_textual(bench, repo):
    from tests.cli.test_startup import run_probe

    bench.add_task("Write the parser")
    for argv in (["board", "--json"], ["board"], ["--help"]):
        proc, modules = run_probe(repo, *argv)
        assert proc.returncode == 0, proc.stderr
        assert not any(m.split(".")[0] == "textual" for m in modules), argv
