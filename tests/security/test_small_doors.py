"""The human guard is bounded (issue 14.4), and two small doors (issue 14.5).

A state.md whose mtime lies in the future (clock skew, a restored backup, `touch -d`) made `wb note` say "wait
7204.7s more" and `wb run` sleep 90 s before failing, although human_guard_seconds was 5: a future mtime now
counts as "just now", and no wait is longer than the configured window. A whitespace-only task title is refused,
and `--kind review` without `--reviews` names the missing option, not the schema's "reviews: null is not of
type string"."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from tests import stored
from tests.conftest import about_files

from .helpers import PY, config_yaml, init_workbench, one_line, plan, wb, wb_ok

GUARD = 2


def _edited_in_the_future(repo: Path) -> None:
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("next_action: ", "# edited by hand\nnext_action: ", 1))
    future = time.time() + 7200
    os.utime(state, (future, future))


@about_files  # state.md edited by hand (its mtime in the future)
def test_a_future_mtime_makes_wb_note_wait_no_longer_than_the_window(repo: Path) -> None:
    init_workbench(repo, config_yaml(extra=f"human_guard_seconds: {GUARD}\n").replace("human_guard_seconds: 0\n", ""))
    _edited_in_the_future(repo)
    line = one_line(wb(repo, "note", "--actor", "agent", "too soon"), 6)
    left = float(re.search(r"wait ([0-9.]+)s more", line).group(1))  # type: ignore[union-attr]
    assert 0 < left <= GUARD, line
    time.sleep(GUARD + 0.2)
    wb_ok(repo, "note", "--actor", "agent", "after the window")
    wb_ok(repo, "replay", "--verify")


@about_files  # state.md edited by hand (its mtime in the future)
def test_a_future_mtime_makes_wb_run_wait_no_longer_than_the_window(repo: Path) -> None:
    tools = {"t": {"argv": [PY, "-c", "print('ok')"], "mode": "safe_readonly"}}
    init_workbench(repo, config_yaml(tools=tools, extra=f"human_guard_seconds: {GUARD}\n")
                   .replace("human_guard_seconds: 0\n", ""))
    _edited_in_the_future(repo)
    start = time.monotonic()
    wb_ok(repo, "run", "g", "--plan", plan(repo, [{"description": "d", "tool": "t"}]), env={"CI": "1"})
    assert time.monotonic() - start < GUARD + 10  # was 90 s of sleeping, then a failure
    assert "# edited by hand" in stored.state_text(repo)


def test_a_whitespace_only_title_is_refused_on_every_path(repo: Path) -> None:
    from workbench.api import Bench
    from workbench.errors import Refused

    init_workbench(repo)
    for title in ("   ", "\t", " \n "):
        line = one_line(wb(repo, "task", "add", title), 5)
        assert "title" in line, line
    wb_ok(repo, "task", "add", "real")
    assert "title" in one_line(wb(repo, "task", "set", "T-001", "title=  "), 5)
    bench = Bench.open(repo)
    for call in (lambda: bench.add_task("  "), lambda: bench.set_task("T-001", {"title": " \t"})):
        try:
            call()
        except Refused as err:
            assert "title" in str(err)
        else:
            raise AssertionError("a blank title was accepted")
    assert [t["title"] for t in stored.board(repo)["tasks"]] == ["real"]


def test_a_review_without_reviews_names_the_missing_option(repo: Path) -> None:
    init_workbench(repo)
    line = one_line(wb(repo, "task", "add", "check it", "--kind", "review"), 5)
    assert "--reviews" in line and "null is not of type" not in line, line
