"""`wb board`'s keys as a person finds them (issue 32), through textual's pilot: every key in the footer, `?`
and F1 open a shortcuts overlay, `/` searches, two arrow presses arriving in one terminal write move two
columns, the To-do heading visible at start, and the detail shows every field formatted (acceptance
commands, labels as text, never a Python list)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("textual")

from .test_board import _app, _cards, _seed  # noqa: E402


def _send_at_once(app: Any, *keys: str) -> None:
    """Keys queued together, as a terminal delivers the bytes of one write: none is handled before the next
    arrives (pilot.press waits for the app to go idle between keys, which hides a lost key press)."""
    from textual import events

    for key in keys:
        event = events.Key(key, None)
        event.set_sender(app)
        app._driver.send_message(event)


def test_every_key_is_in_the_footer_at_80_columns(bench: Any, repo: Any) -> None:
    _seed(bench)

    async def drive() -> None:
        from textual.widgets._footer import FooterKey

        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            keys = list(app.screen.query(FooterKey))
            shown = {k.key_display for k in keys}
            for want in ("q", "⏎", "h", "/", "f", "c", "r", "?", "←→", "↑↓"):  # ⏎: enter
                assert any(want == s or want in s for s in shown), (want, shown)
            assert all(k.region.right <= 80 and k.region.width > 0 for k in keys), \
                [(k.key_display, k.region) for k in keys]

    asyncio.run(drive())


@pytest.mark.parametrize("key", ["question_mark", "f1"])
def test_question_mark_and_f1_open_the_shortcuts(bench: Any, repo: Any, key: str) -> None:
    _seed(bench)

    async def drive() -> None:
        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press(key)
            await pilot.pause()
            text = str(app.screen.query_one("#shortcuts").render())
            for want in ("search", "filter", "history", "columns", "cards", "quit", "Escape"):
                assert want in text, (want, text)
            await pilot.press("escape")
            await pilot.pause()
            assert not app.screen.query("#shortcuts")

    asyncio.run(drive())


def test_slash_searches_titles_ids_and_labels(bench: Any, repo: Any) -> None:
    _seed(bench)

    async def drive() -> None:
        from textual.widgets import Input

        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("slash")
            await pilot.pause()
            app.screen.query_one(Input).value = "tests"
            await pilot.press("enter")
            await pilot.pause()
            assert [c.card["id"] for c in app.query("Card")] == ["T-002"]
            assert "search: tests" in str(app.query_one("#status-line").render())
            await pilot.press("slash")
            await pilot.pause()
            app.screen.query_one(Input).value = ""
            await pilot.press("enter")
            await pilot.pause()
            assert len(app.query("Card")) == 3

    asyncio.run(drive())


def test_two_arrow_presses_in_one_write_move_two_columns(bench: Any, repo: Any) -> None:
    _seed(bench)
    bench.add_task("Blocked one")
    bench.block_task("T-004", reason="waiting")

    async def drive() -> None:
        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.focused.id == "list-todo"
            _send_at_once(app, "right", "right")
            await pilot.pause()
            await pilot.pause()
            assert app.focused.id == "list-blocked", app.focused.id

    asyncio.run(drive())


def test_the_todo_heading_is_visible_at_start(bench: Any, repo: Any) -> None:
    for i in range(30):
        bench.add_task(f"task {i}")

    async def drive() -> None:
        app = _app(repo)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            head = app.query_one("#head-todo")
            column = app.query_one("#col-todo")
            assert head.region.height == 1 and head.region.y >= column.region.y, (head.region, column.region)
            assert app.screen.get_widget_at(head.region.x + 1, head.region.y)[0] is head
            assert len(_cards(app, "todo")) == 30

    asyncio.run(drive())


def test_the_detail_shows_every_field_formatted(bench: Any, repo: Any) -> None:
    bench.add_task("Parse the config", acceptance=["pytest -q tests/test_config.py", "ruff check src"])
    bench.set_task("T-001", {"labels": ["config", "parser"], "priority": 1, "assignee": "ana"})

    async def drive() -> None:
        app = _app(repo)
        async with app.run_test(size=(80, 40)) as pilot:
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            shown = str(app.screen.query_one("#detail").render())
            assert "pytest -q tests/test_config.py" in shown and "ruff check src" in shown, shown
            assert "config, parser" in shown and "['" not in shown and "{'" not in shown, shown
            assert "created" in shown and "ana" in shown

    asyncio.run(drive())
