"""Issue 31 item 8: `wb board --static` shows every card's priority, the default one included."""

from __future__ import annotations


def test_static_board_shows_the_priority_on_every_card(bench, repo, wb):
    bench.add_task("Default priority")
    bench.add_task("Urgent", priority=0)
    bench.add_task("Set to the default", priority=2)
    lines = [ln.strip() for ln in wb(repo, "board", "--static").stdout.splitlines() if ln.startswith("  T-")]
    assert len(lines) == 3
    shown = {ln.split()[0]: ln for ln in lines}
    assert "p2" in shown["T-001"].split("[")[1], shown
    assert "p0" in shown["T-002"].split("[")[1], shown
    assert "p2" in shown["T-003"].split("[")[1], shown
    assert shown["T-001"].replace("T-001", "").replace("Default priority", "") == \
        shown["T-003"].replace("T-003", "").replace("Set to the default", "")  # the same card either way
