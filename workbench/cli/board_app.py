"""The live `wb board` (textual): a column per status, a card per task, a task's detail and history on a key,
filters, and a re-read whenever the workbench's files change (their stat polled twice a second; the read goes
through `Bench.board`, the library's own). Only `wb board` imports this module, and with it textual.

Every value from the workbench is shown as text: escaped (model/display.escape, via cli/output.shown) and
put in `rich.text.Text`, which textual never parses as markup, so `[red]x[/]` or an ANSI escape in a title
is what the board shows, never what it obeys.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, ListItem, ListView, Static

from workbench.cli import output
from workbench.errors import WorkbenchError
from workbench.ops.board import HEADINGS, marks, stamp, watched
from workbench.ops.status import STATUSES

POLL_SECONDS = 0.5


def _text(value: object) -> Text:
    return Text(output.shown(value), no_wrap=False)


class Card(ListItem):
    def __init__(self, card: dict[str, Any]) -> None:
        self.card = card
        line = Text()
        line.append(output.shown(card["id"]), style="bold")
        if card["ready"]:
            line.append(" ●", style="green")
        line.append(" " + output.shown(card["title"]))
        extra = [output.shown(m) for m in marks(card) if m != "ready"]
        if extra:
            line.append("\n" + "; ".join(extra), style="dim")
        super().__init__(Static(line))


class CardList(ListView):
    """A column's cards. Its own keys are named here so the footer shows them: a focused widget's bindings
    hide the app's for the same keys, so the app's arrows and enter never reached the footer."""

    BINDINGS = [
        Binding("left", "app.column(-1)", "col", key_display="←→"),
        Binding("right", "app.column(1)", "", show=False),
        Binding("up", "cursor_up", "card", key_display="↑↓"),
        Binding("down", "cursor_down", "", show=False),
        Binding("enter", "select_cursor", "open", key_display="⏎"),  # every key fits 80 columns
    ]


class Column(Vertical):
    # the heading stays put and the cards scroll under it: a column that scrolled as a whole scrolled its
    # heading out of view as soon as the focused card was brought into it
    DEFAULT_CSS = """
    Column { width: 1fr; border: round $panel; }
    Column > Label { text-style: bold; width: 100%; height: 1; }
    Column ListView { height: 1fr; }
    """

    def __init__(self, status: str) -> None:
        super().__init__(id=f"col-{status}")
        self.status = status

    def compose(self) -> ComposeResult:
        yield Label(HEADINGS[self.status], id=f"head-{self.status}")
        yield CardList(id=f"list-{self.status}")


# a task's fields in the order the detail shows them, each with its label; the rest follow under their own names
DETAIL = (("id", "id"), ("title", "title"), ("status", "status"), ("kind", "kind"), ("owner", "owner"),
          ("assignee", "assignee"), ("priority", "priority"), ("labels", "labels"), ("parent", "parent"),
          ("reviews", "reviews"), ("depends_on", "depends on"), ("waiting_on", "waits on"), ("claim", "claim"),
          ("blocked_reason", "blocked"), ("description", "description"), ("acceptance", "acceptance"),
          ("scope", "scope"), ("proof", "proof"), ("forced", "forced"), ("unproven", "not proven"),
          ("override", "override"), ("created_at", "created"), ("updated_at", "updated"))
SKIP = {"ready", "marks"}


def formatted(value: object) -> list[str]:
    """A field's value as lines a person reads: a list of texts joined by commas (a list of commands, or of
    objects, one a line), an object as `key: value` lines, never Python's repr."""
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value) and sum(len(str(v)) for v in value) < 60:
            return [", ".join(str(v) for v in value)]
        return [line for v in value for line in formatted(v)]
    if isinstance(value, dict):
        return [f"{k}: {'; '.join(formatted(v))}" for k, v in value.items() if v not in (None, [], "", {})]
    if value is True:
        return ["yes"]
    return [str(value)]


def detail_text(task: dict[str, Any]) -> Text:
    """Every field of the task (the board's card with the task as `wb task show` has it), formatted."""
    text = Text()
    labels = dict(DETAIL)
    keys = [k for k, _ in DETAIL] + [k for k in task if k not in labels and k not in SKIP]
    for key in keys:
        value = task.get(key)
        if value in (None, [], "", False, {}):
            continue
        lines = formatted(value)
        for i, line in enumerate(lines):
            text.append(f"{(labels.get(key, key.replace('_', ' ')) if i == 0 else ''):>14}  ", style="bold")
            text.append(output.shown(line) + "\n")
    return text


class DetailScreen(ModalScreen[None]):
    """A task's fields and the events that name it; escape or q closes it."""

    BINDINGS = [Binding("escape,q", "dismiss", "close")]
    DEFAULT_CSS = """
    DetailScreen { align: center middle; }
    DetailScreen > VerticalScroll { width: 95%; height: 90%; border: round $accent; background: $surface; }
    """

    def __init__(self, card: dict[str, Any], events: list[dict[str, Any]], *, history_first: bool) -> None:
        super().__init__()
        self.card, self.events, self.history_first = card, events, history_first

    def compose(self) -> ComposeResult:
        from workbench.review.eventview import summarize, who_shown

        detail = detail_text(self.card)
        history = Text()
        history.append(f"history: {len(self.events)} event(s)\n", style="bold")
        for e in self.events:
            history.append(output.shown(f"#{e['seq']} {e.get('ts', '')} {who_shown(e)} {e.get('type')} "
                                        f"{summarize(e.get('payload') or {})}") + "\n")
        parts = [Static(history, id="history"), Static(detail, id="detail")]
        with VerticalScroll():
            yield from (parts if self.history_first else parts[::-1])


# every key of the board, as the `?` overlay lists them (the footer shows the same keys, shorter)
SHORTCUTS = (("← →", "move between columns"), ("↑ ↓", "move between the cards of a column"),
             ("Enter", "the task's detail: every field, then its history"),
             ("h", "the task's history first (every event that names it)"),
             ("/", "search: words in the id, title, labels or assignee (empty: show all)"),
             ("f", "filter: label=X owner=Y status=Z"), ("c", "clear the search and the filters"),
             ("r", "read the board again now"), ("? F1", "these shortcuts"),
             ("Escape", "close the detail, the search, the filter or this overlay"), ("q", "quit"))


class ShortcutsScreen(ModalScreen[None]):
    """Every key of the board; any of escape, q, ? or F1 closes it."""

    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "close")]
    DEFAULT_CSS = """
    ShortcutsScreen { align: center middle; }
    ShortcutsScreen > Static { width: 76; height: auto; border: round $accent; background: $surface;
                               padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("Shortcuts\n", style="bold")
        for key, what in SHORTCUTS:
            text.append(f"{key:>8}  ", style="bold")
            text.append(what + "\n")
        yield Static(text, id="shortcuts")


class SearchScreen(ModalScreen[str | None]):
    """Words to look for in a card's id, title, labels and assignee (empty: show every card)."""

    BINDINGS = [Binding("escape", "dismiss_none", "cancel")]
    DEFAULT_CSS = "SearchScreen { align: center middle; } SearchScreen > Input { width: 70; }"

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        yield Input(value=self.current, placeholder="search: words in the id, title, labels", id="search")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


def found(card: dict[str, Any], words: list[str]) -> bool:
    """Whether every word is in the card's id, title, labels or assignee (case-insensitive)."""
    hay = " ".join([str(card.get("id", "")), str(card.get("title", "")), str(card.get("assignee") or ""),
                    *(str(x) for x in card.get("labels") or [])]).lower()
    return all(w in hay for w in words)


class FilterScreen(ModalScreen[str | None]):
    """`label=X owner=Y status=Z` (any of them; empty clears)."""

    BINDINGS = [Binding("escape", "dismiss_none", "cancel")]
    DEFAULT_CSS = "FilterScreen { align: center middle; } FilterScreen > Input { width: 70; }"

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        yield Input(value=self.current, placeholder="label=X owner=Y status=Z", id="filter")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class BoardApp(App[None]):
    TITLE = "wb board"
    ENABLE_COMMAND_PALETTE = False  # its ^p took the footer's room; every action has its own key
    BINDINGS = [
        Binding("left", "column(-1)", "", show=False),  # the columns' own keys (CardList) name them
        Binding("right", "column(1)", "", show=False),
        Binding("enter", "detail", "", show=False),
        Binding("h", "history", "history"),
        Binding("slash", "search", "search", key_display="/"),
        Binding("f", "filter", "filter"),
        Binding("c", "clear", "clear"),
        Binding("r", "refresh", "read"),
        Binding("question_mark,f1", "shortcuts", "keys", key_display="?"),
        Binding("q", "quit", "quit"),
    ]
    CSS = "#status-line { height: 1; background: $boost; } Horizontal { height: 1fr; }"

    def __init__(self, bench: Any, *, label: str | None = None, owner: str | None = None,
                 status: str | None = None, poll: float = POLL_SECONDS) -> None:
        super().__init__()
        self.bench = bench
        self.filters: dict[str, str | None] = {"label": label, "owner": owner, "status": status}
        self.search = ""
        self.poll = poll
        self.data: dict[str, Any] = {"columns": [], "total": 0}
        self.problem = ""
        self._stamp: Any = None
        self._rendering = asyncio.Lock()

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="status-line")
        with Horizontal():
            for status in STATUSES:
                yield Column(status)
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        await self.action_refresh()
        first = next((lv for lv in self.query(ListView) if lv.children), None)
        if first is not None:
            first.focus()
        self.set_interval(self.poll, self._poll)

    async def _poll(self) -> None:
        if not self._rendering.locked() and stamp(watched(self.bench.wb)) != self._stamp:
            await self.action_refresh()

    async def action_refresh(self) -> None:
        async with self._rendering:  # one render at a time: the poll's timer does not wait for the last one
            self._stamp = stamp(watched(self.bench.wb))
            try:  # mid-write or invalid: keep the last board and say why
                self.data = self.bench.board(**self.filters)
                self.problem = ""
            except (WorkbenchError, OSError, ValueError) as err:
                self.problem = str(err)
            try:
                await self._render_board()
            except NoMatches:  # the columns are composed once and never removed: gone, the app is closing
                pass

    async def _render_board(self) -> None:
        words = self.search.lower().split()
        shown = {c["status"]: [t for t in c["tasks"] if found(t, words)] for c in self.data["columns"]}
        for status in STATUSES:
            column = self.query_one(f"#col-{status}", Column)
            column.display = status in shown
            cards = shown.get(status, [])
            self.query_one(f"#head-{status}", Label).update(Text(f"{HEADINGS[status]} ({len(cards)})"))
            listing = self.query_one(f"#list-{status}", ListView)
            kept = listing.index
            await listing.clear()
            await listing.extend(Card(c) for c in cards)
            if cards:
                listing.index = min(kept or 0, len(cards) - 1)
        active = " ".join(f"{k}={v}" for k, v in self.filters.items() if v)
        total = sum(len(cards) for cards in shown.values()) if words else self.data.get("total", 0)
        line = (f"{total} task(s)" + (f" · search: {self.search}" if words else "")
                + (f" · filter: {active}" if active else "") + " · ? keys")
        if self.problem:
            line += f" · not refreshed: {self.problem}"
        self.query_one("#status-line", Static).update(_text(line))

    def selected(self) -> dict[str, Any] | None:
        focused = self.focused
        if isinstance(focused, ListView) and focused.highlighted_child is not None:
            return getattr(focused.highlighted_child, "card", None)
        return None

    def _open(self, history_first: bool) -> None:
        card = self.selected()
        if card is None:
            return
        try:  # the task as `wb task show` has it (acceptance, description, proof, dates) under the card's marks
            task = {**card, **self.bench.show_task(card["id"])}
        except (WorkbenchError, OSError, ValueError):
            task = card
        self.push_screen(DetailScreen(task, self.bench.task_history(card["id"]), history_first=history_first))

    def action_detail(self) -> None:
        self._open(False)

    def action_history(self) -> None:
        self._open(True)

    def on_list_view_selected(self, _event: ListView.Selected) -> None:
        self._open(False)

    def action_column(self, step: int) -> None:
        lists = [lv for lv in self.query(ListView) if lv.parent is not None and lv.parent.display]
        if not lists:
            return
        at = lists.index(self.focused) if self.focused in lists else -1
        # set now, not after the event queue (Widget.focus defers): a second arrow in the same terminal write
        # moves on from the column the first one reached
        self.screen.set_focus(lists[(at + step) % len(lists)])

    def action_shortcuts(self) -> None:
        self.push_screen(ShortcutsScreen())

    def action_search(self) -> None:
        self.push_screen(SearchScreen(self.search), self._searched)

    async def _searched(self, text: str | None) -> None:
        if text is None:
            return
        self.search = text.strip()
        await self._render_board()

    def action_filter(self) -> None:
        current = " ".join(f"{k}={v}" for k, v in self.filters.items() if v)
        self.push_screen(FilterScreen(current), self._filtered)

    async def _filtered(self, text: str | None) -> None:
        if text is None:
            return
        filters: dict[str, str | None] = {"label": None, "owner": None, "status": None}
        for word in text.split():
            key, _, value = word.partition("=")
            if key in filters and value:
                filters[key] = value
        if filters["status"] not in (None, *STATUSES):
            self.problem = f"status {filters['status']!r}: one of {', '.join(STATUSES)}"
            await self._render_board()
            return
        self.filters = filters
        await self.action_refresh()

    async def action_clear(self) -> None:
        self.filters = {"label": None, "owner": None, "status": None}
        self.search = ""
        await self.action_refresh()
