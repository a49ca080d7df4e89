"""docs/harness.md carries the transition table generated from the code: it cannot drift."""

from __future__ import annotations

from pathlib import Path

from workbench.harness.machine import TRANSITIONS, render_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "harness.md"


def test_transition_table_in_docs_is_generated_from_the_code() -> None:
    text = DOC.read_text()
    block = text.split("<!-- transitions:begin -->\n", 1)[1].split("<!-- transitions:end -->", 1)[0]
    assert block == render_markdown(), "docs/harness.md is stale: paste machine.render_markdown() between the markers"
    assert block.count("\n") == len(TRANSITIONS) + 2
