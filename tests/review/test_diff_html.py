"""`wb diff --format html`: one self-contained page — no script, nothing fetched — whose every value is shown as
text (HTML, `<script>`, ANSI escapes and bidi controls), with the structure of a known diff."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from .helpers import heading, point

HOSTILE = "<script>alert(1)</script> \x1b[31mred\x1b[0m \u202eevil <img src=x onerror=alert(2)>"


class Page(HTMLParser):
    """The elements of a page (tag, attributes), its visible text, and each table row's cells."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]


def _known_diff(bench: Any, repo: Any) -> tuple[str, str]:
    bench.add_task("Parse the config", acceptance=["true"])
    a = point(repo)
    bench.add_task(HOSTILE, acceptance=["echo ok && rm -rf /tmp/nothing-here"])
    bench.start_task("T-001")
    bench.done_task("T-001")
    bench.note(f"Chose a parser. {HOSTILE}")
    return a, point(repo)


def test_a_known_diff_renders_as_one_safe_self_contained_page(bench, repo, wb, tmp_path):
    a, b = _known_diff(bench, repo)
    r = wb(repo, "diff", a, b, "--format", "html")
    assert r.returncode == 0, r.stderr
    page_text = r.stdout
    page = Page(page_text)

    # nothing that runs, nothing fetched
    assert page.tags("script") == [] and page.tags("img") == [] and page.tags("link") == []
    assert page.tags("iframe") == [] and page.tags("object") == []
    assert not any(k.startswith("on") for _tag, attrs in page.elements for k in attrs), "an event handler attribute"
    assert not re.search(r"https?://", page_text), "the page names a URL to fetch"
    assert not re.search(r"@import|url\(", page_text)
    [csp] = [m for m in page.tags("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in str(csp["content"])
    assert "\x1b" not in page_text and "\u202e" not in page_text  # controls shown as their escapes

    # the hostile title and note are visible as text, as the terminal shows them
    visible = "".join(page.text)
    shown = "<script>alert(1)</script> \\e[31mred\\e[0m \\u202eevil <img src=x onerror=alert(2)>"
    assert shown in visible
    assert visible.count(shown) >= 2  # the task's row and the decision-log entry

    # structure: the sections a reviewer reads, and the rows of the task table
    sections = [s.get("id") for s in page.tags("section")]
    assert sections == ["state", "decisions", "tasks", "events", "proof"], sections
    tasks = {(row[0], row[2]): row for row in page.rows if len(row) == 5 and row[0].startswith("T-")}
    assert tasks[("T-001", "status")][3:] == ["todo", "done"], tasks
    assert tasks[("T-002", "added")][1] == shown and tasks[("T-002", "added")][4] == "todo"
    by_type = {row[0]: row[1] for row in page.rows if len(row) == 2}
    assert by_type["task.add"] == "1" and by_type["task.done"] == "1" and by_type["note.add"] == "1"
    assert "echo ok && rm -rf /tmp/nothing-here" in visible  # what `wb task done` will run, in full
    assert page.tags("title") and f"wb diff {heading(a)} → {heading(b)}" in visible

    # -o FILE writes the same page; never into .workbench/
    out = tmp_path / "review.html"
    r = wb(repo, "diff", a, b, "--format", "html", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text(encoding="utf-8") == page_text
    bad = wb(repo, "diff", a, b, "--format", "html", "-o", str(repo / ".workbench" / "x.html"))
    assert bad.returncode == 2 and not (repo / ".workbench" / "x.html").exists()


def test_a_harness_session_is_listed_with_its_steps(bench, repo, wb):
    before = point(repo)
    (repo / "plan.yaml").write_text("steps:\n  - description: Read the <b>failing</b> test\n"
                                    "  - description: Decide on the fix\n")
    assert wb(repo, "run", "Fix the parser bug", "--plan", "plan.yaml").returncode == 0
    page = Page(wb(repo, "diff", before, point(repo), "--format", "html").stdout)
    assert len([attrs for attrs in page.tags("li") if attrs.get("class") == "session"]) == 1
    visible = "".join(page.text)
    assert '"Fix the parser bug": completed (goal_met)' in visible
    assert 'step 1 "Read the <b>failing</b> test": started, done' in visible
    assert page.tags("b") == []
