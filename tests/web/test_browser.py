"""`wb serve` in a real headless Chromium (the `browser` tier: tools/browser.sh installs Chromium and
Playwright; without them each test skips, saying why). Playwright drives the system Chromium through its
`executable_path`: its own browser download comes from a CDN this machine cannot reach, and Playwright's
waiting and DOM queries beat a hand-written DevTools-protocol client."""

from __future__ import annotations

import pytest

from tests.damage import read_board, write_board

from .conftest import Served, wait_until, yielding_session

pytestmark = pytest.mark.browser

HOSTILE = ("<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"
           "\x1b[8mhidden\x1b[0m \u202etxt.exe")


def board_ids(page: object) -> list[str]:
    return page.eval_on_selector_all("#board .card", "cards => cards.map(c => c.dataset.id)")  # type: ignore[attr-defined]


def test_the_seeded_board_is_shown_with_ready_and_dependencies(served: Served, page: object) -> None:
    page.goto(served.url)  # type: ignore[attr-defined]
    page.wait_for_selector("#board .card")  # type: ignore[attr-defined]
    assert sorted(board_ids(page)) == ["T-001", "T-002", "T-003"]
    ready = page.eval_on_selector_all("#board .card.ready", "c => c.map(x => x.dataset.id)")  # type: ignore[attr-defined]
    assert sorted(ready) == ["T-001", "T-002"]
    waiting = page.text_content('#board .card[data-id="T-003"]')  # type: ignore[attr-defined]
    assert "waits T-001" in waiting and "depends on T-001" in waiting
    page.goto(served.url + "#graph")  # type: ignore[attr-defined]
    page.wait_for_selector("#graph g.node")  # type: ignore[attr-defined]
    assert page.locator("#graph g.node").count() == 3 and page.locator("#graph path.edge").count() == 1  # type: ignore[attr-defined]
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_task_added_by_wb_task_add_appears_without_a_reload(served: Served, page: object) -> None:
    page.goto(served.url)  # type: ignore[attr-defined]
    page.wait_for_selector("#board .card")  # type: ignore[attr-defined]
    page.evaluate("window.__same_page = true")  # type: ignore[attr-defined]
    served.wb("task", "add", "Arrives while the page is open")
    page.wait_for_selector('#board .card[data-id="T-004"]', timeout=10_000)  # type: ignore[attr-defined]
    assert "Arrives while the page is open" in page.text_content('#board .card[data-id="T-004"]')  # type: ignore[attr-defined]
    assert page.evaluate("window.__same_page") is True, "the page reloaded"  # type: ignore[attr-defined]


def test_a_session_timeline_shows_its_yields(served: Served, page: object) -> None:
    session = yielding_session(served.repo)
    page.goto(served.url + "#sessions")  # type: ignore[attr-defined]
    page.wait_for_selector("#timeline li.yield")  # type: ignore[attr-defined]
    assert session in page.text_content("#sessions")  # type: ignore[attr-defined]
    yields = page.locator("#timeline li.yield")  # type: ignore[attr-defined]
    assert yields.count() == 2
    assert "answered by agent" in yields.nth(0).text_content()
    assert "waiting for an answer" in yields.nth(1).text_content()
    assert "tool_calls 2" in page.text_content("#timeline-view .budget")  # type: ignore[attr-defined]


def test_a_hostile_title_is_shown_as_text_and_nothing_runs(served: Served, page: object) -> None:
    served.wb("task", "add", HOSTILE)
    page.goto(served.url)  # type: ignore[attr-defined]
    page.wait_for_selector('#board .card[data-id="T-004"]')  # type: ignore[attr-defined]
    page.wait_for_timeout(300)  # type: ignore[attr-defined]  # an img's onerror would have fired by now
    shown = page.text_content('#board .card[data-id="T-004"] .title')  # type: ignore[attr-defined]
    assert shown.startswith("<script>window.__pwned = 1</script><img src=x"), shown
    assert "\\e[8mhidden" in shown and "\\u202etxt.exe" in shown and "\u202e" not in shown
    assert page.evaluate("window.__pwned") is None  # type: ignore[attr-defined]
    assert page.locator("#main script, #main img").count() == 0  # type: ignore[attr-defined]
    for tab in ("graph", "events"):
        page.goto(served.url + "#" + tab)  # type: ignore[attr-defined]
        page.wait_for_selector(f"body[data-tab={tab}]")  # type: ignore[attr-defined]
        page.wait_for_timeout(200)  # type: ignore[attr-defined]
        assert page.evaluate("window.__pwned") is None, tab  # type: ignore[attr-defined]
    assert page.errors == []  # type: ignore[attr-defined]


def test_an_invalid_workbench_shows_a_banner_over_the_last_good_board(served: Served, page: object) -> None:
    page.goto(served.url)  # type: ignore[attr-defined]
    page.wait_for_selector("#board .card")  # type: ignore[attr-defined]
    # a tear before the stream says `live` is a change too (the stream starts from the page's first read:
    # test_serve.py's test_a_write_between_the_pages_read_and_its_stream_still_reaches_the_page); this test tears
    # the board both ways, after it and (below, the repair) at any time
    saved = read_board(served.repo)
    write_board(served.repo, b'{"schema_version": 2, "tasks": [')  # torn by hand (board.json, or its row)
    page.wait_for_selector("#banner:not([hidden])", timeout=10_000)  # type: ignore[attr-defined]
    assert sorted(board_ids(page)) == ["T-001", "T-002", "T-003"], "the last good board stays"
    # and the banner stays while the board is torn: an answer that reads no workbench (/api/act, read after the
    # board and the inbox) does not say it is readable again (it hid the banner a moment after it showed)
    page.wait_for_timeout(1_500)  # type: ignore[attr-defined]
    assert page.is_visible("#banner"), "the banner went away while board.json is still torn"  # type: ignore[attr-defined]
    write_board(served.repo, saved)
    page.wait_for_selector("#banner[hidden]", state="attached", timeout=10_000)  # type: ignore[attr-defined]
    assert wait_until(lambda: len(board_ids(page)) == 3)


def test_the_diff_decisions_and_event_tabs(served: Served, page: object) -> None:
    page.goto(served.url + "#diff")  # type: ignore[attr-defined]
    page.wait_for_selector("body[data-tab=diff] #diff")  # type: ignore[attr-defined]
    page.fill("input[name=a]", "@3")  # type: ignore[attr-defined]  # points in the log: either backend
    page.fill("input[name=b]", "@4")  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_selector("#diff-summary li.added")  # type: ignore[attr-defined]
    assert "added T-003 Ship it [todo]" in page.text_content("#diff-summary")  # type: ignore[attr-defined]
    served.wb("note", "chose <b>SQLite</b>")
    page.goto(served.url + "#decisions")  # type: ignore[attr-defined]
    page.wait_for_selector("#decisions .entry")  # type: ignore[attr-defined]
    assert "chose <b>SQLite</b>" in page.text_content("#decisions .entry")  # type: ignore[attr-defined]
    page.goto(served.url + "#events")  # type: ignore[attr-defined]
    page.wait_for_selector("#events tbody tr")  # type: ignore[attr-defined]
    page.fill("input[name=type]", "task.add")  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    assert wait_until(lambda: page.locator("#events tbody tr").count() == 3)  # type: ignore[attr-defined]
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_live_refresh_keeps_what_is_being_typed(served: Served, page: object) -> None:
    page.goto(served.url + "#events")  # type: ignore[attr-defined]
    page.wait_for_selector("#events tbody tr")  # type: ignore[attr-defined]
    page.fill("input[name=type]", "task.a")  # type: ignore[attr-defined]  # not submitted yet
    before = page.locator("#events tbody tr").count()  # type: ignore[attr-defined]
    served.wb("note", "arrives while typing")
    assert wait_until(lambda: page.locator("#events tbody tr").count() == before + 1)  # type: ignore[attr-defined]
    assert page.input_value("input[name=type]") == "task.a"  # type: ignore[attr-defined]
    assert page.evaluate("() => document.activeElement.name") == "type"  # type: ignore[attr-defined]


def test_a_card_opens_its_detail_and_history(served: Served, page: object) -> None:
    served.wb("task", "start", "T-001")
    page.goto(served.url)  # type: ignore[attr-defined]
    page.click('#board .card[data-id="T-001"]')  # type: ignore[attr-defined]
    page.wait_for_selector("#drawer #task-history tr")  # type: ignore[attr-defined]
    history = page.text_content("#task-history")  # type: ignore[attr-defined]
    assert "task.add" in history and "task.start" in history, history
    assert "Write the parser" in page.text_content("#drawer h2")  # type: ignore[attr-defined]
