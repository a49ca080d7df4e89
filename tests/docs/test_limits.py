"""One figure per limit (issue 29, item 6): each wait and retry limit is one named constant, and every figure the
docs state for it is that constant's. Before: docs/git.md said a held index.lock costs "up to 10 s" (it was
30–35 s), docs/sync.md said 12 sync attempts while `wb sync`'s exit-6 line said 20."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.git.packs import STALE_LOCK_S
from workbench.git.repo import INDEX_LOCK_WAIT_S
from workbench.ops.init import CONFIG_TEMPLATE
from workbench.ops.sync import ATTEMPTS
from workbench.store.config import CONFIG_DEFAULTS

ROOT = Path(__file__).resolve().parents[2]
FIGURE = r"(\d+(?:\.\d+)?)"

# (limit, its constant, the lines that state it, the figure in such a line)
LIMITS = [
    ("index.lock wait", INDEX_LOCK_WAIT_S, r"index\.lock", rf"(?:up to|at most|for over) {FIGURE} ?s\b"),
    ("wb sync attempts", ATTEMPTS, r"attempts", rf"\b(?:up to )?{FIGURE} attempts\b"),
    ("workbench lock timeout", CONFIG_DEFAULTS["lock_timeout"], r"lock_timeout", rf"lock_timeout: {FIGURE}\b"),
    ("stale packs.lock", STALE_LOCK_S, r"packs\.lock", rf"after {FIGURE} ?s\b"),
]


def _pages() -> dict[str, str]:
    pages = {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}
    pages["README.md"] = (ROOT / "README.md").read_text()
    return pages


def stated(line_pattern: str, figure_pattern: str, pages: dict[str, str]) -> list[tuple[str, float]]:
    """Every figure the pages state for one limit: (where, figure)."""
    found = []
    for name, text in pages.items():
        for number, line in enumerate(text.splitlines(), 1):
            if re.search(line_pattern, line):
                found += [(f"{name}:{number}", float(m)) for m in re.findall(figure_pattern, line)]
    return found


@pytest.mark.parametrize(("limit", "constant", "line_pattern", "figure_pattern"), LIMITS,
                         ids=[limit[0] for limit in LIMITS])
def test_the_docs_state_each_limits_one_figure(limit: str, constant: float, line_pattern: str,
                                              figure_pattern: str) -> None:
    found = stated(line_pattern, figure_pattern, _pages())
    assert found, f"no page states the {limit} ({constant:g})"
    wrong = [(where, figure) for where, figure in found if figure != float(constant)]
    assert not wrong, f"the {limit} is {constant:g} in the code; the docs say otherwise at {wrong}"


def test_the_config_wb_init_writes_states_the_default_lock_timeout() -> None:
    assert [float(f) for f in re.findall(rf"^lock_timeout: {FIGURE}", CONFIG_TEMPLATE, re.M)] == \
        [float(CONFIG_DEFAULTS["lock_timeout"])]


def test_the_checker_sees_a_wrong_figure() -> None:
    """The check itself can fail: a page stating 12 sync attempts is caught."""
    found = stated(r"attempts", LIMITS[1][3], {"docs/sync.md": "back to 2 (up to 12 attempts, then exit 6)"})
    assert found == [("docs/sync.md:1", 12.0)]
