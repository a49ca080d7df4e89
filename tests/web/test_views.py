"""`wb serve` as a person reviewing an agent's work uses it (issue 32), in a real headless Chromium: nothing
bare (`null`, `undefined`, `0:` trees) on any tab, a task's detail in a drawer where the person is (a close
button, Escape), the handoff as a report, links between tasks, diffs and decisions as people read them, no
sideways scroll at a phone's 390 px, dark from the system setting, axe-core clean, cards that say who and
what, filters and search that stay quick at 2,000 tasks, and the inbox of what waits for a person."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_BACKEND, run_git

from .conftest import Served, start_serve, stop_serve, wait_until, yielding_session

pytestmark = pytest.mark.browser

TABS = ("board", "table", "graph", "sessions", "decisions", "handoff", "diff", "events")
BARE = re.compile(r"\bnull\b|\bundefined\b|\bNaN\b|\[object Object\]|(?:^|\s)\d+: ")


def axe_source() -> str | None:
    """axe-core's script, as tools/browser.sh installs it with npm (the test tier's own copy)."""
    import os

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = cache / "wb-browser" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
    return path.read_text(encoding="utf-8") if path.is_file() else None


AXE = axe_source()  # read at import, before the suite's isolated HOME is in place


def show(page: Any, served: Served, tab: str) -> None:
    page.goto(served.url + "#" + tab)
    page.wait_for_selector(f"body[data-tab={tab}]")
    page.wait_for_function("() => !document.querySelector('#main > p.muted')?.textContent.startsWith('loading')")


def main_text(page: Any) -> str:
    text: str = page.inner_text("body")
    return text


def diff_of(page: Any, ref: str) -> None:
    """Wait for the diff from `ref` (a render of the tab begun before the submit may land first)."""
    page.wait_for_function("ref => (document.querySelector('#diff h2')?.textContent || '').startsWith(ref)",
                           arg=ref)


def rich_workbench(served: Served) -> None:
    """Tasks with every field a card shows, a dependency, an epic with children, a decision about a file, a
    handoff, and a change to diff."""
    path = served.repo / "more.json"
    for tasks in ([{"title": "Epic: the parser", "labels": ["parser"], "priority": 1}],
                  [{"title": "Tokenizer", "labels": ["parser", "core"], "priority": 0, "assignee": "ana",
                    "parent": "T-004", "acceptance": ["python -c 'pass'"]}],
                  [{"title": "Grammar", "parent": "T-004", "depends_on": ["T-005"], "assignee": "bo"}]):
        path.write_text(json.dumps(tasks))
        served.wb("task", "import", str(path))
    (served.repo / "src").mkdir()
    (served.repo / "src" / "config.py").write_text("x = 1\n")
    run_git(served.repo, "add", "src")
    run_git(served.repo, "commit", "-q", "-m", "config")
    served.wb("note", "Chose **TOML** over YAML for `config`; see T-005.", "--about", "src/config.py")
    served.wb("task", "set", "T-002", "priority=1")
    served.wb("handoff")


def test_no_bare_null_undefined_or_index_trees_on_any_tab(served: Served, page: Any) -> None:
    rich_workbench(served)
    session = yielding_session(served.repo)
    assert session
    for tab in TABS:
        show(page, served, tab)
        page.wait_for_timeout(150)
        text = main_text(page)
        assert not BARE.search(text), (tab, BARE.search(text), text[:2000])
    show(page, served, "diff")
    page.fill("input[name=a]", "@-6")  # a point in the log: the same words on either backend
    page.click("#main button[type=submit]")
    diff_of(page, "@-6")
    assert not BARE.search(page.inner_text("#diff-summary")), page.inner_text("#diff-summary")
    assert page.errors == []


def test_the_board_has_no_stray_null_above_the_columns(served: Served, page: Any) -> None:
    page.goto(served.url)
    page.wait_for_selector("#board .card")
    page.click('#board .card[data-id="T-001"]')
    page.wait_for_selector("#drawer:not([hidden]) h2")
    page.keyboard.press("Escape")
    page.wait_for_timeout(100)
    texts = page.evaluate("() => [...document.getElementById('main').childNodes]"
                          ".filter(n => n.nodeType === 3).map(n => n.textContent)")
    assert [t for t in texts if t.strip()] == []


def test_a_card_opens_a_drawer_where_the_person_is_and_escape_closes_it(served: Served, page: Any) -> None:
    path = served.repo / "many.json"
    path.write_text(json.dumps([{"title": f"task {i}"} for i in range(40)]))
    served.wb("task", "import", str(path))
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(served.url)
    card = page.locator('#board .card[data-id="T-040"]')
    card.scroll_into_view_if_needed()
    card.click()
    drawer = page.locator("#drawer")
    drawer.wait_for(state="visible")
    box = drawer.bounding_box()
    assert box["y"] >= 0 and box["y"] < 800 and box["height"] > 300, box  # on screen, not above the columns
    assert "T-040" in page.inner_text("#drawer h2")
    assert page.evaluate("() => document.activeElement.id") == "drawer-close"
    page.keyboard.press("Escape")
    drawer.wait_for(state="hidden")
    assert page.evaluate("() => document.activeElement.dataset.id") == "T-040", "focus goes back to the card"
    card_box = card.bounding_box()
    assert 0 <= card_box["y"] < 800, card_box  # the card stayed where the person was
    card.press("Enter")
    drawer.wait_for(state="visible")
    page.click("#drawer-close")
    drawer.wait_for(state="hidden")
    assert page.errors == []


def test_the_detail_shows_every_field_and_dependencies_as_links(served: Served, page: Any) -> None:
    rich_workbench(served)
    page.goto(served.url)
    page.click('#board .card[data-id="T-006"]')
    page.wait_for_selector("#drawer #task-deps a")
    text = page.inner_text("#drawer")
    assert "T-005 (todo)" in text and "Part of" in text and "T-004" in text
    assert "depends_on" not in text and not BARE.search(text), text
    page.click('#drawer #task-deps a[data-task="T-005"]')
    page.wait_for_function("() => document.querySelector('#drawer h2').textContent.startsWith('T-005')")
    text = page.inner_text("#drawer")
    assert "python -c 'pass'" in text and "parser, core" in text and "['" not in text, text
    assert page.locator("#drawer #task-history tr").count() >= 1


def test_the_handoff_is_a_report(served: Served, page: Any) -> None:
    rich_workbench(served)
    show(page, served, "handoff")
    page.wait_for_selector("#handoff")
    for heading in ("Next action", "Risks", "Open tasks"):
        assert page.locator(f"#handoff h3:has-text('{heading}')").count() == 1, heading
    rows = page.locator("#handoff-tasks tbody tr")
    assert rows.count() >= 5
    assert page.locator("#handoff-tasks th").all_inner_texts() == ["task", "status", "title"]
    assert page.locator("#handoff .summary").inner_text().strip()


def test_decisions_are_rendered_and_the_diff_says_added_removed_changed(served: Served, page: Any) -> None:
    rich_workbench(served)
    show(page, served, "decisions")
    entry = page.locator("#decisions .entry").first
    text = entry.inner_text()
    assert "\\n" not in text and "**" not in text and "_About" not in text, text
    assert entry.locator("strong").inner_text() == "TOML" and entry.locator("code").count() >= 1
    assert entry.locator('a[data-task="T-005"]').count() == 1
    show(page, served, "diff")
    page.fill("input[name=a]", "@-2")  # before `wb task set T-002 priority=1` and the handoff
    page.click("#main button[type=submit]")
    diff_of(page, "@-2")
    text = page.inner_text("#diff-summary")
    assert "priority added: 1" in text and "undefined" not in text, text


def test_the_waits_line_reads_as_a_sentence(served: Served, page: Any) -> None:
    served.wb("task", "add", "Both", "--depends-on", "T-001", "--depends-on", "T-002")
    page.goto(served.url)
    page.wait_for_selector('#board .card[data-id="T-004"]')
    waits = page.inner_text('#board .card[data-id="T-004"] .waits')
    assert waits == "waits T-001 (todo), T-002 (todo)", waits


def test_no_sideways_scroll_at_a_phone_width_on_any_tab(served: Served, page: Any) -> None:
    rich_workbench(served)
    yielding_session(served.repo)
    served.wb("task", "add", "A title with a very long unbroken word " + "x" * 120)
    page.set_viewport_size({"width": 390, "height": 844})
    for tab in TABS:
        show(page, served, tab)
        page.wait_for_timeout(150)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, (tab, width)
    page.goto(served.url)
    page.click('#board .card[data-id="T-001"]')
    page.wait_for_selector("#drawer:not([hidden]) h2")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    box = page.locator("#drawer").bounding_box()
    assert box["x"] >= 0 and box["width"] <= 390


def test_dark_mode_follows_the_system_setting(served: Served, page: Any) -> None:
    page.emulate_media(color_scheme="dark")
    page.goto(served.url)
    page.wait_for_selector("#board .card")
    bg = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    card = page.evaluate("() => getComputedStyle(document.querySelector('.card')).backgroundColor")
    dark = [int(x) for x in re.findall(r"\d+", bg)[:3]]
    assert sum(dark) < 120 and card != "rgb(255, 255, 255)", (bg, card)
    page.emulate_media(color_scheme="light")
    bg = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert sum(int(x) for x in re.findall(r"\d+", bg)[:3]) > 600, bg


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_core_finds_no_serious_or_critical_violation(served: Served, page: Any, scheme: str) -> None:
    if AXE is None:
        pytest.skip("axe-core is not installed: run tools/browser.sh")
    rich_workbench(served)
    yielding_session(served.repo)
    page.emulate_media(color_scheme=scheme)
    found = {}
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for tab in TABS:
            show(page, served, tab)
            page.wait_for_timeout(150)
            page.evaluate(AXE)  # through the DevTools protocol: the page's CSP forbids an inline script
            result = page.evaluate(
                "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                ".filter(v => ['serious', 'critical'].includes(v.impact))"
                ".map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).slice(0, 3).join(' | '))")
            if result:
                found[(width, tab)] = result
        page.goto(served.url)
        page.click('#board .card[data-id="T-005"]')
        page.wait_for_selector("#drawer:not([hidden]) h2")
        page.evaluate(AXE)
        result = page.evaluate("async () => (await axe.run(document)).violations"
                               ".filter(v => ['serious', 'critical'].includes(v.impact)).map(v => v.id)")
        if result:
            found[(width, "drawer")] = result
    assert found == {}


def test_the_graph_draws_an_archived_done_dependency_as_met_not_missing(seeded: Path, page: Any) -> None:
    config = seeded / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + "archive: {keep: 0, chunk: 1}\n")
    if TEST_BACKEND == "files":  # on SQLite config.yaml is read from the work tree, not committed by wb
        run_git(seeded, "commit", "-q", "-am", "archive every finished task")
    served = start_serve(seeded)
    try:
        served.wb("task", "start", "T-001")
        served.wb("task", "done", "T-001")
        served.wb("task", "add", "After the archive")  # the next write archives T-001
        graph = served.api("/api/graph")["data"]
        assert "T-001" not in [n["id"] for n in graph["nodes"]]
        (edge,) = [e for e in graph["edges"] if e["to"] == "T-003"]
        assert edge["missing"] is False and edge["archived"] is True
        show(page, served, "graph")
        page.wait_for_selector("#graph path.edge", state="attached")
        assert page.locator("#graph path.edge.missing").count() == 0
        assert page.locator("#graph path.edge.archived").count() == 1
    finally:
        stop_serve(served)


def test_cards_show_priority_labels_assignee_parent_and_epic_progress(served: Served, page: Any) -> None:
    rich_workbench(served)
    served.wb("task", "start", "T-005")
    served.wb("task", "done", "T-005")
    page.goto(served.url)
    page.wait_for_selector('#board .card[data-id="T-005"]')
    card = page.locator('#board .card[data-id="T-005"]')
    assert card.locator(".badge").inner_text() == "P0"
    assert card.locator(".chip").all_inner_texts() == ["parser", "core"]
    assert card.locator(".assignee").inner_text() == "@ana" and card.locator(".parent").inner_text() == "in T-004"
    epic = page.locator('#board .card[data-id="T-004"]')
    assert epic.locator(".tag.epic").inner_text() == "epic 1/2"
    assert epic.locator(".progress").get_attribute("aria-label") == "1 of 2 children done"


def test_search_and_filters(served: Served, page: Any) -> None:
    rich_workbench(served)
    page.goto(served.url)
    page.wait_for_selector("#board .card")
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "search"
    page.keyboard.type("grammar")
    assert wait_until(lambda: page.eval_on_selector_all("#board .card", "c => c.map(x => x.dataset.id)") == ["T-006"])
    page.fill("#search", "")
    page.select_option("select[name=label]", "core")
    assert wait_until(lambda: page.eval_on_selector_all("#board .card", "c => c.map(x => x.dataset.id)") == ["T-005"])
    page.select_option("select[name=label]", "")
    page.select_option("select[name=epic]", "T-004")
    assert wait_until(lambda: sorted(page.eval_on_selector_all("#board .card", "c => c.map(x => x.dataset.id)"))
                      == ["T-004", "T-005", "T-006"])
    page.select_option("select[name=epic]", "")
    page.select_option("select[name=assignee]", "bo")
    assert wait_until(lambda: page.eval_on_selector_all("#board .card", "c => c.map(x => x.dataset.id)") == ["T-006"])
    page.select_option("select[name=assignee]", "")
    page.select_option("select[name=priority]", "0")
    assert wait_until(lambda: page.eval_on_selector_all("#board .card", "c => c.map(x => x.dataset.id)") == ["T-005"])


def import_two_thousand(served: Served) -> None:
    """2,000 tasks by one `wb task import`: labels of 9 kinds, priorities 0–4, 7 assignees (the big-board tests)."""
    tasks = [{"title": f"task number {i}", "labels": [f"l{i % 9}"], "priority": i % 5, "assignee": f"a{i % 7}"}
             for i in range(2000)]
    path = served.repo / "big.json"
    path.write_text(json.dumps(tasks))
    served.wb("task", "import", str(path))


def test_two_thousand_tasks_stay_usable_and_filter_fast(served: Served, page: Any) -> None:
    import_two_thousand(served)
    started = time.monotonic()
    page.goto(served.url)
    page.wait_for_selector("#board .card")
    loaded = time.monotonic() - started
    assert page.locator("#board .card").count() <= 5 * 50, "a column shows a window of its cards"
    assert "2003 of 2003 task(s)" in page.inner_text("#total")
    heading = page.inner_text('#board .column[data-status="todo"] h2')
    assert heading == "TODO (2003)", heading
    before = page.evaluate("() => Number(document.body.dataset.filtered)")
    took = page.evaluate("""async () => {
        const t0 = performance.now();
        const select = document.querySelector('select[name=label]');
        select.value = 'l3';
        select.dispatchEvent(new Event('change', {bubbles: true}));
        return performance.now() - t0; }""")
    assert page.evaluate("() => Number(document.body.dataset.filtered)") == before + 1
    assert "222 of 2003" in page.inner_text("#total"), page.inner_text("#total")
    assert took < 300, f"a label filter over 2,003 tasks took {took:.0f} ms"
    page.click('button[data-more="todo"]')
    assert page.locator('#board .column[data-status="todo"] .card').count() == 222
    assert loaded < 10, loaded
    assert page.errors == []


def test_the_inbox_leads_the_landing_page_with_exact_commands(served: Served, page: Any) -> None:
    page.goto(served.url)
    page.wait_for_selector("#inbox")  # filled just after the board: wait for its text, not for the element
    page.wait_for_function("() => document.querySelector('#inbox').innerText.includes('Nothing waits for a person')")
    yielding_session(served.repo)
    page.reload()
    page.wait_for_selector("#inbox li")
    items = page.locator("#inbox li")
    kinds = [items.nth(i).get_attribute("data-kind") for i in range(items.count())]
    assert "yield" in kinds, kinds
    assert page.locator('#inbox li[data-kind="yield"] code.cmd').inner_text().startswith("wb resume")
    box = page.locator("#inbox").bounding_box()
    columns = page.locator("#board").bounding_box()
    assert box["y"] < columns["y"] and box["y"] < page.locator("form.filters").bounding_box()["y"]


def test_the_cards_take_the_arrow_keys(served: Served, page: Any) -> None:
    served.wb("task", "start", "T-002")
    page.goto(served.url)
    page.wait_for_selector("#board .card")
    page.focus('#board .card[data-id="T-001"]')
    page.keyboard.press("ArrowDown")
    assert page.evaluate("() => document.activeElement.dataset.id") == "T-003"
    page.keyboard.press("ArrowRight")
    assert page.evaluate("() => document.activeElement.dataset.id") == "T-002"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowUp")
    assert page.evaluate("() => document.activeElement.dataset.id") == "T-001"
    page.keyboard.press("Enter")
    page.wait_for_selector("#drawer:not([hidden]) h2")


def test_hostile_text_stays_text_in_markdown_the_drawer_the_handoff_and_the_inbox(served: Served, page: Any) -> None:
    hostile = "<img src=x onerror=\"window.__pwned = 1\"><script>window.__pwned = 2</script>"
    served.wb("note", f"**{hostile}** and _{hostile}_ and `{hostile}`\n\n- {hostile}")
    served.wb("task", "add", hostile, "--depends-on", "T-001")
    served.wb("handoff")
    yielding_session(served.repo)
    page.goto(served.url)
    page.wait_for_selector('#board .card[data-id="T-004"]')
    page.click('#board .card[data-id="T-004"]')
    page.wait_for_selector("#drawer:not([hidden]) h2")
    assert hostile in page.inner_text("#drawer h2")
    for tab in ("decisions", "handoff", "board"):
        show(page, served, tab)
        page.wait_for_timeout(200)
    show(page, served, "decisions")
    assert hostile in page.inner_text("#decisions strong")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img, script:not([src])").count() == 0
    assert page.errors == []
