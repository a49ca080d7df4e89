"""The textconv of a big log renders only the lines a version adds to the kept render (review/textconv_cache.py),
and its view is the same text as a render from scratch: for a version that extends the kept file, one that is
a beginning of it, one that forks from it, with damaged, blank and torn lines; and state.md's decision log laid
out in one pass is the same text as line by line."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from tests.conftest import files_only
from workbench.model.jsonl import encode
from workbench.review import textconv_cache
from workbench.review.textconv import _text_block, _text_lines, convert, render
from workbench.store.eventlog import Tail, chain


def _scratch(kind, raw):
    return "".join(line + "\n" for line in convert(kind, raw))


def _log(n, text="a decision, one per line"):
    events = [{"schema_version": 1, "id": f"e{i:06d}", "ts": "2026-12-02T00:00:00Z", "type": "note.add",
               "actor": "agent", "session": None, "payload": {"text": f"{text} {i} \u202e\x1b[8m"}}
              for i in range(n)]
    chain(events, Tail(0, None, 0, 0), batch=False)
    return b"".join(encode(e) + b"\n" for e in events)


BIG = _log(3000)
assert len(BIG) > textconv_cache.MIN_BYTES


@pytest.mark.parametrize("then", ["longer", "shorter", "forked", "damaged", "torn", "blank", "same"])
def test_a_cached_render_is_the_render_from_scratch(tmp_path, then):
    cache = tmp_path / "git" / "wb" / "textconv" / "events"
    first = BIG[: BIG.rindex(b"\n", 0, len(BIG) - 5000) + 1]
    assert render("events", first, cache) == _scratch("events", first)
    assert cache.exists()
    second = {"longer": BIG, "shorter": BIG[: BIG.index(b"\n", 300_000) + 1], "same": first,
              "forked": first[:200_000] + b"\n" + _log(2000, "another branch's decision"),
              "damaged": first[:250_000] + b"not json at all\n" + first[250_000:],
              "torn": first + b'{"schema_version":1,"seq":',
              "blank": first + b"\n\n" + BIG[len(first):]}[then]
    assert render("events", second, cache) == _scratch("events", second)
    assert render("events", second, cache) == _scratch("events", second)  # and again, from what it kept
    assert render("events", BIG, cache) == _scratch("events", BIG)


def test_a_broken_cache_file_is_a_render_from_scratch(tmp_path):
    cache = tmp_path / "events"
    for junk in (b"", b"wb-textconv-cache 1 5 10 10\nshort", b"\xff" * 100, b"wb-textconv-cache 1 -1 0 0\n"):
        cache.write_bytes(junk)
        assert render("events", BIG, cache) == _scratch("events", BIG)
    text = cache.read_bytes()
    cache.write_bytes(text[:-10])  # cut short: its lengths say so
    assert render("events", BIG, cache) == _scratch("events", BIG)


@files_only  # git's textconv driver reads .workbench/*'s files in git; a SQLite workbench has none
def test_git_log_p_keeps_the_render_under_the_git_directory(bench, repo, wb, git):
    """Wired as wb init registers it: `git log -p` of a big log keeps its render under .git/wb/textconv and
    shows the same lines as without it."""
    from pathlib import Path

    # a log that is not sealed (sealing turned far up, as an old workbench not yet migrated has it): a long
    # history through wb's generator (one commit), then two more commits
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text() + "log: {segment_events: 1000000, segment_bytes: 1000000000}\n")
    git(repo, "commit", "-qam", "no sealing")
    subprocess.run([sys.executable, "bench/_gen.py", str(repo), "note", "3000"], check=True, capture_output=True,
                   cwd=Path(__file__).resolve().parents[2])
    bench.note("after the history")
    bench.note("and one more")
    shown = git(repo, "log", "-p", "-2", "--", ".workbench/events.jsonl")
    assert (repo / ".git" / "wb" / "textconv" / "events").exists()
    added = [line for line in shown.splitlines() if line.startswith("+#")]
    assert [line.split()[-1] for line in added] == ["more", "history"]
    events = [json.loads(line) for line in (repo / ".workbench" / "events.jsonl").read_bytes().splitlines()]
    assert added[0].startswith(f"+#{events[-1]['seq']} ")


def test_the_decision_log_laid_out_in_one_pass_is_the_same_text():
    for n in range(7):
        for chars in itertools.product(["a", "\r", "\n", "\u2028"], repeat=n):
            text = "".join(chars)
            assert _text_block(text) == "".join(line + "\n" for line in _text_lines(text)), repr(text)
    state = (b"---\nschema_version: 1\nstatus: idle\n---\n\n# Decision log\r\n\r\n- one\r\r\n- two \x1b[2J\n"
             b"- three\r")
    assert render("state", state) == _scratch("state", state)
