"""`wb note`: the decision log."""

from __future__ import annotations

from tests import stored
from tests.person import as_person
from tests.stored import FILES


def test_note_appends_to_the_decision_log(bench, repo, wb, git):
    r = wb(repo, "note", "Chose", "a hand-written parser.")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "noted (event 2)"
    r = wb(repo, "note", "-", input="Multi-line\n\nnote from stdin\n")
    assert r.returncode == 0, r.stderr
    person = as_person(repo, "note", "A person's", "note.")
    assert person.returncode == 0, person.output
    text = stored.state_text(repo)
    body = text.split("---\n", 2)[2]
    assert body.index("Chose a hand-written parser.") < body.index("Multi-line\n\nnote from stdin")
    assert "· agent" in body and "· human" in body and "A person's note." in body
    if FILES:
        assert git(repo, "log", "-2", "--format=%s").split("\n")[1] == "wb: note Multi-line note from stdin"


def test_empty_note_is_a_usage_error(bench, repo, wb, error_line):
    r = wb(repo, "note", "   ")
    assert r.returncode == 2
    assert "needs text" in error_line(r.stderr)
