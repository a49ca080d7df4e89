"""issue 33: `wb diff` compares only the decision-log entries after those both sides share from their start;
the result is the one the whole logs give (the multiset match is unchanged by a common prefix), whatever the
bodies hold: repeated entries, a preamble, line endings splitlines treats as line breaks, edits anywhere."""

from __future__ import annotations

import random

from workbench.review import diff


def body(rng: random.Random, entries: list[str]) -> str:
    pre = rng.choice(["", "# Decision log\n\n", "prose\r\n"])
    return pre + "".join(entries)


def entry(rng: random.Random) -> str:
    ts = rng.choice(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"])
    text = rng.choice(["a", "b", "a\nb", "### not a heading?", "x\u2028### y", "c\r\nd"])
    return f"### {ts} · {rng.choice(['agent', 'human'])}\n{text}\n\n"


def test_the_decision_log_diff_is_the_whole_logs_diff(monkeypatch) -> None:
    rng = random.Random(33)
    for _ in range(150):
        old = [entry(rng) for _ in range(rng.randint(0, 8))]
        new = list(old)
        for _ in range(rng.randint(0, 3)):
            op = rng.choice(["append", "insert", "drop", "edit"])
            if op == "append" or not new:
                new.append(entry(rng))
            elif op == "insert":
                new.insert(rng.randrange(len(new)), entry(rng))
            elif op == "drop":
                new.pop(rng.randrange(len(new)))
            else:
                new[rng.randrange(len(new))] = entry(rng)
        a, b = body(rng, old), body(rng, new)
        state = "---\nschema_version: 1\n---\n"
        old_raw, new_raw = (state + a).encode(), (state + b).encode()
        got = diff.diff_state(old_raw, new_raw, False, [], ("old", "new"))["decision_log"]
        with monkeypatch.context() as m:
            m.setattr(diff, "shared_entries", lambda x, y, block=0: 0)
            whole = diff.diff_state(old_raw, new_raw, False, [], ("old", "new"))["decision_log"]
        assert got == whole, (a, b)
        assert diff.shared_entries(a, b, block=4) == diff.shared_entries(a, b)
