"""Issue 31 item 6: `wb diff` shows a reviewer what changed, not wb's bookkeeping, and never cuts a word."""

from __future__ import annotations

from .helpers import point

LONG_NOTE = ("The fixtures under tests/data are templates for the generated parser, and must never be "
             "edited by hand because the generator overwrites them on every run of make")


def test_setting_the_next_action_shows_its_text_and_no_bookkeeping(bench, repo, wb):
    bench.add_task("Write the parser")
    a = point(repo)
    bench.set_state({"next_action": "Start T-001: the parser first"})
    r = wb(repo, "diff", a)
    assert r.returncode == 0, r.stderr
    assert 'next_action: "Add the first task: wb task add TITLE" → "Start T-001: the parser first"' in r.stdout \
        or '→ "Start T-001: the parser first"' in r.stdout
    assert "next_action_set" not in r.stdout
    md = wb(repo, "diff", a, "--format", "markdown").stdout
    assert "next_action_set" not in md and "Start T-001: the parser first" in md
    everything = wb(repo, "diff", a, "--all").stdout
    assert "next_action_set.event" in everything  # still there for whoever asks for every field


def _cut_words(text: str) -> list[str]:
    """Every word just before an ellipsis in `text`."""
    return [chunk.split()[-1] for chunk in text.split("…")[:-1] if chunk.split()]


def test_a_long_note_is_cut_at_a_word_boundary_in_every_format(bench, repo, wb):
    a = point(repo)
    bench.note(LONG_NOTE)
    words = set(LONG_NOTE.replace(",", "").split())
    for fmt in ("text", "markdown"):
        r = wb(repo, "diff", a, "--format", fmt)
        assert r.returncode == 0, r.stderr
        [line] = [ln for ln in r.stdout.splitlines() if "The fixtures under" in ln]
        if LONG_NOTE in line:
            continue  # whole: nothing was cut
        assert "…" in line, line
        for word in _cut_words(line.split("The fixtures", 1)[1]):
            assert word.strip("`|,") in words, f"{fmt}: a word cut in half before the ellipsis: {word!r} in {line!r}"
