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
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, ListItem, ListView, Static

from workbench.cli import output
from workbench.cli.board import HEADINGS
from workbench.errors import WorkbenchError
from workbench.ops.board import marks, stamp, watched
from workbench.ops.status import STATUSES

POLL_SECONDS = 0.5
FIELDS = ("id", "title", "status", "kind", "owner", "assignee", "priority", "labels", "parent", "depends_on",
          "waiting_on", "claim", "scope", "forced", "override", "blocked_reason")


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


class Column(VerticalScroll):
    DEFAULT_CSS = """
    Column { width: 1fr; border: round $panel; }
    Column > Label { text-style: bold; width: 100%; }
    Column ListView { height: auto; }
    """

    def __init__(self, status: str) -> None:
        super().__init__(id=f"col-{status}")
        self.status = status

    def compose(self) -> ComposeResult:
        yield Label(HEADINGS[self.status], id=f"head-{self.status}")
        yield ListView(id=f"list-{self.status}")


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

        detail = Text()
        for key in FIELDS:
            if key in self.card and self.card[key] not in (None, [], "", False):
                detail.append(f"{key:>14}  ", style="bold")
                detail.append(output.shown(self.card[key]) + "\n")
        history = Text()
        history.append(f"history: {len(self.events)} event(s)\n", style="bold")
        for e in self.events:
            history.append(output.shown(f"#{e['seq']} {e.get('ts', '')} {who_shown(e)} {e.get('type')} "
                                        f"{summarize(e.get('payload') or {})}") + "\n")
        parts = [Static(history, id="history"), Static(detail, id="detail")]
        with VerticalScroll():
            yield from (parts if self.history_first else parts[::-1])


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
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("enter", "detail", "detail"),
        Binding("h", "history", "history"),
        Binding("f", "filter", "filter"),
        Binding("c", "clear", "clear filters"),
        Binding("r", "refresh", "refresh"),
        Binding("left", "column(-1)", "", show=False),
        Binding("right", "column(1)", "", show=False),
    ]
    CSS = "#status-line { height: 1; background: $boost; } Horizontal { height: 1fr; }"

    def __init__(self, bench: Any, *, label: str | None = None, owner: str | None = None,
                 status: str | None = None, poll: float = POLL_SECONDS) -> None:
        super().__init__()
        self.bench = bench
        self.filters: dict[str, str | None] = {"label": label, "owner": owner, "status": status}
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
        yield Footer()

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
        shown = {c["status"]: c["tasks"] for c in self.data["columns"]}
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
        line = f"{self.data.get('total', 0)} task(s)" + (f" · filter: {active}" if active else "")
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
        if card is not None:
            self.push_screen(DetailScreen(card, self.bench.task_history(card["id"]), history_first=history_first))

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
        lists[(at + step) % len(lists)].focus()

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
        await self.action_refresh()
